"""CUDA decode-GEMV bandwidth: our int4 and 2:4+int4 ops against the GPU's memory bandwidth.

Llama-7B shapes at batches 1, 4, 8 and 16, cycling over enough distinct matrices that the working set is >= 4x
the GPU's L2 cache (as a layer stack streams its weights). Each case is timed two ways, CUDA-event
medians over repeats:
  graph  one CUDA graph replaying one product per matrix (what a decode loop under CUDA graphs pays:
         the kernels alone, no Python or dispatch time between them);
  eager  the same products launched from Python (dispatch included; at a few microseconds per kernel
         the CPU side, not the GPU, sets this time).
Our ops are also timed with ICML25_CUDA_GEMV=0 (rows `*_general`): the general one-warp-per-row kernels,
the before of the decode-GEMV path, in the same process.
Effective GB/s = weight bytes (packed values, metadata, scales, zero points) per product / time. The
ceilings are measured in the same process: a read-only reduction over 2 GB (torch.sum) and a device copy
(read + write bytes). Baselines: torch's bf16 F.linear (cuBLAS) and torch's own int4 kernel
(_weight_int4pack_mm, tinygemm, bf16 activations) where this torch build has it. Each of our products is
checked against the dequantized reference before it is timed. Run where torch has CUDA:
    PYTHONPATH=src python benchmarks/cuda_bandwidth.py [out.json] [--explore]
"""

from __future__ import annotations

import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

from methods import kernels

SHAPES = [(4096, 4096), (11008, 4096), (4096, 11008)]  # (N out, K in), Llama-7B q/up/down
BATCHES = [1, 4, 8, 16]
GS = 128
# --explore: int4 on the tensor cores at batch 4 too (_tc) or never (_fma), and the split-K FMA path's block heights.
SK = [(f"_sk{r}", {"ICML25_CUDA_SK_ROWS": str(r), "ICML25_CUDA_TC": "0"}) for r in (32, 128)]
EXPLORE = {
    ("int4", 4): [("_tc", {"ICML25_CUDA_TC": "1"})] + SK,
    ("int4", 8): [("_fma", {"ICML25_CUDA_TC": "0"})] + SK,
    ("int4", 16): [("_fma", {"ICML25_CUDA_TC": "0"})],
    ("sparse24_int4", 8): SK,
}


def event_ms(fn, repeats: int = 20, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def per_call_ms(calls) -> dict:
    """Median ms per product: all calls in one CUDA graph (graph) and launched from Python (eager)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as graph capture requires
        for f in calls:
            f()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        keep = [f() for f in calls]  # noqa: F841  (outputs live in the graph's pool)
    n = len(calls)
    return {"graph": event_ms(graph.replay) / n, "eager": event_ms(lambda: [f() for f in calls]) / n}


def ceilings_gbs() -> dict:
    x = torch.empty(2 * 1024**3, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    copy = 2 * x.numel() / (event_ms(lambda: y.copy_(x), repeats=10) * 1e-3) / 1e9
    del y
    f = x.view(torch.float32)
    read = x.numel() / (event_ms(lambda: f.sum(), repeats=10) * 1e-3) / 1e9
    return {"read_GBps": read, "copy_GBps": copy}


def tinygemm(n: int, k: int):
    """torch's CUDA int4 kernel on random codes: (weight tuple, bytes) or (None, reason)."""
    try:
        codes = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device="cuda")
        packed = torch._convert_weight_to_int4pack(codes, 8)
        sz = torch.rand(k // GS, n, 2, device="cuda", dtype=torch.bfloat16)
        torch._weight_int4pack_mm(torch.randn(1, k, device="cuda", dtype=torch.bfloat16), packed, GS, sz)
        return (packed, sz), n * k // 2 + sz.numel() * 2
    except (RuntimeError, AttributeError, TypeError) as e:
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"


def count(l2: int, nbytes: int) -> int:
    return max(2, -(-4 * l2 // nbytes))


def main() -> None:
    explore = "--explore" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--explore"]
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    assert kernels.extension_available(), "the icml25 extension is not built (python -m methods.kernels.build)"
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    ceil = ceilings_gbs()
    rows, notes = [], []
    for n, k in SHAPES:
        g = torch.Generator(device="cpu").manual_seed(0)
        w0 = kernels.quantize_int4_rtn(torch.randn(n, k, generator=g).cuda(), group_size=GS)
        mats = [w0] + [
            kernels.quantize_int4_rtn(torch.randn(n, k, device="cuda"), group_size=GS)
            for _ in range(count(l2, w0.nbytes) - 1)
        ]
        q = torch.randint(-7, 8, (n, k), device="cuda", dtype=torch.int8)
        keep = torch.rand(n, k // 4, 4, device="cuda").argsort(-1) < 2  # two random positions per group
        q = torch.where(keep.view(n, k), q, torch.zeros_like(q))
        sp0 = kernels.pack_sparse24_int4(q, torch.rand(n, k // GS, device="cuda") + 0.1, group_size=GS)
        sps = [sp0] + [
            kernels.pack_sparse24_int4(q, torch.rand(n, k // GS, device="cuda") + 0.1, group_size=GS)
            for _ in range(count(l2, sp0.nbytes) - 1)
        ]
        dense = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(count(l2, 2 * n * k))]
        tg, tg_bytes = tinygemm(n, k)
        if tg is None:
            notes.append(f"torch int4 (tinygemm) unavailable at {n}x{k}: {tg_bytes}")
            tgs = []
        else:
            tgs = [tg] + [tinygemm(n, k)[0] for _ in range(count(l2, tg_bytes) - 1)]
        for m in BATCHES:
            x = torch.randn(m, k, device="cuda")
            xb = x.bfloat16()
            ours = {"int4": (mats, w0, kernels.int4_linear), "sparse24_int4": (sps, sp0, kernels.sparse24_int4_linear)}
            cases = [
                (name, [lambda w=w, f=f: f(x, w) for w in ws], ws[0].nbytes, len(ws), (f, w1))
                for name, (ws, w1, f) in ours.items()
            ]
            cases.append(("torch_bf16", [lambda w=w: F.linear(xb, w) for w in dense], 2 * n * k, len(dense), None))
            if tgs:
                cases.append(
                    (
                        "torch_int4_tinygemm",
                        [lambda t=t: torch._weight_int4pack_mm(xb, t[0], GS, t[1]) for t in tgs],
                        tg_bytes,
                        len(tgs),
                        None,
                    )
                )
            for name, calls, nbytes, n_mats, check in cases:
                variants = [(name, {})]
                if check is not None:  # ours: also the general kernels (the before) and any explored switches
                    variants = [(name + "_general", {"ICML25_CUDA_GEMV": "0"})] + variants
                    variants += [
                        (name + suffix, env) for suffix, env in (EXPLORE.get((name, m), []) if explore else [])
                    ]
                for label, env in variants:
                    os.environ.update(env)
                    try:
                        if check is not None:
                            f, w1 = check
                            got, want = f(x, w1), x @ w1.dequantize().T
                            err = (got - want).abs().max().item() / (1 + want.abs().max().item())
                            assert err < 1e-4, (
                                f"{label} {n}x{k} batch {m}: relative error {err:.2e} against the dequantized reference"
                            )
                        t = per_call_ms(calls)
                    finally:
                        for key in env:
                            del os.environ[key]
                    gbs = nbytes / (t["graph"] * 1e-3) / 1e9
                    rows.append(
                        {
                            "shape": [n, k],
                            "batch": m,
                            "op": label,
                            "graph_us": 1e3 * t["graph"],
                            "eager_us": 1e3 * t["eager"],
                            "bytes": nbytes,
                            "GBps": gbs,
                            "fraction_of_read": gbs / ceil["read_GBps"],
                            "fraction_of_copy": gbs / ceil["copy_GBps"],
                            "working_set_MB": nbytes * n_mats / 1e6,
                        }
                    )
                    print(
                        f"{n}x{k} b{m} {label:24s} graph {1e3 * t['graph']:7.2f} us  eager {1e3 * t['eager']:7.2f} us  "
                        f"{gbs:7.0f} GB/s  {gbs / ceil['read_GBps']:.2f} of read",
                        flush=True,
                    )
    out = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "L2_MB": l2 / 1e6,
        **ceil,
        "rows": rows,
        "notes": notes,
    }
    print(json.dumps({k: v for k, v in out.items() if k != "rows"}, indent=1))
    if args:
        with open(args[0], "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
