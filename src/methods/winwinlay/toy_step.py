"""Step winwinlay_toy (experiment 1): attention maps optimised directly under each energy."""

from __future__ import annotations

import numpy as np
import torch

from methods.common.io import log, save_arrays, write_json

from .toy import toy_experiment


def toy_job(seeds: list[int], cfg: dict, threads: int, out_json: str, out_npz: str) -> None:
    """Every seed's boxes and initial maps optimised under the common, non-local and BoxDiff energies (Sec. 3's
    argument that the common energy piles attention into part of the box): per-seed metrics, the first seed's maps."""
    torch.set_num_threads(threads)
    log(f"toy: seeds {seeds}, config {cfg}")
    per_seed, arrays = {}, {}
    for seed in seeds:
        metrics, examples = toy_experiment(seed, cfg)
        for k, v in metrics.items():
            per_seed.setdefault(k, []).append(v)
        if seed == seeds[0]:
            arrays = examples
        log(f"toy seed {seed}: " + ", ".join(f"{k}={v:.3f}" for k, v in metrics.items()))
    save_arrays(out_npz, arrays, dtype=np.float64)
    write_json(out_json, {"seeds": seeds, "config": cfg, **per_seed})
