"""The paper's experiments at configurable scale (Section 5): closed-form bridges (Brownian, OU) and
the cell-differentiation model (normal, rare and multimodal events), and the two DAG steps that run
them (`linear_job`, `cell_job`). The seeds of one job run as one ensemble (member s: network init and
noise from seed s, independent of the other members), so three seeds cost about one on a CPU; at
paper scale each job runs one seed (the `{seeds}` wildcard) on the job's device.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

from methods.common.io import log, save_arrays, write_json
from methods.common.timing import median_time

from .baselines import (
    brute_force,
    effective_sample_size,
    importance_weights,
    log_mean_exp,
    pcn_guided_bridge,
    sample_score_bridge,
    synchronize,
    train_score_bridge,
)
from .bridges import (
    BridgeProblem,
    EnsembleMLP,
    TrainConfig,
    evaluate_loss,
    increments_per_seed,
    sample_bridge,
    simulate_bridge,
    simulate_forward,
    train_neural_bridge,
)
from .metrics import marginal_w1, weighted_mean_sd
from .sde import (
    LinearAuxiliary,
    brownian,
    cell_model,
    driftless_auxiliary,
    linear_bridge_marginal,
    linear_log_density,
    linear_score,
    ornstein_uhlenbeck,
)

# independent random streams per seed and purpose
STREAMS = {
    "train": 1,
    "eval": 2,
    "guided": 3,
    "pcn": 4,
    "sm_train": 5,
    "sm_sample": 6,
    "brute": 7,
    "optimal": 8,
    "timing": 9,
    "forward": 10,
}
N_FIGURE_PATHS = 20


def generators(seeds: list[int], stream: str) -> list[torch.Generator]:
    return [torch.Generator().manual_seed(1000 * int(s) + STREAMS[stream]) for s in seeds]


def train_config(train: dict) -> TrainConfig:
    return TrainConfig(
        n_iters=train["n_iters"],
        batch=train["batch"],
        lr=train["lr"],
        clip_norm=train["clip_norm"],
        update_ema=train["update_ema"],
        best_window=train["best_window"],
    )


def _t(x) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64).reshape(-1)


def mean_sd_curves(paths: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Marginal mean and sd over time of paths (..., n, N+1, d)."""
    return paths.double().mean(-3).numpy(), paths.double().std(-3).numpy()


# ---- Brownian and OU bridges against the closed form --------------------------------------------


def linear_setup(process: str, spec: dict, eps: float, device: torch.device = torch.device("cpu")):
    """(BridgeProblem, (b, c, s) of dX = (b X + c) dt + s dW) with the driftless auxiliary BM."""
    if process == "brownian":
        diff, coef = brownian(spec["gamma"], spec["sigma"]), (0.0, spec["gamma"], spec["sigma"])
    elif process == "ou":
        diff = ornstein_uhlenbeck(spec["gamma"], spec["mu"], spec["sigma"])
        coef = (-spec["gamma"], spec["gamma"] * spec["mu"], spec["sigma"])
    else:
        raise ValueError(f"unknown linear process {process!r}; expected brownian or ou")
    problem = BridgeProblem(
        diff,
        driftless_auxiliary(diff.sigma),
        _t(spec["x0"]),
        _t(spec["v"]),
        spec["T"],
        spec["n_steps"],
        eps,
        device=device,
    )
    return problem, coef


def optimal_theta(problem: BridgeProblem, coef: tuple[float, float, float]) -> Callable:
    """theta* = sigma (grad log p - grad log p~): the exact bridge's correction of the guided drift."""
    b, c, s = coef
    v, T, eps = float(problem.v[0]), problem.T, problem.eps

    def theta(t, x):
        tau = T - t
        return s * (linear_score(b, c, s, tau, x, v, eps) - linear_score(0.0, 0.0, s, tau, x, v, eps))

    return theta


def linear_experiment(
    process: str,
    spec: dict,
    eps: float,
    seeds: list[int],
    hidden: list[int],
    train: dict,
    n_eval: int,
    eval_times: list[float],
    log: Callable[[str], None],
    device: torch.device = torch.device("cpu"),
):
    """Neural bridge, guided proposal and the exact theta* against the closed-form bridge.

    Returns (metrics dict of per-seed lists, arrays for the figure; per-seed arrays lead with the seed axis)."""
    problem, coef = linear_setup(process, spec, eps, device)
    b, c, s = coef
    x0, v, T = float(problem.x0[0]), float(problem.v[0]), problem.T
    log_p = linear_log_density(b, c, s, T, x0, v, eps)
    bound = problem.log_ptilde() - log_p  # min of the loss: log p~ - log p
    log(f"{process}: log p~ = {problem.log_ptilde():.4f}, log p = {log_p:.4f}, bound = {bound:.4f}")

    net = EnsembleMLP(seeds, 1, hidden, activation=spec["activation"]).to(device)
    curve = train_neural_bridge(problem, net, train_config(train), generators(seeds, "train"), log)
    theta_star = optimal_theta(problem, coef)
    methods = {"neural": net, "guided": None, "optimal": theta_star}
    stream = {"neural": "eval", "guided": "guided", "optimal": "optimal"}

    cf = np.array([linear_bridge_marginal(b, c, s, x0, v, T, float(t), eps) for t in problem.ts.tolist()])
    metrics = {"bound": bound, "log_ptilde": problem.log_ptilde(), "log_p": log_p}
    arrays = {"ts": problem.ts.numpy(), "cf_mean": cf[:, 0], "cf_var": cf[:, 1], "train_loss": curve.T}
    ks = [int(round(t / T * problem.n_steps)) for t in eval_times]
    for name, theta in methods.items():
        loss, se = evaluate_loss(problem, theta, n_eval, generators(seeds, stream[name]))
        paths, ll = sample_bridge(problem, theta, n_eval, generators(seeds, stream[name]))
        x = paths[..., 0].double()  # (S, n, N+1)
        mean, var = x.mean(1).numpy(), x.var(1).numpy()
        mean_err = np.abs(mean[:, ks] - cf[ks, 0]) / np.sqrt(cf[ks, 1])
        var_err = np.abs(var[:, ks] / cf[ks, 1] - 1.0)
        metrics.update(
            {
                f"loss_{name}": loss.tolist(),
                f"loss_se_{name}": se.tolist(),
                f"kl_{name}": (loss - bound).tolist(),  # estimated KL(Q || P*) = loss - (log p~ - log p)
                f"mean_err_{name}": mean_err.max(1).tolist(),
                f"var_err_{name}": var_err.max(1).tolist(),
            }
        )
        arrays.update({f"{name}_mean": mean, f"{name}_var": var, f"{name}_paths": x[:, :N_FIGURE_PATHS].numpy()})
        if name == "guided":
            metrics["ess_guided"] = effective_sample_size(ll).tolist()
            metrics["log_p_minus_log_ptilde_is"] = log_mean_exp(ll).tolist()
        log(
            f"{process} {name}: loss {np.round(loss, 4)} ± {np.round(se, 4)}, max |mean err|/sd "
            f"{np.round(mean_err.max(1), 3)}, max |var ratio - 1| {np.round(var_err.max(1), 3)}"
        )
    # trivial null: the unconditioned process by Euler-Maruyama on the same grid, as many paths (its own stream)
    x = simulate_forward(problem, increments_per_seed(generators(seeds, "forward"), n_eval, problem))[..., 0]
    x = x.double().cpu()
    mean, var = x.mean(1).numpy(), x.var(1).numpy()
    metrics["mean_err_forward"] = (np.abs(mean[:, ks] - cf[ks, 0]) / np.sqrt(cf[ks, 1])).max(1).tolist()
    metrics["var_err_forward"] = np.abs(var[:, ks] / cf[ks, 1] - 1.0).max(1).tolist()
    return metrics, arrays


# ---- the cell-differentiation model -------------------------------------------------------------


def cell_setup(cell: dict, event: dict, device: torch.device = torch.device("cpu")) -> BridgeProblem:
    """Cell model with the official auxiliary B = -I, beta = aux_beta * 1, a~ = a (L = I)."""
    diff = cell_model(cell["alpha"], cell["sigma"])
    aux = LinearAuxiliary(
        -torch.eye(2, dtype=torch.float64), cell["aux_beta"] * torch.ones(2, dtype=torch.float64), diff.sigma
    )
    n_steps = int(round(event["T"] / cell["dt"]))
    return BridgeProblem(diff, aux, _t(event["x0"]), _t(event["v"]), event["T"], n_steps, cell["eps"], device=device)


def mode_fraction(paths: torch.Tensor, k: int) -> torch.Tensor:
    """Fraction of paths with X^1 > X^2 at grid index k (the two branches of the multimodal event)."""
    return (paths[..., k, 0] > paths[..., k, 1]).double().mean(-1)


def cell_experiment(
    event_name: str,
    cell: dict,
    event: dict,
    seeds: list[int],
    hidden: list[int],
    train: dict,
    eta: float,
    log: Callable[[str], None],
    device: torch.device = torch.device("cpu"),
):
    """Neural bridge vs guided proposal (importance weights), pCN, the score-matching bridge and
    brute force on one conditioning event. Returns (metrics, arrays); per-seed arrays lead with the
    seed axis, and `pcn_marginals` (S, n_kept, 3, d) holds pCN's states at T/4, T/2, 3T/4 for the
    comparison across seeds, which the claims step makes once every seed's job has run."""
    problem = cell_setup(cell, event, device)
    N, S = problem.n_steps, len(seeds)
    ks = [N // 4, N // 2, (3 * N) // 4]
    n = cell["n_samples"]
    metrics: dict = {"n_steps": N}
    samples: dict[str, torch.Tensor] = {}

    # guided proposal with importance weights
    g_paths, ll = sample_bridge(problem, None, cell["importance_samples"], generators(seeds, "guided"))
    metrics["ess_guided"] = effective_sample_size(ll).tolist()
    w = importance_weights(ll)
    samples["guided"] = g_paths[:, :n]
    is_mean, is_sd = zip(*[weighted_mean_sd(g_paths[s], w[s]) for s in range(S)])
    metrics["mode_fraction_is"] = [
        float((w[s] * (g_paths[s, :, N // 2, 0] > g_paths[s, :, N // 2, 1])).sum()) for s in range(S)
    ]
    log(f"{event_name} guided: ESS {np.round(metrics['ess_guided'], 1)} of {cell['importance_samples']}")

    # brute force: forward paths that end in the box v +- half_width
    bf = [
        brute_force(problem, cell["brute_force"]["n_paths"], cell["brute_force"]["half_width"], g)
        for g in generators(seeds, "brute")
    ]
    metrics["brute_force_kept"] = [len(p) for p in bf]
    log(f"{event_name} brute force: kept {metrics['brute_force_kept']} of {cell['brute_force']['n_paths']}")

    # pCN on the guided proposal
    pc = cell["pcn"]
    pcn_paths, acc, it_times = pcn_guided_bridge(
        problem, pc["chains"], eta, pc["n_iters"], pc["burn_in"], pc["thin"], generators(seeds, "pcn")
    )
    samples["pcn"] = pcn_paths
    metrics["pcn_acceptance"] = acc.tolist()
    n_kept = pcn_paths.shape[1]
    # cost of one retained pCN sample: the run's iterations (median time each) over its kept samples
    metrics["pcn_seconds_per_sample"] = float(np.median(it_times)) * pc["n_iters"] / (S * n_kept)
    log(f"{event_name} pCN: acceptance {np.round(acc.numpy(), 3)}, {n_kept} kept per seed")

    # neural bridge
    net = EnsembleMLP(seeds, 2, hidden, activation=cell["activation"]).to(device)
    curve = train_neural_bridge(problem, net, train_config(train), generators(seeds, "train"), log)
    samples["neural"], _ = sample_bridge(problem, net, n, generators(seeds, "eval"))
    loss, se = evaluate_loss(problem, net, n, generators(seeds, "eval"))
    g_loss, g_se = evaluate_loss(problem, None, n, generators(seeds, "eval"))
    metrics.update(
        {
            "loss_neural": loss.tolist(),
            "loss_se_neural": se.tolist(),
            "loss_guided": g_loss.tolist(),
            "loss_se_guided": g_se.tolist(),
        }
    )

    # score-matching bridge (Heng et al.), same iterations and paths per iteration
    score_net = EnsembleMLP(seeds, 2, hidden, activation=cell["activation"]).to(device)
    sm_curve = train_score_bridge(problem, score_net, train_config(train), generators(seeds, "sm_train"), log)
    samples["score"] = sample_score_bridge(problem, score_net, n, generators(seeds, "sm_sample"))
    metrics["score_start_error"] = (samples["score"][:, :, 0] - problem.x0.float()).norm(dim=-1).mean(-1).tolist()

    # trivial null: the unconditioned process by Euler-Maruyama on the same grid, as many paths (its own stream)
    samples["forward"] = simulate_forward(problem, increments_per_seed(generators(seeds, "forward"), n, problem)).cpu()

    # marginal distances (mean W1 over t = T/4, T/2, 3T/4 and both coordinates)
    # brute force is a reference for a seed only where it kept min_kept paths; NaN (inconclusive) otherwise
    # (decided per seed, so the numbers do not depend on which seeds share a job)
    enough = [kept >= cell["brute_force"]["min_kept"] for kept in metrics["brute_force_kept"]]
    for name in ("neural", "score", "guided", "forward", "pcn"):
        if name != "pcn":
            metrics[f"w1_{name}_pcn"] = [marginal_w1(samples[name][s], samples["pcn"][s], ks) for s in range(S)]
        metrics[f"w1_{name}_brute"] = [
            marginal_w1(samples[name][s], bf[s], ks) if enough[s] else math.nan for s in range(S)
        ]
    for name in ("neural", "pcn", "score", "guided", "forward"):
        metrics[f"mode_fraction_{name}"] = mode_fraction(samples[name], N // 2).tolist()
    log(
        f"{event_name} W1 to pCN: neural {np.round(metrics['w1_neural_pcn'], 3)}, score "
        f"{np.round(metrics['w1_score_pcn'], 3)}, guided {np.round(metrics['w1_guided_pcn'], 3)}"
    )

    # sampling cost: neural bridge vs forward simulation of the same number of paths, median of repeats
    tm = cell["timing"]
    dW = increments_per_seed(generators(seeds, "timing"), tm["n_paths"], problem)
    with torch.no_grad():  # each timed call waits for the device's kernels (CUDA runs asynchronously)
        t_nb = median_time(lambda: (simulate_bridge(problem, dW, net), synchronize(problem.device)), tm["repeats"])
        t_fw = median_time(lambda: (simulate_forward(problem, dW), synchronize(problem.device)), tm["repeats"])
    metrics.update(
        {
            "seconds_neural": t_nb,
            "seconds_forward": t_fw,
            "cost_ratio_neural_forward": t_nb / t_fw,
            "seconds_per_sample_neural": t_nb / (S * tm["n_paths"]),
        }
    )
    metrics["cost_ratio_pcn_neural"] = metrics["pcn_seconds_per_sample"] / metrics["seconds_per_sample_neural"]
    # the null of the cost claim: a retained pCN sample against one forward path
    metrics["cost_ratio_pcn_forward"] = metrics["pcn_seconds_per_sample"] / (t_fw / (S * tm["n_paths"]))
    log(
        f"{event_name} timing: neural/forward = {t_nb / t_fw:.2f}, pCN/neural per sample = "
        f"{metrics['cost_ratio_pcn_neural']:.1f}"
    )

    arrays = {
        "ts": problem.ts.numpy(),
        "train_loss": curve.T,
        "score_train_loss": sm_curve.T,
        "is_mean": torch.stack(is_mean).numpy(),
        "is_sd": torch.stack(is_sd).numpy(),
        "pcn_marginals": samples["pcn"][:, :, ks].numpy(),
    }
    for name, p in samples.items():
        arrays[f"{name}_mean"], arrays[f"{name}_sd"] = mean_sd_curves(p)
        arrays[f"{name}_paths"] = p[:, :N_FIGURE_PATHS].numpy()
    if bf[0].shape[0] > 1:
        arrays["brute_mean"], arrays["brute_sd"] = mean_sd_curves(bf[0])
        arrays["brute_paths"] = bf[0][:N_FIGURE_PATHS].numpy()
    return metrics, arrays


# ---- the DAG steps ------------------------------------------------------------------------------


def linear_job(
    process: str,
    spec: dict,
    eps: float,
    seeds: list[int],
    hidden: list[int],
    train: dict,
    n_eval: int,
    eval_times: list[float],
    threads: int,
    out_json: str,
    out_npz: str,
    device: torch.device = torch.device("cpu"),
) -> None:
    """Step neural_bridges_linear: one closed-form bridge (Brownian or OU) for one group of seeds."""
    torch.set_num_threads(threads)
    log(f"{process}: spec {spec}, seeds {seeds}, train {train}, device {device}")
    metrics, arrays = linear_experiment(process, spec, eps, seeds, hidden, train, n_eval, eval_times, log, device)
    save_arrays(out_npz, arrays, dtype=np.float64)
    write_json(out_json, {"process": process, "spec": spec, "seeds": seeds, **metrics})


def cell_job(
    event_name: str,
    cell: dict,
    event: dict,
    seeds: list[int],
    hidden: list[int],
    train: dict,
    eta: float,
    threads: int,
    out_json: str,
    out_npz: str,
    device: torch.device = torch.device("cpu"),
) -> None:
    """Step neural_bridges_cell: one conditioning event of the cell model for one group of seeds."""
    torch.set_num_threads(threads)
    log(f"cell {event_name}: {event}, seeds {seeds}, train {train}, device {device}")
    metrics, arrays = cell_experiment(event_name, cell, event, seeds, hidden, train, eta, log, device)
    save_arrays(out_npz, arrays, dtype=np.float64)
    write_json(out_json, {"event": event_name, "spec": event, "seeds": seeds, **metrics})
