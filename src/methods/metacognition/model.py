"""A learner that chooses its own practice: fixed extrinsic loops against intrinsic metacognition.

The project's operationalisation of Liu & van der Schaar (ICML 2025 position track, arXiv
2506.05109), labelled illustrative: the paper has no experiments. Its three components map to

- metacognitive knowledge: a self-model, per (task family, strategy), of the learning progress
  that practice yields (an exponential moving average of observed score gains), and per family of the
  agent's own competence (the latest observed score);
- metacognitive planning: choosing what to practise and how, from the self-model (the (family,
  strategy) pair with the highest expected progress, epsilon-greedy);
- metacognitive evaluation: reflecting on whether practice delivered the progress the plan expected
  (moving averages, over about 1/monitor_rate steps, of the predicted and the realised score gain of
  the chosen practice) and adapting the learning process when it fell short: the relative shortfall
  raises the exploration rate and the self-model's step size, which then decay back.

The environment: K task families, one of them an unlearnable distractor (practice changes nothing;
scores are noise), one appearing only at `new_family_at`; S strategies whose effectiveness differs by
family, with the best strategy of every family changing at `switch_at`. Practising family k with
strategy s raises competence c_k by rate_k * eff[k, s] * (1 - c_k); the agent then observes a noisy
score c_k + N(0, obs_noise^2) of that family. Every array carries a leading axis over seeds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from methods.common.config import check_keys

AGENTS = ("round_robin", "weakest", "metacognitive", "no_knowledge", "no_planning", "no_evaluation", "random")
# "random": random play, a uniformly random available family and strategy every step, no self-model: the
# trivial alternative a reviewer tries first (same steps, same worlds, nothing to tune)


@dataclass(frozen=True)
class Environment:
    steps: int
    n_families: int  # learnable families, the new one included (the distractor comes on top)
    n_strategies: int
    rate_low: float  # learnability of family k ~ U[rate_low, rate_high]
    rate_high: float
    weak_effect: float  # effectiveness of a strategy that is not the family's best (the best has 1)
    obs_noise: float  # sd of an observed score
    distractor_noise: float  # sd of the distractor's scores (it cannot be learnt)
    distractor: bool
    switch_at: int | None  # step at which every family's best strategy changes (None: never)
    new_family_at: int | None  # step at which the last learnable family appears (None: from the start)

    @classmethod
    def from_dict(cls, d: dict) -> "Environment":
        check_keys(cls, d)
        env = cls(**d)
        for key in ("switch_at", "new_family_at"):
            v = getattr(env, key)
            if v is not None and not 0 < v < env.steps:
                raise ValueError(
                    f"environment {key}={v} must lie strictly between 0 and steps={env.steps} (or be null)"
                )
        return env

    @property
    def n_total(self) -> int:
        return self.n_families + int(self.distractor)


@dataclass(frozen=True)
class Agent:
    epsilon: float  # base exploration rate
    step_size: float  # base step size of the self-model's moving averages
    monitor_rate: float  # rate of the moving averages of predicted and realised progress (evaluation)
    surprise_gain: float  # how much a shortfall raises exploration and step size (evaluation)
    decay: float  # how fast raised exploration and step size decay back (per step)
    optimism: float  # initial expected progress of untried pairs (drives first exploration)

    @classmethod
    def from_dict(cls, d: dict) -> "Agent":
        check_keys(cls, d)
        return cls(**d)


def draw_world(env: Environment, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rate (n, K_total), best strategy before the switch (n, K_total), after it (n, K_total)).

    The distractor, if any, is the last family and has rate 0."""
    rate = rng.uniform(env.rate_low, env.rate_high, (n, env.n_total))
    if env.distractor:
        rate[:, -1] = 0.0
    best_before = rng.integers(0, env.n_strategies, (n, env.n_total))
    shift = rng.integers(1, env.n_strategies, (n, env.n_total)) if env.n_strategies > 1 else 0
    best_after = (best_before + shift) % env.n_strategies  # a different best strategy for every family
    return rate, best_before, best_after


def available(env: Environment, t: int) -> np.ndarray:
    """Mask (K_total,) of the families that can be practised at step t."""
    mask = np.ones(env.n_total, dtype=bool)
    if env.new_family_at is not None and t < env.new_family_at:
        mask[env.n_families - 1] = False
    return mask


def learnable_mask(env: Environment) -> np.ndarray:
    mask = np.ones(env.n_total, dtype=bool)
    if env.distractor:
        mask[-1] = False
    return mask


def run(agent_kind: str, env: Environment, agent: Agent, seeds: list[int], fixed_strategy: int = 0) -> dict:
    """Simulate one agent on one environment for every seed (vectorised over seeds).

    Returns per-step curves (n_seeds, steps): mean competence over the available learnable families
    (`competence`), whether the distractor was practised (`on_distractor`); and the final
    self-assessment error of the competence model (`calibration`, n_seeds) where the agent keeps one.
    The world (rates, strategies) depends on the seed only, so every agent meets the same worlds.
    """
    if agent_kind not in AGENTS:
        raise ValueError(f"agent {agent_kind!r}: known agents {AGENTS}")
    n, K, S, T = len(seeds), env.n_total, env.n_strategies, env.steps
    worlds = [draw_world(env, np.random.default_rng([s, 0]), 1) for s in seeds]
    rate, best_before, best_after = (np.concatenate(x) for x in zip(*worlds))
    rngs = [np.random.default_rng([s, 1]) for s in seeds]  # the learner's own noise and choices
    rows = np.arange(n)
    c = np.zeros((n, K))
    seen = np.zeros((n, K))  # latest observed score per family (knowledge of competence)
    lp = np.full((n, K, S), agent.optimism)  # expected progress per (family, strategy)
    eps = np.full(n, agent.epsilon)
    step = np.full(n, agent.step_size)
    expected, realised = np.zeros(n), np.zeros(n)  # monitored progress (evaluation)
    learn = learnable_mask(env)
    curves = {"competence": np.zeros((n, T)), "on_distractor": np.zeros((n, T))}
    for t in range(T):
        avail = available(env, t)
        best = best_before if env.switch_at is None or t < env.switch_at else best_after
        fam, strat = _choose(agent_kind, t, avail, seen, lp, eps, rngs, fixed_strategy, S)
        eff = np.where(strat == best[rows, fam], 1.0, env.weak_effect)
        before = c[rows, fam]
        c[rows, fam] = before + rate[rows, fam] * eff * (1.0 - before)
        noise_sd = np.where(env.distractor & (fam == K - 1), env.distractor_noise, env.obs_noise)
        score = c[rows, fam] + noise_sd * np.array([r.standard_normal() for r in rngs])
        gain = score - seen[rows, fam]
        if agent_kind not in ("round_robin", "weakest", "random"):
            key_fam = np.zeros_like(fam) if agent_kind == "no_knowledge" else fam  # no per-family self-model
            predicted = lp[rows, key_fam, strat]
            lp[rows, key_fam, strat] = predicted + step * (gain - predicted)
            if agent_kind != "no_evaluation":
                expected += agent.monitor_rate * (predicted - expected)
                realised += agent.monitor_rate * (gain - realised)
                shortfall = np.clip((expected - realised) / (np.abs(expected) + env.obs_noise), 0.0, None)
                eps = np.minimum(1.0, eps + agent.surprise_gain * shortfall * agent.epsilon)
                step = np.minimum(1.0, step + agent.surprise_gain * shortfall * agent.step_size)
                eps = agent.epsilon + (eps - agent.epsilon) * (1.0 - agent.decay)
                step = agent.step_size + (step - agent.step_size) * (1.0 - agent.decay)
        seen[rows, fam] = score
        use = avail & learn
        curves["competence"][:, t] = c[:, use].mean(axis=1)
        curves["on_distractor"][:, t] = (fam == K - 1) if env.distractor else 0.0
    calib = np.abs(seen[:, learn] - c[:, learn]).mean(axis=1)
    return {**curves, "calibration": calib}


def _choose(kind, t, avail, seen, lp, eps, rngs, fixed_strategy, S):
    """(family, strategy) per seed for one step."""
    n, K = seen.shape
    fams = np.flatnonzero(avail)
    if kind == "round_robin":
        return np.full(n, fams[t % len(fams)]), np.full(n, fixed_strategy)
    if kind == "weakest":
        masked = np.where(avail, seen, np.inf)
        return masked.argmin(axis=1), np.full(n, fixed_strategy)
    fam, strat = np.empty(n, dtype=int), np.empty(n, dtype=int)
    if kind == "random":
        for i, r in enumerate(rngs):
            fam[i], strat[i] = r.choice(fams), r.integers(S)
        return fam, strat
    for i, r in enumerate(rngs):
        if kind == "no_knowledge":  # one progress estimate per strategy, pooled over families
            fam[i] = fams[t % len(fams)] if r.random() >= eps[i] else r.choice(fams)
            strat[i] = int(np.argmax(lp[i, 0])) if r.random() >= eps[i] else r.integers(S)
            continue
        if kind == "no_planning":  # the curriculum is extrinsic (round robin); only "how" is chosen
            fam[i] = fams[t % len(fams)]
            strat[i] = int(np.argmax(lp[i, fam[i]])) if r.random() >= eps[i] else r.integers(S)
            continue
        if r.random() < eps[i]:
            fam[i], strat[i] = r.choice(fams), r.integers(S)
        else:
            flat = np.where(avail[:, None], lp[i], -np.inf).ravel()
            fam[i], strat[i] = divmod(int(np.argmax(flat)), S)
    return fam, strat
