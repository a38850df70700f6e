"""The experiments that test each statement of the paper, vectorised over seeds in numpy.

* `run_rate`       sub-optimality vs number of trajectories, outcome (reduction) vs process
                   supervision vs the oracle with the true step rewards (main theorem).
* `run_sweep`      coverage sweeps on the de Bruijn chain at a fixed n: horizon (trajectory
                   coverage grows as A^H, state-action coverage fixed) and behaviour eps (both grow)
                   (main theorem, Change of Trajectory Measure Lemma).
* `run_sample_complexity`  the horizon sweep on a grid of n: trajectories needed to reach a per-step
                   accuracy, against C_traj (the same statements, without the O(H) cap on errors
                   that flattens every fixed-n curve).
* `run_lemma`      the exact change-of-measure ratio against C_sa and C_traj (the Lemma).
* `run_prm`        A^mu vs Q^mu of a sub-optimal mu as process rewards (Section 4).
Seeds: seed s draws MDP instance s (stream [seed, 0, ...]) and its datasets (stream [seed, 1, ...]).
"""

from __future__ import annotations

import numpy as np

from methods.common.io import log

from .coverage import (
    behaviour_policy,
    sa_coverage,
    second_moment,
    traj_coverage,
    trajectory_measure_ratio,
    worst_policy,
)
from .mdp import TabularMDP, chain_mdp, make_mdp, one_hot, plan, sample_trajectories, suboptimality
from .prm import prm_policies, rollout_q
from .reduction import Dataset, best_observed_trajectory, outcome_to_process, pessimistic_vi

FAMILY_TAG = {"tree": 1, "chain": 2, "stochastic": 3, "fork": 4}


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y on log x over the points with finite positive y; NaN below 3 points."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(y) & (y > 0) & np.isfinite(x) & (x > 0)
    if ok.sum() < 3:
        return float("nan")
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def coverage_summary(mdp: TabularMDP, mu: np.ndarray) -> dict[str, float]:
    """All-policy and optimal-policy state-action and trajectory coverage of mu."""
    pi_star = one_hot(plan(mdp)[0], mdp.A)
    return {
        "c_sa": sa_coverage(mdp, mu),
        "c_traj": traj_coverage(mdp, mu),
        "c_sa_star": sa_coverage(mdp, mu, pi_star),
        "c_traj_star": traj_coverage(mdp, mu, pi_star),
    }


TRIVIAL = ("uniform", "behaviour")  # policies that learn nothing: the trivial nulls of the rate and sweep claims


def trivial_suboptimality(mdp: TabularMDP, mu: np.ndarray) -> dict[str, float]:
    """Sub-optimality of the policies a reviewer tries first, exact: uniform random play, and the behaviour
    policy mu itself (what cloning the data would return); neither depends on the dataset."""
    uniform = np.full((mdp.H, mdp.S, mdp.A), 1.0 / mdp.A)
    return {"uniform": suboptimality(mdp, uniform), "behaviour": suboptimality(mdp, mu)}


def learn_all(
    mdp: TabularMDP, data: Dataset, beta: float, lsq: dict, naive: bool = False, mu: np.ndarray | None = None
) -> dict[str, float]:
    """Sub-optimality of each learner on one dataset.

    process: PEVI on all n trajectories with their step labels. outcome: the reduction (fit on the
    first half, PEVI on the relabelled second half). oracle: PEVI on the same second half with the
    true mean step rewards. naive: the best observed trajectory (outcomes, no credit assignment).
    With the behaviour policy `mu`, also the trivial policies (`trivial_suboptimality`).
    """
    A = mdp.A
    relabelled, _ = outcome_to_process(mdp, data, lsq)
    _, d2 = data.split()
    out = {
        "outcome": suboptimality(mdp, one_hot(pessimistic_vi(mdp, relabelled, beta), A)),
        "process": suboptimality(mdp, one_hot(pessimistic_vi(mdp, data, beta), A)),
        "oracle": suboptimality(mdp, one_hot(pessimistic_vi(mdp, d2, beta, R=mdp.R), A)),
    }
    if naive:
        out["naive"] = suboptimality(mdp, one_hot(best_observed_trajectory(mdp, data), A))
    if mu is not None:
        out.update(trivial_suboptimality(mdp, mu))
    return out


def run_rate(family: str, spec: dict, eps: float, seeds: list[int], n_grid: list[int], beta: float, lsq: dict) -> dict:
    """Sub-optimality vs number of trajectories for one MDP family; arrays are (seed, n). Besides the
    outcome reduction, process supervision and the oracle, the trajectory-level learner (`naive`: replay
    the best observed trajectory), the null of the rate claims."""
    methods = ("outcome", "process", "oracle", "naive", *TRIVIAL)
    sub = {m: np.zeros((len(seeds), len(n_grid))) for m in methods}
    cover = {k: [] for k in ("c_sa", "c_traj", "c_sa_star", "c_traj_star")}
    for i, seed in enumerate(seeds):
        mdp = make_mdp(family, spec, np.random.default_rng([seed, 0, FAMILY_TAG[family]]))
        mu = behaviour_policy(mdp, eps)
        for k, v in coverage_summary(mdp, mu).items():
            cover[k].append(v)
        for j, n in enumerate(n_grid):
            data = Dataset(*sample_trajectories(mdp, mu, n, np.random.default_rng([seed, 1, n])))
            for m, v in learn_all(mdp, data, beta, lsq, naive=True, mu=mu).items():
                sub[m][i, j] = v
        log(f"{family} seed {seed}: outcome {np.round(sub['outcome'][i], 3)} process {np.round(sub['process'][i], 3)}")
    return {
        "family": family,
        "spec": spec,
        "behaviour_eps": eps,
        "beta": beta,
        "seeds": seeds,
        "n_trajectories": n_grid,
        "subopt": {m: v.tolist() for m, v in sub.items()},
        "coverage": cover,
    }


def run_sweep(
    sweep: str, points: list[dict], chain: dict, n: int, seeds: list[int], repeats: int, beta: float, lsq: dict
) -> dict:
    """A coverage sweep on the de Bruijn chain; each point fixes the horizon and the behaviour eps.

    Seed s draws one reward instance per point and `repeats` datasets of n trajectories on it;
    arrays are (point, seed), each entry the mean over the repeats. Coverage coefficients are
    stored per (point, seed): for eps < 1 mu follows the worst policy of that draw.
    """
    methods = ("outcome", "process", "oracle", "naive", *TRIVIAL)
    sub = {m: np.zeros((len(points), len(seeds))) for m in methods}
    cover = {k: np.zeros((len(points), len(seeds))) for k in ("c_sa", "c_traj", "c_sa_star", "c_traj_star")}
    for p, point in enumerate(points):
        H, eps = point["horizon"], point["eps"]
        for i, seed in enumerate(seeds):
            mdp = chain_mdp(H, chain["n_states"], chain["n_actions"], np.random.default_rng([seed, 0, H]))
            mu = behaviour_policy(mdp, eps)
            for k, v in coverage_summary(mdp, mu).items():
                cover[k][p, i] = v
            for rep in range(repeats):
                rng = np.random.default_rng([seed, 1, H, int(round(eps * 1e6)), rep])
                data = Dataset(*sample_trajectories(mdp, mu, n, rng))
                for m, v in learn_all(mdp, data, beta, lsq, naive=True, mu=mu).items():
                    sub[m][p, i] += v / repeats
        log(
            f"{sweep} H={H} eps={eps}: "
            + ", ".join(f"{m} {sub[m][p].mean():.3f}" for m in methods)
            + f"; C_sa {cover['c_sa'][p].max():.3g}, C_traj {cover['c_traj'][p].max():.3g}"
        )
    return {
        "sweep": sweep,
        "points": points,
        "chain": chain,
        "n_trajectories": n,
        "seeds": seeds,
        "repeats": repeats,
        "beta": beta,
        "subopt": {m: v.tolist() for m, v in sub.items()},
        "coverage": {k: v.tolist() for k, v in cover.items()},
    }


def run_sample_complexity(
    points: list[dict], chain: dict, n_grid: list[int], seeds: list[int], beta: float, lsq: dict
) -> dict:
    """Sub-optimality on a grid of n at every horizon of the sweep: arrays (point, seed, n).

    From these the claims step reads, per learner and horizon, the number of trajectories needed to
    reach a per-step accuracy (`trajectories_to_reach`), and how that number scales with C_traj.
    """
    methods = ("outcome", "process", "oracle", "naive", *TRIVIAL)
    sub = {m: np.zeros((len(points), len(seeds), len(n_grid))) for m in methods}
    cover = {k: np.zeros((len(points), len(seeds))) for k in ("c_sa", "c_traj")}
    for p, point in enumerate(points):
        H, eps = point["horizon"], point["eps"]
        for i, seed in enumerate(seeds):
            mdp = chain_mdp(H, chain["n_states"], chain["n_actions"], np.random.default_rng([seed, 0, H]))
            mu = behaviour_policy(mdp, eps)
            cover["c_sa"][p, i], cover["c_traj"][p, i] = sa_coverage(mdp, mu), traj_coverage(mdp, mu)
            for j, n in enumerate(n_grid):
                rng = np.random.default_rng([seed, 5, H, n])
                data = Dataset(*sample_trajectories(mdp, mu, n, rng))
                for m, v in learn_all(mdp, data, beta, lsq, naive=True, mu=mu).items():
                    sub[m][p, i, j] = v
        log(f"samples H={H}: " + "; ".join(f"{m} {np.round(sub[m][p].mean(0) / H, 3)}" for m in methods))
    return {
        "sweep": "samples",
        "points": points,
        "chain": chain,
        "n_trajectories": n_grid,
        "seeds": seeds,
        "beta": beta,
        "subopt": {m: v.tolist() for m, v in sub.items()},
        "coverage": {k: v.tolist() for k, v in cover.items()},
    }


def trajectories_to_reach(n_grid, curve, target: float) -> float:
    """Smallest n at which a (decreasing) curve first falls to `target`, log-interpolated; inf if never."""
    n, y = np.asarray(n_grid, float), np.asarray(curve, float)
    below = np.nonzero(y <= target)[0]
    if not len(below):
        return float("inf")
    j = below[0]
    if j == 0:
        return float(n[0])
    y0, y1 = y[j - 1], y[j]
    frac = (y0 - target) / (y0 - y1)
    return float(np.exp(np.log(n[j - 1]) + frac * (np.log(n[j]) - np.log(n[j - 1]))))


def lemma_rows(mdp: TabularMDP, mu: np.ndarray, n_policies: int, rng: np.random.Generator, label: str) -> list[dict]:
    """C_sa, C_traj and the exact change-of-measure ratio of mu against pi*, the worst policy and random policies."""
    A = mdp.A
    policies = {"optimal": plan(mdp)[0], "worst": worst_policy(mdp)}
    for k in range(n_policies):
        policies[f"random{k}"] = rng.integers(0, A, size=(mdp.H, mdp.S))
    M_mu = second_moment(mdp, mu)
    rows = []
    for name, det in policies.items():
        pi = one_hot(det, A)
        kappa = _ratio_on_support(second_moment(mdp, pi), M_mu)
        rows.append(
            {
                "mdp": label,
                "family": mdp.name,
                "horizon": mdp.H,
                "policy": name,
                "c_sa": sa_coverage(mdp, mu, pi),
                "c_traj": traj_coverage(mdp, mu, pi),
                "kappa": kappa,
            }
        )
    return rows


def _ratio_on_support(M_pi: np.ndarray, M_mu: np.ndarray) -> float:
    """The generalized eigenvalue restricted to features either policy visits (the rest are zero rows)."""
    dpi, dmu = np.diag(M_pi), np.diag(M_mu)
    if ((dpi > 1e-15) & (dmu <= 1e-15)).any():
        return float("inf")
    keep = dmu > 1e-15
    return trajectory_measure_ratio(M_pi[np.ix_(keep, keep)], M_mu[np.ix_(keep, keep)])


def run_lemma(
    families: list[str],
    specs: dict,
    eps: float,
    sweep_points: dict[str, list[dict]],
    chain: dict,
    n_policies: int,
    seed: int,
) -> dict:
    """Rows (mdp, policy, C_sa, C_traj, kappa) over the rate families and every sweep point."""
    rows = []
    rng = np.random.default_rng([seed, 2])
    for family in families:
        mdp = make_mdp(family, specs[family], np.random.default_rng([seed, 0, FAMILY_TAG[family]]))
        rows += lemma_rows(mdp, behaviour_policy(mdp, eps), n_policies, rng, family)
    for sweep, points in sweep_points.items():
        for point in points:
            H, e = point["horizon"], point["eps"]
            mdp = chain_mdp(H, chain["n_states"], chain["n_actions"], np.random.default_rng([seed, 0, H]))
            rows += lemma_rows(mdp, behaviour_policy(mdp, e), n_policies, rng, f"{sweep}:H={H},eps={e}")
    for r in rows:
        r["kappa_over_h3_csa"] = r["kappa"] / (r["horizon"] ** 3 * r["c_sa"])
        r["kappa_over_ctraj"] = r["kappa"] / r["c_traj"]
    worst = max(rows, key=lambda r: r["kappa_over_h3_csa"])
    log(
        f"lemma: {len(rows)} (mdp, policy) pairs; worst kappa/(H^3 C_sa) = {worst['kappa_over_h3_csa']:.3g} "
        f"({worst['mdp']}, {worst['policy']})"
    )
    return {"seed": seed, "rows": rows}


def run_prm(families: list[str], specs: dict, eps: float, n_instances: int, rollouts: list[int]) -> dict:
    """A^mu vs Q^mu as process rewards; mu = eps-mixture of the worst policy and uniform (sub-optimal)."""
    out = {"behaviour_eps": eps, "families": {}}
    for family in families:
        count = 1 if family == "fork" else n_instances
        rec = {k: [] for k in ("mu", "advantage", "q_value", "greedy")}
        roll = {m: {"advantage": [], "q_value": []} for m in rollouts}
        for inst in range(count):
            mdp = make_mdp(family, specs[family], np.random.default_rng([inst, 3, FAMILY_TAG[family]]))
            mu = behaviour_policy(mdp, eps)
            rec["mu"].append(suboptimality(mdp, mu))
            for name, pi in prm_policies(mdp, mu).items():
                rec[name].append(suboptimality(mdp, pi))
            for m in rollouts:
                Q_hat = rollout_q(mdp, mu, m, np.random.default_rng([inst, 4, m]))
                pols = prm_policies(mdp, mu, Q_mu=Q_hat)
                for name in ("advantage", "q_value"):
                    roll[m][name].append(suboptimality(mdp, pols[name]))
        out["families"][family] = {
            "spec": specs[family],
            "subopt": rec,
            "rollouts": {str(m): v for m, v in roll.items()},
        }
        log(
            f"prm {family}: mean subopt mu {np.mean(rec['mu']):.3f}, advantage {np.max(rec['advantage']):.2e} (max), "
            f"Q {np.mean(rec['q_value']):.3f}, greedy {np.mean(rec['greedy']):.3f}"
        )
    return out
