"""An agent-based model of a data-collection platform (the project's operationalisation of the paper).

The position paper (Santy et al., ICML 2025, arXiv 2502.07732) argues, without experiments, that
platforms built on external incentives crowd out contributors' intrinsic motivation, so that once a
cheap LLM shortcut exists the data stops being human. This module turns that argument into a model
whose every assumption is a parameter (config.yaml `human_data`); it is evidence about the model,
never about people.

Each of N contributors i has intrinsic motivation m_i in [0, 1], skill (accuracy of genuine work)
a_i, and an effort cost e_i. The payoffs of one round are

- genuine work:  u_G = pay + bonus * a_i + m_i * enjoyment - e_i * (1 + pressure)
- the shortcut:  u_S = (1 - audit) * (pay + bonus * q_llm) - audit * fine - llm_cost
- leaving:       u_L = outside_option (absorbing: a contributor who leaves does not come back)

Every round an active contributor first decides whether to stay: it leaves with probability
sigmoid((u_L - V) / exit_temperature), V = temperature * log(exp(u_G / temperature) + exp(u_S /
temperature)) being the value of staying (the logit inclusive value); a staying contributor then
works genuinely or takes the shortcut by a logit choice with temperature `temperature`, and submits
about `items` labels (Poisson) (genuine labels are correct with probability a_i, shortcut
labels with probability q_llm). Motivation then moves by motivation-crowding dynamics (Frey & Jegen
2001; self-determination theory, Deci & Ryan):

    m_i <- m_i - kappa * control * m_i + rho * autonomy * (1 - m_i)

`control` is how controlling the design's extrinsic rewards are (task-level piece rates, speed
pressure), `autonomy` how much it supports autonomy and gives meaningful feedback. A design is the
tuple (pay, bonus, audit, fine, pressure, items, control, autonomy).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from methods.common.config import check_keys


@dataclass(frozen=True)
class Population:
    """Contributors: motivation ~ Beta(a, b); skill ~ U[skill_low, skill_high]; effort cost ~ U[cost_low, cost_high]."""

    n: int
    motivation_a: float
    motivation_b: float
    skill_low: float
    skill_high: float
    cost_low: float
    cost_high: float

    @classmethod
    def from_dict(cls, d: dict) -> "Population":
        check_keys(cls, d)
        return cls(**d)


@dataclass(frozen=True)
class World:
    """What every design shares: the shortcut, the choice noise, the crowding dynamics, the outside option."""

    rounds: int
    q_llm: float  # accuracy of a shortcut label
    llm_cost: float  # cost of taking the shortcut (near zero)
    enjoyment: float  # value of genuine work to a fully motivated contributor
    outside_option: float
    temperature: float  # noise of the genuine-vs-shortcut choice
    exit_temperature: float  # noise of the stay-or-leave decision
    kappa: float  # crowding-out rate of controlling rewards
    rho: float  # crowding-in rate of autonomy support and feedback

    @classmethod
    def from_dict(cls, d: dict) -> "World":
        check_keys(cls, d)
        return cls(**d)


@dataclass(frozen=True)
class Design:
    pay: float
    bonus: float
    audit: float
    fine: float
    pressure: float
    items: float
    control: float
    autonomy: float

    @classmethod
    def from_dict(cls, d: dict) -> "Design":
        check_keys(cls, d)
        for f in ("audit", "control", "autonomy"):
            if not 0.0 <= d[f] <= 1.0:
                raise ValueError(f"design value {f}={d[f]} must lie in [0, 1]")
        return cls(**d)


def utilities(design: Design, world: World, motivation, skill, cost) -> tuple[np.ndarray, np.ndarray]:
    """(u_G, u_S) of every contributor (module docstring); u_S is the same for all."""
    genuine = design.pay + design.bonus * skill + motivation * world.enjoyment - cost * (1.0 + design.pressure)
    shortcut = (
        (1.0 - design.audit) * (design.pay + design.bonus * world.q_llm) - design.audit * design.fine - world.llm_cost
    )
    return genuine, np.full_like(genuine, shortcut)


def choice_probabilities(u_genuine: np.ndarray, u_shortcut: np.ndarray, world: World) -> tuple[np.ndarray, np.ndarray]:
    """(P(leave), P(genuine | stay)) by the logit choices of the module docstring."""
    t = world.temperature
    top = np.maximum(u_genuine, u_shortcut)
    stay_value = top + t * np.log(np.exp((u_genuine - top) / t) + np.exp((u_shortcut - top) / t))
    p_leave = 1.0 / (1.0 + np.exp(-(world.outside_option - stay_value) / world.exit_temperature))
    p_genuine = 1.0 / (1.0 + np.exp(-(u_genuine - u_shortcut) / t))
    return p_leave, p_genuine


def update_motivation(m: np.ndarray, design: Design, world: World) -> np.ndarray:
    """One round of crowding-out (controlling rewards) and crowding-in (autonomy, feedback); stays in [0, 1]."""
    m = m - world.kappa * design.control * m + world.rho * design.autonomy * (1.0 - m)
    return np.clip(m, 0.0, 1.0)


def simulate(design: Design, world: World, pop: Population, seed: int) -> dict[str, np.ndarray]:
    """Per-round curves of one design and seed.

    Returns arrays of length `rounds`: human_share (genuine / all labels submitted that round; NaN
    when nobody submits), accuracy (fraction of correct labels), retention (active / N), quantity
    (labels per contributor of the initial population), correct_human (correct genuine labels per
    contributor of the initial population), motivation (mean over active contributors).
    """
    rng = np.random.default_rng(seed)
    m = rng.beta(pop.motivation_a, pop.motivation_b, pop.n)
    skill = rng.uniform(pop.skill_low, pop.skill_high, pop.n)
    cost = rng.uniform(pop.cost_low, pop.cost_high, pop.n)
    active = np.ones(pop.n, dtype=bool)
    out = {
        k: np.full(world.rounds, np.nan)
        for k in ("human_share", "accuracy", "retention", "quantity", "correct_human", "motivation")
    }
    for t in range(world.rounds):
        p_leave, p_genuine = choice_probabilities(*utilities(design, world, m, skill, cost), world)
        active &= rng.random(pop.n) >= p_leave
        genuine = active & (rng.random(pop.n) < p_genuine)
        shortcut = active & ~genuine
        k = rng.poisson(design.items, pop.n) * active  # labels submitted this round
        correct_g = rng.binomial(k, skill) * genuine
        correct_s = rng.binomial(k, world.q_llm) * shortcut
        submitted = k.sum()
        out["retention"][t] = active.mean()
        out["quantity"][t] = submitted / pop.n
        out["correct_human"][t] = correct_g.sum() / pop.n
        if submitted > 0:
            out["human_share"][t] = (k * genuine).sum() / submitted
            out["accuracy"][t] = (correct_g.sum() + correct_s.sum()) / submitted
        if active.any():
            out["motivation"][t] = m[active].mean()
        m = update_motivation(m, design, world)
    return out


def design_fields() -> list[str]:
    return [f.name for f in fields(Design)]
