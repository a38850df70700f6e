"""End-to-end greedy decode on the CPU at Llama-2-7B layer sizes: tokens/s of each weight format, batch 1, 8 and 32.

    .venv/bin/python benchmarks/decode_e2e.py                 # 2 decoder layers of Llama-2-7B's sizes
    .venv/bin/python benchmarks/decode_e2e.py --layers 1 --new-tokens 4 --repeats 2   # a smoke check

SLiM's speed step decodes the project's tiny Llama (hidden 96), which Python and `generate` bound, not the
weight bytes. Here the decoder layers have Llama-2-7B's sizes (hidden 4096, intermediate 11008, 32 heads), so
every decoding step streams each layer's weights from DRAM, as a 7B model does. Weights are random (speed does
not depend on values); the vocabulary is cut to 512 so that the dense fp32 LM head does not dominate. Each
format's linears go through the same wrappers as SLiM's speed step (`methods.slim.speed.model_in_format`):

- dense_fp32 / dense_bf16: torch's dense linears;
- torch_int4: torch's own int4 CPU kernel (aten._weight_int4pack_mm_for_cpu, group 128, bf16 activations);
- compiled_int4: our int4 kernel (group 128, fp32 activations; AVX-512 VNNI where the CPU has it);
- slim_2_4_int4: SLiM's 2:4-sparse + int4 base through our 2:4 kernel (no adapters).

The formats take turns within each repeat (one generate each), so that a slow spell of a shared machine hits
all of them alike; a speed-up is the median over repeats of the per-repeat ratio. The CPU model, the flags that
select our paths and the tuning mode (methods.kernels.tuning; the plans are tuned in the warm-up generation, never
timed) are printed and written with the results. Results:
benchmarks/results/decode_e2e.{json,md}.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
# this folder holds benchmarks/kernels.py, which would shadow the `kernels` package that transformers imports
sys.path = [str(ROOT / "src")] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

from methods import kernels  # noqa: E402
from methods.common.io import atomic_path, write_json  # noqa: E402
from methods.slim import speed as S  # noqa: E402

FORMATS = ("dense_fp32", "dense_bf16", "torch_int4", "compiled_int4", "slim_2_4_int4")
BASELINE = "torch_int4"


def llama_7b_layers(layers: int, vocab: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        hidden_size=4096,
        intermediate_size=11008,
        num_attention_heads=32,
        num_key_value_heads=32,
        num_hidden_layers=layers,
        vocab_size=vocab,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).eval()


def weight_bytes(model) -> int:
    """Bytes of the weights a decoding step reads: every parameter and buffer, and the packed weights the quantized
    wrappers keep as plain attributes (tensors, or the kernels' Int4Weight / Sparse24Int4Weight). The input
    embedding (512 x 4096 fp32, 8 MiB) is counted whole although a step reads one row of it per sequence."""
    total = 0
    for mod in model.modules():
        total += sum(t.nbytes for t in list(mod.parameters(recurse=False)) + list(mod.buffers(recurse=False)))
        total += sum(
            v.nbytes
            for k, v in vars(mod).items()
            if not k.startswith("_") and isinstance(v, (torch.Tensor, kernels.Int4Weight, kernels.Sparse24Int4Weight))
        )
    return total


@torch.no_grad()
def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=2, help="decoder layers of Llama-2-7B's sizes")
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--prompt-len", type=int, default=16)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=5, help="generations per format and batch (the median is reported)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--formats", nargs="+", default=list(FORMATS), choices=FORMATS)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "decode_e2e")
    args = ap.parse_args(argv)
    if not kernels.extension_available():
        sys.exit("methods.kernels: the compiled extension is not built (run `python -m methods.kernels.build`)")
    if BASELINE not in args.formats:
        ap.error(f"--formats: must include {BASELINE} (the speed-ups are taken against it)")
    torch.set_num_threads(args.threads)
    print(f"CPU: {kernels.tuning.describe()}", flush=True)
    load0 = os.getloadavg()
    base = llama_7b_layers(args.layers, 512)
    models, nbytes = {}, {}
    for fmt in args.formats:
        t0 = time.perf_counter()
        models[fmt] = S.model_in_format(base, fmt, rank_ratio=0.0)
        nbytes[fmt] = weight_bytes(models[fmt])
        print(f"{fmt}: built in {time.perf_counter() - t0:.1f} s, {nbytes[fmt] / 2**20:.0f} MiB of weights", flush=True)
    del base
    rows = []
    for b in args.batches:
        prompt = torch.randint(1, 512, (b, args.prompt_len), generator=torch.Generator().manual_seed(b))

        def gen(m):
            t0 = time.perf_counter()
            m.generate(
                prompt, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False, pad_token_id=0
            )
            return time.perf_counter() - t0

        for m in models.values():
            gen(m)  # warm-up
        times = {fmt: [] for fmt in models}
        for _ in range(args.repeats):
            for fmt, m in models.items():
                times[fmt].append(gen(m))
        for fmt, ts in times.items():
            tps = b * args.new_tokens / statistics.median(ts)
            ratio = statistics.median(t0 / t for t0, t in zip(times[BASELINE], ts))
            rows.append(
                {
                    "batch": b,
                    "format": fmt,
                    "tokens_per_s": round(tps, 2),
                    "x_vs_torch_int4": round(ratio, 3),
                    "weight_MiB": round(nbytes[fmt] / 2**20, 1),
                    # a step reads every weight once: bytes per step x steps per second
                    "weight_GB_per_s": round(nbytes[fmt] * tps / b / 1e9, 2),
                }
            )
            r = rows[-1]
            print(
                f"batch {b} {fmt:<14} {r['tokens_per_s']:8.2f} tokens/s  {r['x_vs_torch_int4']:5.2f}x torch int4  "
                f"{r['weight_GB_per_s']:5.1f} GB/s of weights",
                flush=True,
            )
    load1 = os.getloadavg()
    meta = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpu": kernels.tuning.cpu_info()["model"],
        "cpu_flags": kernels.tuning.cpu_info()["flags"],
        "cpu_tuning": kernels.tuning.describe(),
        "machine": platform.machine(),
        "torch": torch.__version__,
        "threads": args.threads,
        "layers": args.layers,
        "hidden": 4096,
        "intermediate": 11008,
        "vocab": 512,
        "prompt_len": args.prompt_len,
        "new_tokens": args.new_tokens,
        "repeats": args.repeats,
        "cpu_vnni": kernels.cpu_vnni_enabled(),
        "load_average": [load0[0], load1[0]],
    }
    write(args.out, meta, rows)


def write(out: Path, meta: dict, rows: list[dict]) -> None:
    write_json(out.with_suffix(".json"), {"meta": meta, "rows": rows})
    lines = [
        f"# End-to-end decode at Llama-2-7B layer sizes ({meta['date']})",
        "",
        f"{meta['cpu_tuning']}; torch {meta['torch']}, {meta['threads']} thread(s); {meta['layers']} decoder layers "
        f"(hidden 4096, intermediate 11008), vocabulary {meta['vocab']}, prompt {meta['prompt_len']}, "
        f"{meta['new_tokens']} new tokens, greedy; medians of {meta['repeats']} generations, formats taking turns; "
        f"load average {meta['load_average'][0]:.2f} at start, {meta['load_average'][1]:.2f} at end.",
        "",
        "| batch | format | tokens/s | x vs torch int4 | weights MiB | weight GB/s |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['batch']} | {r['format']} | {r['tokens_per_s']:.2f} | {r['x_vs_torch_int4']:.2f} | "
            f"{r['weight_MiB']:.0f} | {r['weight_GB_per_s']:.1f} |"
        )
    with atomic_path(out.with_suffix(".md")) as tmp:
        tmp.write_text("\n".join(lines) + "\n")
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
