"""Kernel benchmarks: the compiled ops (torch.ops.icml25) against torch's own kernels and the references.

    .venv/bin/python benchmarks/kernels.py            # full grid (a few minutes on 2 cores)
    .venv/bin/python benchmarks/kernels.py --quick    # one shape, fewer repetitions (a smoke check)

Prints one table per op family and writes benchmarks/results/kernels.json and kernels.md.
Everything is measured in this one process on this machine: medians of repeated calls after a warm-up,
the memory bandwidth from a large copy (read + write bytes / time), and for every GEMV/GEMM the bytes
it must read (weights + metadata + activations), the effective GB/s and its fraction of that bandwidth.
Ratios are against the baselines of the same run; the machine is shared, so absolute times vary.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import methods.kernels as K  # noqa: E402
from methods.kernels import reference as R  # noqa: E402

LLAMA2_7B = [(4096, 4096), (11008, 4096), (4096, 11008)]  # (N out, K in): q/k/v/o, gate/up, down
BETAS = torch.tensor([4.0, 5.5, 7.0, 18.0]) / 14  # NestQuant's weight betas, divided by q = 14


def median_time(fn, reps: int, warmup: int = 2, budget_s: float = 3.0) -> float:
    """Median wall time of fn() in seconds (stops early once budget_s is spent, at least 3 calls).
    The fastest call is kept in MIN_TIMES[fn] (what the kernel does when no other process interferes)."""
    for _ in range(warmup):
        fn()
    ts = []
    start = time.perf_counter()
    while len(ts) < reps and (len(ts) < 3 or time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    MIN_TIMES[fn] = min(ts)
    return statistics.median(ts)


MIN_TIMES = {}


def copy_bandwidth(mb: int = 512) -> float:
    """GB/s of a large float32 copy (bytes read + written)."""
    a = torch.empty(mb * 2**20 // 4)
    a.normal_()
    b = torch.empty_like(a)
    t = median_time(lambda: b.copy_(a), reps=9)
    return 2 * a.numel() * 4 / t / 1e9


def random_24(n: int, k: int, gen: torch.Generator) -> torch.Tensor:
    q = torch.randint(-8, 8, (n, k), generator=gen)
    top = torch.rand(n, k // 4, 4, generator=gen).topk(2, -1).indices
    keep = torch.zeros(n, k // 4, 4, dtype=torch.bool).scatter(-1, top, True).reshape(n, k)
    return torch.where(keep, q, 0)


def nbytes(*ts) -> int:
    return sum(t.numel() * t.element_size() for t in ts if t is not None)


def bench_linear(shapes, batches, reps, group_size, rank, bw):
    rows = []
    gen = torch.Generator().manual_seed(0)
    for n, k in shapes:
        w = torch.randn(n, k, generator=gen) * 0.02
        wb = w.bfloat16()
        w4 = K.quantize_int4_rtn(w, group_size, symmetric=False)
        q = torch.randint(0, 16, (n, k), dtype=torch.int32, generator=gen)
        t4 = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, 2)
        t4sz = (torch.rand(k // group_size, n, 2, generator=gen) * 0.01).bfloat16()
        s24 = K.pack_sparse24_int4(
            random_24(n, k, gen), torch.rand(n, -(-k // group_size), generator=gen) * 0.01, group_size
        )
        lo_l, lo_r = torch.randn(n, rank, generator=gen) * 0.01, torch.randn(rank, k, generator=gen) * 0.01
        codes, bidx = K.nestquant_encode(w.reshape(n, k // 8, 8) / w.std(), 14, BETAS)
        for m in batches:
            x = torch.randn(m, k, generator=gen)
            xb = x.bfloat16()
            act = nbytes(x) + m * n * 4
            cases = [
                ("torch fp32 linear", lambda: torch.nn.functional.linear(x, w), nbytes(w) + act),
                ("torch bf16 linear", lambda: torch.nn.functional.linear(xb, wb), nbytes(wb) + act // 2),
                (
                    "torch int4 (_weight_int4pack_mm_for_cpu)",
                    lambda: torch.ops.aten._weight_int4pack_mm_for_cpu(xb, t4, group_size, t4sz),
                    nbytes(t4, t4sz) + act // 2,
                ),
                ("icml25 int4_linear", lambda: K.int4_linear(x, w4), w4.nbytes + act),
                ("icml25 sparse24_int4_linear", lambda: K.sparse24_int4_linear(x, s24), s24.nbytes + act),
                (
                    f"icml25 sparse24_int4_linear + low-rank r={rank}",
                    lambda: K.sparse24_int4_linear(x, s24, lo_l, lo_r),
                    s24.nbytes + nbytes(lo_l, lo_r) + act,
                ),
                (
                    "icml25 nestquant_matmul (q=14, 4 betas)",
                    lambda: K.nestquant_matmul(x, codes, bidx, 14, BETAS, (n, k)),
                    nbytes(codes, bidx) + act,
                ),
            ]
            if m == batches[0]:
                cases += [
                    (
                        "reference int4_linear",
                        lambda: R.int4_linear(x, w4.packed, w4.scales, w4.zeros, group_size, k),
                        w4.nbytes + act,
                    ),
                    (
                        "reference sparse24_int4_linear",
                        lambda: R.sparse24_int4_linear(x, s24.values, s24.meta, s24.scales, group_size, k),
                        s24.nbytes + act,
                    ),
                ]
            times = {}
            for name, fn, by in cases:
                r = reps if not name.startswith("reference") else 3
                t = median_time(fn, r)
                times[name] = t
                rows.append(
                    {
                        "op": "linear",
                        "shape": f"{n}x{k}",
                        "batch": m,
                        "method": name,
                        "ms": t * 1e3,
                        "min_ms": MIN_TIMES[fn] * 1e3,
                        "GB/s": by / t / 1e9,
                        "bw_fraction": by / t / 1e9 / bw,
                    }
                )
            base = times
            for r_ in rows[-len(cases) :]:
                r_["x_vs_fp32"] = base["torch fp32 linear"] / (r_["ms"] / 1e3)
                r_["x_vs_torch_int4"] = base["torch int4 (_weight_int4pack_mm_for_cpu)"] / (r_["ms"] / 1e3)
            print_rows(rows[-len(cases) :], f"linear {n}x{k}, batch {m}")
    return rows


def bench_lattice(n_vec, reps):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(n_vec, 8, generator=gen)
    rows = []
    codes, bidx = K.nestquant_encode(x, 14, BETAS)
    cases = [
        ("e8_nearest", lambda: K.e8_nearest(x), lambda: R.e8_nearest(x)),
        (
            "nestquant_encode (q=14, 4 betas)",
            lambda: K.nestquant_encode(x, 14, BETAS),
            lambda: R.nestquant_encode(x, 14, BETAS),
        ),
        (
            "nestquant_decode (q=14)",
            lambda: K.nestquant_decode(codes, bidx, 14, BETAS),
            lambda: R.nestquant_decode(codes, bidx, 14, BETAS),
        ),
    ]
    for name, ours, ref in cases:
        t, tr = median_time(ours, reps), median_time(ref, 3)
        rows.append(
            {
                "op": "lattice",
                "shape": f"{n_vec}x8",
                "method": name,
                "ms": t * 1e3,
                "reference_ms": tr * 1e3,
                "x_vs_reference": tr / t,
                "Mvec/s": n_vec / t / 1e6,
            }
        )
    print_rows(rows, f"E8 / NestQuant, {n_vec} 8-vectors")
    return rows


def bench_attention(contexts, reps, s, bw):
    rows = []
    b, h, d = 1, 32, 128  # Llama-2-7B decode, one sequence
    gen = torch.Generator().manual_seed(2)
    for t in contexts:
        q = torch.randn(b, h, d, generator=gen)
        k = torch.randn(b, h, t, d, generator=gen)
        v = torch.randn(b, h, t, d, generator=gen)
        kv = nbytes(k, v)
        sub = kv * min(1.0, 2 * s / t)
        cases = [
            ("torch SDPA (exact)", lambda: torch.nn.functional.scaled_dot_product_attention(q[:, :, None], k, v), kv),
            ("icml25 decode_attention (exact)", lambda: K.decode_attention(q, k, v, t, 0), kv),
            (f"icml25 decode_attention (sink {s} + window {s})", lambda: K.decode_attention(q, k, v, s, s), sub),
            (
                "icml25 spec_decode_attention (exact + spec + verify)",
                lambda: K.spec_decode_attention(q, k, v, s, s, 0.1),
                kv,
            ),
            ("reference spec_decode_attention", lambda: R.spec_decode_attention(q, k, v, s, s, 0.1, d**-0.5), kv),
        ]
        block = []
        for name, fn, by in cases:
            tm = median_time(fn, reps if not name.startswith("reference") else 3)
            block.append(
                {
                    "op": "attention",
                    "shape": f"B{b} H{h} T{t} D{d}",
                    "method": name,
                    "ms": tm * 1e3,
                    "min_ms": MIN_TIMES[fn] * 1e3,
                    "GB/s": by / tm / 1e9,
                    "bw_fraction": by / tm / 1e9 / bw,
                }
            )
        exact = block[1]["ms"]
        for r_ in block:
            r_["cost_vs_exact"] = r_["ms"] / exact
        block[2]["ideal_2S_over_n"] = 2 * s / t
        print_rows(block, f"decode attention, context {t} (2S/n = {2 * s / t:.4f})")
        rows += block
        del k, v
    return rows


LINES: list[str] = []  # every printed table, also written as Markdown next to the JSON


def emit(line: str = "") -> None:
    print(line)
    LINES.append(line)


def print_rows(rows, title):
    keys = [k for k in rows[0] if k not in ("op", "shape")]
    for r in rows[1:]:
        keys += [k for k in r if k not in keys and k not in ("op", "shape")]
    emit()
    emit(f"### {title}")
    emit()
    emit("| " + " | ".join(keys) + " |")
    emit("|" + "---|" * len(keys))
    for r in rows:
        cells = [f"{r[k]:.3g}" if isinstance(r.get(k), float) else str(r.get(k, "")) for k in keys]
        emit("| " + " | ".join(cells) + " |")
    sys.stdout.flush()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one shape, batch 1 and 8, context 4K, fewer repetitions")
    ap.add_argument("--reps", type=int, default=25)
    ap.add_argument("--group-size", type=int, default=128)
    ap.add_argument("--rank", type=int, default=64, help="low-rank adapter rank of the fused SLiM term")
    ap.add_argument("--window", type=int, default=128, help="S: sink and window size of the speculative attention")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's, all cores)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "kernels.json")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if not K.extension_available():
        raise SystemExit("the compiled extension is not built: run `.venv/bin/python -m methods.kernels.build` first")
    shapes, batches, contexts, n_vec = LLAMA2_7B, [1, 8, 32], [4096, 16384, 32768], 2**18
    if args.quick:
        shapes, batches, contexts, n_vec, args.reps = LLAMA2_7B[:1], [1, 8], [4096], 2**15, 7
    torch.manual_seed(0)
    bw = copy_bandwidth()
    info = {
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "copy_bandwidth_GBps": bw,
        "group_size": args.group_size,
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average": list(os.getloadavg()),
    }
    emit(f"# Kernel benchmarks ({info['utc']})")
    emit()
    emit(
        f"threads {info['threads']}, {info['cpu_capability']}, torch {info['torch']}, copy bandwidth {bw:.1f} GB/s "
        f"(read + write), load average {info['load_average'][0]:.2f}; ms = median, min_ms = fastest call"
    )
    rows = bench_linear(shapes, batches, args.reps, args.group_size, args.rank, bw)
    rows += bench_lattice(n_vec, args.reps)
    rows += bench_attention(contexts, max(5, args.reps // 3), args.window, bw)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(
        json.dumps(
            {"info": info, "rows": rows},
            indent=1,
            default=lambda o: None if isinstance(o, float) and math.isnan(o) else o,
        )
    )
    tmp.replace(args.out)
    md = args.out.with_suffix(".md")
    md.write_text("\n".join(LINES) + "\n")
    print(f"\nwrote {args.out} and {md}")


if __name__ == "__main__":
    main()
