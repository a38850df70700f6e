"""Decode-realistic CPU benchmark of the int4 and 2:4+int4 linear ops: weights streamed from DRAM.

    .venv/bin/python benchmarks/decode_bandwidth.py              # Llama-7B shapes, batch 1..32, 1 and 2 threads
    .venv/bin/python benchmarks/decode_bandwidth.py --quick      # one shape, batch 1 and 8 (a smoke check)

benchmarks/kernels.py multiplies one matrix again and again, so an 8 MB int4 matrix stays in the L3 cache.
Decoding a model reads every layer's weights once per token, from DRAM. Here each timed pass cycles
through enough distinct copies of a matrix (per format) that the pass reads >= 4x the last-level cache,
as a layer stack does, and the time per matrix is the pass time / copies. In the same process:

- read bandwidth: a STREAM-like sum over a buffer >= 8x the LLC (bytes read / time), per thread count at the
  start, and again in every repeat next to the kernels (a shared machine's bandwidth drifts);
- each kernel's effective GB/s = bytes it must read (packed weights + metadata + scales + activations)
  / time, and its fraction of the read bandwidth measured in the same repeat (median over repeats);
- ratios against torch's own int4 CPU kernel (aten._weight_int4pack_mm_for_cpu, group 128, bf16
  activations), measured in the same pass loop, same process.

The CPU model and the flags that select our paths (AVX-512 VNNI / BF16, AMX) are printed first and written with
the results, and each row names the plan our op took (methods.kernels.tuning: path and weight rows per tile, tuned
on first use of a shape and batch bucket during the warm-up pass, so never timed; ICML25_CPU_TUNING=off in the
environment keeps the built-in choice).

All figures are medians over repeated passes; the formats take turns within each repeat and a speed-up is the
median over repeats of the per-repeat ratio, so that a slow spell of a shared machine hits all formats alike.
The load average at start and end is written with the results. Results: benchmarks/results/decode_bandwidth.{csv,md}.
"""

from __future__ import annotations

import argparse
import csv
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
from methods.common.io import atomic_path  # noqa: E402
from methods.kernels import tuning  # noqa: E402

LLAMA_7B = [(4096, 4096), (11008, 4096), (4096, 11008)]  # (N out, K in): q/k/v/o, gate/up, down
GS = 128


def llc_bytes() -> int:
    """Size of the largest cache level (sysfs); 32 MiB when unknown."""
    best = 0
    for idx in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            s = (idx / "size").read_text().strip()
        except OSError:
            continue
        mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(s[-1], 1)
        best = max(best, int(s.rstrip("KMG")) * mult)
    return best or 32 * 2**20


def bytes_per_weight(group_size: int = GS) -> dict[str, float]:
    """Exact bytes per weight of each format (payload + metadata + scales / zero points), K a multiple of 128."""
    return {
        # packed nibbles (1/2 B) + float32 scale and float32 zero point per group
        "icml25 int4": 0.5 + 8 / group_size,
        # 2 kept nibbles per 4 weights (1/4 B) + 2-bit positions of the 2 slots (1/8 B) + float32 scale per group
        "icml25 2:4+int4": 0.25 + 0.125 + 4 / group_size,
        # torch: packed nibbles (1/2 B) + bf16 (scale, zero) pair per group
        "torch int4": 0.5 + 4 / group_size,
    }


def read_buffer(llc: int) -> torch.Tensor:
    """A float32 buffer of >= 8x the LLC (and >= 256 MiB), so that a sum over it reads DRAM."""
    a = torch.empty(max(8 * llc, 256 * 2**20) // 4)
    a.normal_()
    return a


def read_gbs(buf: torch.Tensor) -> float:
    """GB/s of one STREAM-like sum over buf (bytes read / time)."""
    t0 = time.perf_counter()
    buf.sum()
    return buf.numel() * 4 / (time.perf_counter() - t0) / 1e9


def read_bandwidth(buf: torch.Tensor, reps: int) -> float:
    """Median GB/s of reps sums over buf."""
    read_gbs(buf)
    return statistics.median(read_gbs(buf) for _ in range(reps))


def make_formats(n: int, k: int, working_set: int, gen: torch.Generator):
    """Distinct copies of one random matrix per format, enough copies that each format's copies read >= working_set
    bytes. Values do not change the kernels' speed; the copies only keep the cache from holding the weights."""
    q = torch.randint(0, 16, (n, k), dtype=torch.int32, generator=gen)
    s = torch.rand(n, k // GS, generator=gen) * 0.01 + 1e-3
    i4 = K.pack_int4(q, s, torch.full_like(s, 8.0), GS)
    top = torch.rand(n, k // 4, 4, generator=gen).topk(2, -1).indices
    keep = torch.zeros(n, k // 4, 4, dtype=torch.bool).scatter(-1, top, True).reshape(n, k)
    s24 = K.pack_sparse24_int4(torch.where(keep, q - 8, 0).to(torch.int64), s, GS, mask=keep)
    t4 = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, 2)
    t4sz = torch.stack([s.t(), torch.zeros_like(s.t())], -1).bfloat16().contiguous()  # [K/GS, N, 2]

    def copies(nbytes, clone):
        return [clone() for _ in range(max(2, math.ceil(working_set / nbytes)))]

    def clone_i4():
        return K.Int4Weight(i4.packed.clone(), i4.scales.clone(), i4.zeros.clone(), GS, (n, k))

    def clone_s24():
        return K.Sparse24Int4Weight(s24.values.clone(), s24.meta.clone(), s24.scales.clone(), GS, (n, k))

    t4_bytes = t4.numel() * t4.element_size() + t4sz.numel() * t4sz.element_size()
    return {
        "torch int4": (copies(t4_bytes, lambda: (t4.clone(), t4sz.clone())), t4_bytes),
        "icml25 int4": (copies(i4.nbytes, clone_i4), i4.nbytes),
        "icml25 2:4+int4": (copies(s24.nbytes, clone_s24), s24.nbytes),
    }


def call(fmt: str, w, x: torch.Tensor, xb: torch.Tensor):
    if fmt == "torch int4":
        return torch.ops.aten._weight_int4pack_mm_for_cpu(xb, w[0], GS, w[1])
    if fmt == "icml25 int4":
        return K.int4_linear(x, w)
    return K.sparse24_int4_linear(x, w)


def time_passes(cases: dict, x, xb, reps, buf) -> tuple[dict, list]:
    """Seconds per matrix of each pass over all copies, for every case (name -> (fmt, copies, env)), one warm-up
    pass each, and the read bandwidth (a sum over buf) measured in each repeat. The cases take turns within each
    repeat, so that a slow spell of a shared machine hits all of them alike: ratios and fractions of the bandwidth are
    taken per repeat, then the median."""

    def one(fmt, ws, env):
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)  # e.g. ICML25_CPU_VNNI=0 (read by the op at every call)
        try:
            t0 = time.perf_counter()
            for w in ws:
                call(fmt, w, x, xb)
            return (time.perf_counter() - t0) / len(ws)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    read_gbs(buf)
    for fmt, ws, env in cases.values():
        one(fmt, ws, env)
    out, bw = {name: [] for name in cases}, []
    for _ in range(reps):
        bw.append(read_gbs(buf))
        for name, (fmt, ws, env) in cases.items():
            out[name].append(one(fmt, ws, env))
    return out, bw


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4096x4096 only, batch 1 and 8, 3 passes")
    ap.add_argument("--reps", type=int, default=7, help="timed passes per case (the median is reported)")
    ap.add_argument(
        "--shapes", nargs="+", default=[f"{n}x{k}" for n, k in LLAMA_7B], help="N x K shapes (default: Llama-7B's)"
    )
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--llc-factor", type=float, default=4.0, help="working set per format, in multiples of the LLC")
    ap.add_argument("--fallback", action="store_true", help="also time the fp32 fallback paths (ICML25_CPU_VNNI=0)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "decode_bandwidth")
    args = ap.parse_args(argv)
    if not K.extension_available():
        sys.exit("methods.kernels: the compiled extension is not built (run `python -m methods.kernels.build`)")
    try:
        shapes = [tuple(int(v) for v in s.lower().split("x")) for s in args.shapes]
        assert all(len(s) == 2 and min(s) > 0 and s[1] % GS == 0 for s in shapes)
    except (ValueError, AssertionError):
        ap.error(f"--shapes: expected NxK with K a multiple of {GS} (e.g. 4096x11008), got {' '.join(args.shapes)}")
    batches, reps = args.batches, args.reps
    if args.quick:
        shapes, batches, reps = LLAMA_7B[:1], [1, 8], 3
    print(f"CPU: {tuning.describe()}", flush=True)
    llc = llc_bytes()
    ws_bytes = int(args.llc_factor * llc)
    load0 = os.getloadavg()
    bpw = bytes_per_weight()
    gen = torch.Generator().manual_seed(0)
    rows, bws = [], {}
    buf = read_buffer(llc)
    for t in args.threads:
        torch.set_num_threads(t)
        bws[t] = read_bandwidth(buf, max(reps, 5))
        print(f"threads {t}: read bandwidth {bws[t]:.1f} GB/s", flush=True)
    for n, k in shapes:
        fmts = make_formats(n, k, ws_bytes, gen)
        for t in args.threads:
            torch.set_num_threads(t)
            for m in batches:
                x = torch.randn(m, k, generator=gen)
                xb = x.bfloat16()
                cases = {}
                for fmt, (ws, nb) in fmts.items():
                    cases[fmt] = (fmt, ws, {})
                    if args.fallback and fmt != "torch int4":
                        cases[fmt + " [fp32 fallback]"] = (fmt, ws, {"ICML25_CPU_VNNI": "0"})
                times, bw = time_passes(cases, x, xb, reps, buf)
                res = {}
                for name, ts in times.items():
                    ws, nb = fmts[cases[name][0]]
                    act = x.numel() * (2 if name == "torch int4" else 4) + m * n * 4
                    ratio = statistics.median(t0 / t for t0, t in zip(times["torch int4"], ts))
                    frac = statistics.median((nb + act) / t / 1e9 / b for t, b in zip(ts, bw))
                    res[name] = (statistics.median(ts), nb + act, len(ws) * nb, ratio, frac)
                for fmt, (sec, by, wsb, ratio, frac) in res.items():
                    gbs = by / sec / 1e9
                    op = "sparse24" if "2:4" in fmt else "int4"
                    path, nr = torch.ops.icml25.cpu_plan(op, n, k, GS, m)
                    if path == "default" and m >= 8 and K.cpu_amx_enabled(hardware=True):
                        path = "default (amx)"  # the built-in choice from 8 rows where the CPU has AMX
                    plan = "" if fmt == "torch int4" else f"{path}/{nr}"
                    rows.append(
                        {
                            "shape": f"{n}x{k}",
                            "threads": t,
                            "batch": m,
                            "method": fmt,
                            "vnni": bool(torch.ops.icml25.cpu_vnni_enabled("2:4" in fmt))
                            and "fallback" not in fmt
                            and fmt != "torch int4",
                            "bytes_per_weight": round(bpw[fmt.split(" [")[0]], 5),
                            "working_set_MiB": round(wsb / 2**20, 1),
                            "ms": round(sec * 1e3, 4),
                            "GB/s": round(gbs, 2),
                            "read_bw_GB/s": round(statistics.median(bw), 2),
                            "bw_fraction": round(frac, 3),
                            "x_vs_torch_int4": round(ratio, 3),
                            "plan": plan if "fallback" not in fmt else "",
                        }
                    )
                    r = rows[-1]
                    print(
                        f"{r['shape']:>10} t={t} m={m:<2} {fmt:<31} {r['ms']:8.3f} ms {r['GB/s']:6.1f} GB/s "
                        f"{r['bw_fraction']:5.2f} of bw  {r['x_vs_torch_int4']:5.2f}x torch int4  {r['plan']}",
                        flush=True,
                    )
        del fmts
    load1 = os.getloadavg()
    write(args.out, rows, bpw, llc, bws, load0, load1, reps)


def write(out: Path, rows, bpw, llc, bws, load0, load1, reps) -> None:
    with atomic_path(out.with_suffix(".csv")) as tmp, open(tmp, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    b_i4, b_s24, b_t4 = bpw["icml25 int4"], bpw["icml25 2:4+int4"], bpw["torch int4"]
    lines = [
        f"# Decode bandwidth: int4 and 2:4+int4 linear with weights streamed from DRAM "
        f"({time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())})",
        "",
        f"{tuning.describe()}; {platform.machine()}, LLC {llc / 2**20:.0f} MiB, torch {torch.__version__}, "
        f"working set per format >= {4 * llc / 2**20:.0f} MiB (distinct copies cycled), {reps} passes, medians; "
        f"load average {load0[0]:.2f} at start, {load1[0]:.2f} at end.",
        "Read bandwidth (a sum over a buffer of >= 8x the LLC) at the start: "
        + ", ".join(f"{t} thread(s) {b:.1f} GB/s" for t, b in bws.items())
        + ". It drifts on a shared machine, so it is also measured in every repeat of every row, next to the kernels: "
        "read_bw is that median and bw_fraction the median over repeats of GB/s / read bandwidth of the same repeat.",
        "",
        "Bytes per weight (group 128, payload + metadata + scales): "
        f"icml25 int4 {b_i4:.5f} (nibbles 0.5 + fp32 scale and zero 8/128); "
        f"icml25 2:4+int4 {b_s24:.5f} (values 0.25 + 2-bit positions 0.125 + fp32 scale 4/128); "
        f"torch int4 {b_t4:.5f} (nibbles 0.5 + bf16 scale and zero 4/128).",
        f"Bandwidth bound on speed-ups: 2:4+int4 vs torch int4 <= {b_t4 / b_s24:.3f}x, vs icml25 int4 <= {b_i4 / b_s24:.3f}x; "
        f"icml25 int4 vs torch int4 <= {b_t4 / b_i4:.3f}x (at equal fractions of the bandwidth).",
        "",
        "plan: the path / weight rows per tile our op took (default/0 = the built-in choice; rows, kmajor, amx).",
        "",
        "| shape | threads | batch | method | VNNI | plan | ms | GB/s | read_bw | bw_fraction | x_vs_torch_int4 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['shape']} | {r['threads']} | {r['batch']} | {r['method']} | {'yes' if r['vnni'] else 'no'} | {r['plan']} | "
            f"{r['ms']:.3f} | {r['GB/s']:.1f} | "
            f"{r['read_bw_GB/s']:.1f} | {r['bw_fraction']:.3f} | {r['x_vs_torch_int4']:.3f} |"
        )
    with atomic_path(out.with_suffix(".md")) as tmp:
        tmp.write_text("\n".join(lines) + "\n")
    print(f"wrote {out.with_suffix('.csv')} and {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
