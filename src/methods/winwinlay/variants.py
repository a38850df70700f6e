"""Measure a configuration variant against the default on a finished tiny run (the effects listed in the
README's "Where we differ" section): re-run the toy experiment, or the guided sampling of some methods on the
run's trained denoiser, with config overrides, and print the metrics per seed.

    python -m methods.winwinlay.variants guide --methods lg --set sampling.layer_reduction=averaged
    python -m methods.winwinlay.variants toy --set boxdiff.top_frac=0.8 boxdiff.corner_margin=6
"""

from __future__ import annotations

import argparse
import copy
import tempfile
from pathlib import Path

import numpy as np
import yaml

from methods.common.config import apply_override
from methods.common.io import read_json

from .guide_step import guide_job
from .toy_step import toy_job


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=["toy", "guide"])
    ap.add_argument("--run", default="results/winwinlay", help="a finished run's output folder (model/denoiser.pt)")
    ap.add_argument("--config", default="config.yaml")
    ap.add_argument("--methods", nargs="+", default=None, help="guide: method names of the config (default all)")
    ap.add_argument("--set", nargs="*", default=[], dest="overrides")
    args = ap.parse_args(argv)
    cfg = copy.deepcopy(yaml.safe_load(Path(args.config).read_text())["winwinlay"])
    for o in args.overrides:
        apply_override(cfg, o, "winwinlay")
    label = " ".join(args.overrides) or "(default)"
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.step == "toy":
            toy_job(cfg["seeds"], {**cfg["toy"], "boxdiff": cfg["boxdiff"]}, 1, f"{tmp}/t.json", f"{tmp}/t.npz")
            res = read_json(f"{tmp}/t.json")
            out = {k: v for k, v in res.items() if isinstance(v, list) and k != "seeds"}
        else:
            methods = {m: cfg["methods"][m] for m in (args.methods or cfg["methods"])}
            ckpt = next((Path(args.run) / "model").glob("*.pt"))
            for seed in cfg["seeds"]:
                guide_job(
                    str(ckpt),
                    cfg["data"],
                    {**cfg["sampling"], "boxdiff": cfg["boxdiff"]},
                    methods,
                    seed,
                    1,
                    f"{tmp}/g{seed}.json",
                    f"{tmp}/g{seed}.npz",
                )
                res = read_json(f"{tmp}/g{seed}.json")
                for m in methods:
                    for k, v in res[m].items():
                        out.setdefault(f"{k}_{m}", []).append(v)
    for k, v in out.items():
        print(f"{label} {k}: per seed {[round(x, 4) for x in v]}, mean {np.mean(v):.4f}", flush=True)
    return out


if __name__ == "__main__":
    main()
