"""The tabular experiment: a log-linear policy over prompts x responses trained on synthetic
preference pairs with each loss (our set-up; the paper's experiments are on Qwen-0.5B).

pi_theta(y | x) = softmax_y(phi(x, y) . theta_x): a table of logits over P prompts x K responses
whose rows share d < K parameters, so pushing one response down moves the others (with d = K each
row is a free table). Ground truth: a hidden reward r(x, y) = phi(x, y) . theta*_x; training pairs
are labelled by Bradley-Terry draws from r; held-out pairs are the remaining response pairs,
ordered by r. The reference model is the initial policy. Response lengths are drawn at random and
enter only the length-normalised losses (ORPO, SimPO).

`tabular_experiment` is step dpa_logic_tabular (one policy parametrisation, one seed, every loss).
"""

from __future__ import annotations

import numpy as np
import torch

from methods.common.io import log, set_seed, write_json

from .losses import LOSSES, both_false_excluded, check_losses, compiled_loss


def make_task(
    seed: int,
    n_prompts: int,
    n_responses: int,
    feature_dim: int,
    pairs_per_prompt: int,
    reward_scale: float,
    init_scale: float,
    max_length: int,
) -> dict:
    """Features, hidden reward, initial parameters, training pairs (BT labels), held-out pairs."""
    rng = np.random.default_rng(seed)
    phi = rng.normal(size=(n_prompts, n_responses, feature_dim)) / np.sqrt(feature_dim)
    theta_star = rng.normal(size=(n_prompts, feature_dim)) * reward_scale
    reward = np.einsum("pkd,pd->pk", phi, theta_star)
    theta0 = rng.normal(size=(n_prompts, feature_dim)) * init_scale
    lengths = rng.integers(1, max_length + 1, size=(n_prompts, n_responses))
    all_pairs = [(a, b) for a in range(n_responses) for b in range(a + 1, n_responses)]
    if pairs_per_prompt >= len(all_pairs):
        raise ValueError(
            f"tabular.pairs_per_prompt={pairs_per_prompt} leaves no held-out pair "
            f"(K={n_responses} responses give {len(all_pairs)} pairs); lower it"
        )
    train, test = [], []
    for x in range(n_prompts):
        order = rng.permutation(len(all_pairs))
        for j, idx in enumerate(order):
            a, b = all_pairs[idx]
            if j < pairs_per_prompt:
                p_a = 1.0 / (1.0 + np.exp(-(reward[x, a] - reward[x, b])))
                w, l = (a, b) if rng.uniform() < p_a else (b, a)
                train.append((x, w, l))
            else:
                w, l = (a, b) if reward[x, a] >= reward[x, b] else (b, a)
                test.append((x, w, l))
    return {
        "phi": phi,
        "theta0": theta0,
        "reward": reward,
        "lengths": lengths,
        "train": np.array(train),
        "test": np.array(test),
    }


def log_policy(phi: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """(P, K) log pi(y | x)."""
    return torch.log_softmax(torch.einsum("pkd,pd->pk", phi, theta), dim=-1)


def batch_of(logp: torch.Tensor, ref: torch.Tensor, lengths: torch.Tensor, pairs: torch.Tensor) -> dict:
    x, w, l = pairs[:, 0], pairs[:, 1], pairs[:, 2]
    return {
        "logp_w": logp[x, w],
        "logp_l": logp[x, l],
        "ref_w": ref[x, w],
        "ref_l": ref[x, l],
        "len_w": lengths[x, w],
        "len_l": lengths[x, l],
    }


def train_policy(task: dict, loss: str, hparams: dict, steps: int, lr: float, log_every: int) -> dict:
    """Full-batch Adam on one loss; returns the curves and the final metrics."""
    if LOSSES[loss].family == "no_structure":
        raise ValueError(f"tabular.losses: {loss!r} has no preference structure; train only compiled losses")
    dtype = torch.float64
    phi = torch.as_tensor(task["phi"], dtype=dtype)
    lengths = torch.as_tensor(task["lengths"], dtype=dtype)
    train = torch.as_tensor(task["train"])
    test = torch.as_tensor(task["test"])
    theta = torch.nn.Parameter(torch.as_tensor(task["theta0"], dtype=dtype).clone())
    with torch.no_grad():
        ref = log_policy(phi, theta)
    opt = torch.optim.Adam([theta], lr=lr)
    curve = {"step": [], "loss": [], "logp_w": [], "logp_l": [], "mass_pair": []}

    def record(step, value, logp):
        b = batch_of(logp, ref, lengths, train)
        curve["step"].append(step)
        curve["loss"].append(float(value))
        curve["logp_w"].append(float(b["logp_w"].mean()))
        curve["logp_l"].append(float(b["logp_l"].mean()))
        curve["mass_pair"].append(float((b["logp_w"].exp() + b["logp_l"].exp()).mean()))

    for step in range(steps + 1):
        logp = log_policy(phi, theta)
        value = compiled_loss(loss, batch_of(logp, ref, lengths, train), hparams).mean()
        if step % log_every == 0 or step == steps:
            record(step, value.detach(), logp.detach())
        if step == steps:
            break
        opt.zero_grad()
        value.backward()
        opt.step()
    with torch.no_grad():
        logp = log_policy(phi, theta)
        bt = batch_of(logp, ref, lengths, test)
        acc = float((bt["logp_w"] > bt["logp_l"]).double().mean())
        acc_ref = float((bt["ref_w"] > bt["ref_l"]).double().mean())
    return {
        "curve": curve,
        "test_accuracy": acc,
        "ref_test_accuracy": acc_ref,
        "delta_logp_w": curve["logp_w"][-1] - curve["logp_w"][0],
        "delta_logp_l": curve["logp_l"][-1] - curve["logp_l"][0],
        "final_mass_pair": curve["mass_pair"][-1],
    }


def tabular_experiment(
    seed: int,
    policy: str,
    task: dict,
    losses: list[str],
    hparams: dict,
    steps: int,
    lr: float,
    log_every: int,
    out_json: str,
) -> None:
    """One seed of the tabular experiment: every loss from the same initial policy and data."""
    check_losses(losses, "dpa_logic.tabular.losses", hparams)
    set_seed(seed)
    t = make_task(seed, **task)
    out = {"seed": seed, "policy": policy, "losses": {}}
    for name in losses:
        r = train_policy(t, name, hparams.get(name, {}), steps, lr, log_every)
        r["excludes_both_false"] = both_false_excluded(name)
        r["family"] = LOSSES[name].family
        out["losses"][name] = r
        out["ref_test_accuracy"] = r["ref_test_accuracy"]
        log(f"seed {seed} {policy} {name}: dlogp_w {r['delta_logp_w']:+.3f} acc {r['test_accuracy']:.3f}")
    out["random_test_accuracy"] = random_pair_accuracy(len(t["test"]), seed)
    write_json(out_json, out)


def random_pair_accuracy(n_pairs: int, seed: int) -> float:
    """The trivial null of the accuracy claims: a uniformly random preference predictor (a fair coin per held-out
    pair), drawn from its own generator so that no other number of the seed moves; expected accuracy 0.5."""
    rng = np.random.default_rng([seed, 7919])
    return float((rng.uniform(size=n_pairs) < 0.5).mean())
