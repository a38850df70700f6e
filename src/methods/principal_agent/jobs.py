"""The simulation steps of principal_agent (workflow/rules/principal_agent.smk): rate, sweep, lipschitz,
lower_bound and multiarm, one function per script. Each writes {"params": ..., "records": [...]} (one record
per algorithm, N, K, T, seed) for one seed group: all seeds in one job at tiny scale, one seed per job at
paper scale (`group`, the `{seeds}` wildcard)."""

from __future__ import annotations

import zlib

from methods.common.io import log, write_json

from . import experiments as E


def _key(name: str, group: str = "all") -> int:
    """A stable random-stream key per job (the same config gives the same numbers). The seeds of one job share
    its arrival and learner streams (its runs are batched in one game loop); a job of one seed group other
    than `all` (one seed per job at paper scale) draws streams of its own, so that seeds stay independent."""
    return zlib.crc32(name.encode() if group == "all" else f"{name}/{group}".encode())


def _write(out_json, params: dict, records: list[dict]) -> None:
    write_json(out_json, {"params": params, "records": records})
    log(f"{len(records)} records -> {out_json}")


def run_rate(
    adversary: str,
    algorithms: list[str],
    n_arms: int,
    n_types: int,
    horizons: list[int],
    seeds: list[int],
    adversary_params: dict,
    out_json: str,
    group: str = "all",
) -> None:
    """Known greedy responses, single-arm incentives: regret vs T under one adversary."""
    settings = [(n_arms, n_types, int(T)) for T in horizons]
    records = E.run_greedy(adversary, algorithms, settings, seeds, adversary_params, _key(f"rate/{adversary}", group))
    _write(
        out_json,
        {
            "adversary": adversary,
            "algorithms": algorithms,
            "n_arms": n_arms,
            "n_types": n_types,
            "horizons": horizons,
            "seeds": seeds,
            "adversary_params": adversary_params,
        },
        records,
    )


def run_sweep(
    dimension: str,
    algorithms: list[str],
    values: list[int],
    n_arms: int,
    n_types: int,
    horizons: list[int],
    seeds: list[int],
    adversary: str,
    adversary_params: dict,
    out_json: str,
    group: str = "all",
) -> None:
    """Regret vs N (dimension 'arms', K = n_types) or vs K (dimension 'types', N = n_arms)."""
    if dimension == "arms":
        settings = [(int(N), n_types, int(T)) for N in values for T in horizons]
    elif dimension == "types":
        settings = [(n_arms, int(K), int(T)) for K in values for T in horizons]
    else:
        raise ValueError(f"sweep dimension {dimension!r} unknown; use 'arms' or 'types'")
    records = E.run_greedy(adversary, algorithms, settings, seeds, adversary_params, _key(f"sweep/{dimension}", group))
    _write(
        out_json,
        {
            "dimension": dimension,
            "values": values,
            "algorithms": algorithms,
            "n_arms": n_arms,
            "n_types": n_types,
            "horizons": horizons,
            "seeds": seeds,
            "adversary": adversary,
        },
        records,
    )


def run_lipschitz(
    instance: str,
    horizons: list[int],
    seeds: list[int],
    n_arms: int,
    logit: dict,
    needle: dict,
    adversary_params: dict,
    out_json: str,
    group: str = "all",
) -> None:
    """Smooth responses: Tsallis-INF on the eps-grid against logit agents or the needle family."""
    if instance == "logit":
        records = E.run_logit(
            logit["adversary"],
            horizons,
            seeds,
            n_arms,
            logit["n_types"],
            logit["temperature"],
            adversary_params,
            _key("lipschitz/logit", group),
        )
        L = 1.0 / logit["temperature"]
    elif instance == "needle":
        records = E.run_needle(
            horizons,
            seeds,
            n_arms,
            needle["lipschitz"],
            needle["width_factor"],
            needle["base_prob"],
            _key("lipschitz/needle", group),
        )
        L = needle["lipschitz"]
    else:
        raise ValueError(f"lipschitz instance {instance!r} unknown; use 'logit' or 'needle'")
    _write(
        out_json,
        {
            "instance": instance,
            "lipschitz": L,
            "n_arms": n_arms,
            "horizons": horizons,
            "seeds": seeds,
            "logit": logit,
            "needle": needle,
        },
        records,
    )


def run_lower_bound(
    adversary: str,
    algorithms: list[str],
    horizons: list[int],
    seeds: list[int],
    window: float,
    threshold_range: list[float],
    adversary_params: dict,
    out_json: str,
    group: str = "all",
) -> None:
    """Unknown greedy responses: the Theorem 2.1 instance."""
    records = E.run_lower_bound(
        adversary, algorithms, horizons, seeds, window, threshold_range, adversary_params, _key("lower_bound", group)
    )
    _write(
        out_json,
        {
            "adversary": adversary,
            "algorithms": algorithms,
            "horizons": horizons,
            "seeds": seeds,
            "window": window,
            "threshold_range": threshold_range,
        },
        records,
    )


def run_multiarm(
    adversary: str,
    horizons: list[int],
    seeds: list[int],
    n_arms: int,
    n_types: int,
    adversary_params: dict,
    out_json: str,
    group: str = "all",
) -> None:
    """Known greedy responses, general (multi-arm) incentives."""
    records = E.run_multiarm(adversary, horizons, seeds, n_arms, n_types, adversary_params, _key("multiarm", group))
    _write(
        out_json,
        {"adversary": adversary, "horizons": horizons, "seeds": seeds, "n_arms": n_arms, "n_types": n_types},
        records,
    )
