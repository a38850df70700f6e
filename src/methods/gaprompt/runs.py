"""The per-seed-group results of gaprompt_adapt merged into one record per method (read by figures and claims)."""

from __future__ import annotations

from methods.common.io import read_json

PER_SEED = ("seeds", "test_acc", "train_acc", "seconds", "loss_curves")
SHARED = ("method", "trainable", "total", "fraction", "epochs", "majority_acc")


def merge_seed_runs(parts: list[dict]) -> dict:
    """One method's adapt results from its seed-group jobs (one job at tiny scale, one per seed at paper scale),
    concatenated in the order given (the configured seed order): per-seed lists joined, counts checked equal,
    frozen_unchanged true only if it held in every job."""
    if not parts:
        raise ValueError("merge_seed_runs: no seed-group results to merge")
    first = parts[0]
    for p in parts[1:]:
        for key in SHARED:
            if p[key] != first[key]:
                raise ValueError(
                    f"gaprompt adapt results of seeds {first['seeds']} and {p['seeds']} disagree on "
                    f"{key} ({first[key]} vs {p[key]}); rerun gaprompt_adapt for {first['method']}"
                )
    out = {key: first[key] for key in SHARED}
    for key in PER_SEED:
        out[key] = [v for p in parts for v in p[key]]
    if len(set(out["seeds"])) != len(out["seeds"]):
        raise ValueError(f"gaprompt adapt results of {first['method']}: seed repeated across jobs {out['seeds']}")
    out["frozen_unchanged"] = all(p["frozen_unchanged"] for p in parts)
    if "paper_arch" in first:
        out["paper_arch"] = first["paper_arch"]
    return out


def read_method_runs(method_json: dict[str, list[str]]) -> dict[str, dict]:
    """{method: merged record} from {method: [its seed-group JSON files, in seed order]} (one file may be given
    as a plain path)."""
    return {
        m: merge_seed_runs([read_json(p) for p in ([paths] if isinstance(paths, str) else paths)])
        for m, paths in method_json.items()
    }
