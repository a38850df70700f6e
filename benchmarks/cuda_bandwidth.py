"""CUDA decode-GEMV bandwidth (issue K2): our int4 and 2:4+int4 ops against the GPU's copy bandwidth.

Batch-1 products with Llama-7B shapes, cycling over enough distinct matrices that the working set is
>= 4x the GPU's L2 cache (as a layer stack streams its weights), CUDA-event medians. Effective GB/s =
weight bytes (packed values, metadata, scales) per product / time; the ceiling is a device-to-device
copy's (read + write) bandwidth measured in the same process. Run where torch has CUDA:
    PYTHONPATH=src python benchmarks/cuda_bandwidth.py
"""
from __future__ import annotations

import json
import statistics
import sys

import torch
import torch.nn.functional as F

from methods import kernels

SHAPES = [(4096, 4096), (11008, 4096), (4096, 11008)]  # (N out, K in), Llama-7B q/up/down


def cuda_median_ms(fn, repeats: int = 20, warmup: int = 3) -> float:
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


def copy_bandwidth_gbs() -> float:
    x = torch.empty(2 * 1024**3, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    ms = cuda_median_ms(lambda: y.copy_(x), repeats=10)
    return 2 * x.numel() / (ms * 1e-3) / 1e9


def main() -> None:
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    assert kernels.extension_available(), "the icml25 extension is not built (python -m methods.kernels.build)"
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    peak = copy_bandwidth_gbs()
    rows = []
    for n, k in SHAPES:
        g = torch.Generator(device="cpu").manual_seed(0)
        w = torch.randn(n, k, generator=g).cuda()
        one = kernels.quantize_int4_rtn(w, group_size=128)
        n_mats = max(2, -(-4 * l2 // one.nbytes))
        mats = [kernels.quantize_int4_rtn(torch.randn(n, k, device="cuda"), group_size=128) for _ in range(n_mats)]
        q = torch.randint(-7, 8, (n, k), device="cuda", dtype=torch.int8)
        keep = torch.zeros(n, k // 4, 4, dtype=torch.bool, device="cuda")
        keep[..., :2] = True
        q = torch.where(keep.view(n, k), q, torch.zeros_like(q))
        sp = [kernels.pack_sparse24_int4(q, torch.rand(n, k // 128, device="cuda") + 0.1, group_size=128)
              for _ in range(n_mats)]
        dense = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(max(2, -(-4 * l2 // (2 * n * k))))]
        x = torch.randn(1, k, device="cuda")
        xb = x.bfloat16()
        it = {"i": 0}

        def cyc(lst, f):
            def run():
                it["i"] = (it["i"] + 1) % len(lst)
                return f(lst[it["i"]])
            return run

        t_int4 = cuda_median_ms(cyc(mats, lambda m: kernels.int4_linear(x, m)))
        t_sp = cuda_median_ms(cyc(sp, lambda m: kernels.sparse24_int4_linear(x, m)))
        t_bf16 = cuda_median_ms(cyc(dense, lambda m: F.linear(xb, m)))
        for name, t, nbytes in (("int4", t_int4, mats[0].nbytes), ("sparse24_int4", t_sp, sp[0].nbytes),
                                ("torch_bf16", t_bf16, 2 * n * k)):
            gbs = nbytes / (t * 1e-3) / 1e9
            rows.append({"shape": [n, k], "op": name, "ms": t, "bytes": nbytes, "GBps": gbs,
                         "fraction_of_copy": gbs / peak, "working_set_MB": nbytes * (len(mats) if name != "torch_bf16" else len(dense)) / 1e6})
    out = {"device": torch.cuda.get_device_name(0), "L2_MB": l2 / 1e6, "copy_GBps": peak, "rows": rows}
    print(json.dumps(out, indent=1))
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
