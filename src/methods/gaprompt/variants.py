"""Measure a configuration variant against the default on a finished tiny run (the effects listed in the
README's "Where we differ" section): re-run the adaptation step of some methods with config overrides on the
run's data and pre-trained backbone, and print the held-out accuracy per seed.

    python -m methods.gaprompt.variants --run results/gaprompt --methods gaprompt \
        --set adapt.propagation_indexing=patch
"""

from __future__ import annotations

import argparse
import copy
import tempfile
from pathlib import Path

import yaml

from methods.common.config import apply_override
from methods.common.io import read_json

from .adapt_step import adapt_job


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default="results/gaprompt", help="a finished run's output folder (data, pretrain)")
    ap.add_argument("--config", default="config.yaml")
    ap.add_argument("--methods", nargs="+", default=["gaprompt"])
    ap.add_argument("--set", nargs="*", default=[], dest="overrides")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    cfg = copy.deepcopy(yaml.safe_load(Path(args.config).read_text())["gaprompt"])
    for o in args.overrides:
        apply_override(cfg, o, "gaprompt")
    run = Path(args.run)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for method in args.methods:
            js, npz = f"{tmp}/{method}.json", f"{tmp}/{method}.npz"
            adapt_job(
                method,
                str(run / "data" / "clouds.npz"),
                str(run / "pretrain" / "backbone.pt"),
                cfg["backbone"],
                cfg["adapt"],
                cfg["seeds"],
                cfg["paper_arch"],
                args.threads,
                js,
                npz,
            )
            out[method] = read_json(js)["test_acc"]
            acc = out[method]
            print(
                f"{method} {' '.join(args.overrides) or '(default)'}: test acc per seed "
                f"{[round(a, 4) for a in acc]}, mean {sum(acc) / len(acc):.4f}",
                flush=True,
            )
    return out


if __name__ == "__main__":
    main()
