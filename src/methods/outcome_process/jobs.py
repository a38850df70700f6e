"""The experiment steps of outcome_process (workflow/rules/outcome_process.smk), one function per script. The
steps over seeds (rate, sweep, sample_complexity, preference) run one seed group per job: all seeds at tiny
scale, one seed per job at paper scale; summary.merge_seed_groups joins them in seed order."""

from __future__ import annotations

from methods.common.io import write_json

from . import experiments
from .preference import preference_rate_job


def rate_experiment(
    family: str, spec: dict, eps: float, seeds: list[int], n_grid: list[int], beta: float, lsq: dict, out_json: str
) -> None:
    """Sub-optimality vs n for one family (outcome reduction, process, oracle)."""
    write_json(out_json, experiments.run_rate(family, spec, eps, list(seeds), list(n_grid), beta, lsq))


def sweep_experiment(
    sweep: str,
    points: list[dict],
    chain: dict,
    n: int,
    seeds: list[int],
    repeats: int,
    beta: float,
    lsq: dict,
    out_json: str,
) -> None:
    """One coverage sweep on the chain (horizon or eps)."""
    write_json(out_json, experiments.run_sweep(sweep, points, chain, n, list(seeds), repeats, beta, lsq))


def sample_complexity_experiment(
    points: list[dict], chain: dict, n_grid: list[int], seeds: list[int], beta: float, lsq: dict, out_json: str
) -> None:
    """The horizon sweep on a grid of n (trajectories needed to reach a per-step accuracy)."""
    write_json(out_json, experiments.run_sample_complexity(points, chain, list(n_grid), list(seeds), beta, lsq))


def lemma_experiment(
    families: list[str],
    specs: dict,
    eps: float,
    sweep_points: dict,
    chain: dict,
    n_policies: int,
    seed: int,
    out_json: str,
) -> None:
    """Exact change-of-trajectory-measure ratios against both coverage coefficients."""
    write_json(out_json, experiments.run_lemma(families, specs, eps, sweep_points, chain, n_policies, seed))


def prm_experiment(
    families: list[str], specs: dict, eps: float, n_instances: int, rollouts: list[int], out_json: str
) -> None:
    """A^mu vs Q^mu of a sub-optimal mu as process rewards."""
    write_json(out_json, experiments.run_prm(families, specs, eps, n_instances, list(rollouts)))


def preference_experiment(
    family: str, spec: dict, eps: float, seeds: list[int], n_grid: list[int], beta: float, bt: dict, out_json: str
) -> None:
    """The Bradley-Terry version of the reduction on one family (same instances and datasets as the rate step)."""
    preference_rate_job(family, spec, eps, seeds, n_grid, beta, bt, out_json)
