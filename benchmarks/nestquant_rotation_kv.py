"""Measured effect of NestQuant's rotation construction and KV-cache path on the tiny models (not collected by
pytest; numbers in the nestquant README). Same run, same seeds, every method of the pipeline:

- the shared small Llama, W4 and W4A4KV4 perplexity, kv_cache post_rope (the official code's) and pre_rope;
  its widths (hidden, MLP, head) are powers of two, so the two rotation constructions are the same matrix
  there (checked here, not re-run);
- all-MiniLM-L6-v2 (widths 384 = 12 x 32 and 1536 = 12 x 128), the pipeline's MiniLM setting, rotation
  kronecker (the official code's) and block.

Run from the repository root (-P: benchmarks/kernels.py must not shadow the `kernels` package) after `snakemake --cores 2 nestquant` has built the inputs:
    python -P benchmarks/nestquant_rotation_kv.py [--lm-seeds 0 1 2] [--minilm-seeds 0] [--out results/...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from methods.nestquant.evaluate import lm_eval, minilm_eval
from methods.nestquant.hadamard import hadamard_order


def _metric(path: Path, setting: str | None, method: str, key: str) -> float:
    res = json.loads(path.read_text())["results"]
    return (res[method] if setting is None else res[setting][method])[key]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lm-seeds", type=int, nargs="*", default=[0, 1, 2])
    ap.add_argument("--minilm-seeds", type=int, nargs="*", default=[0])
    ap.add_argument("--out", default="results/nestquant/variants")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lm-model", default="results/lm/model", help="the small Llama's directory (config.json, ...)")
    args = ap.parse_args()
    cfg = yaml.safe_load(Path("config.yaml").read_text())["nestquant"]
    if args.lm_seeds:
        lm_cfg = json.loads((Path(args.lm_model) / "config.json").read_text())
        heads = lm_cfg["num_attention_heads"]
        widths = {lm_cfg["hidden_size"], lm_cfg["intermediate_size"], lm_cfg["hidden_size"] // heads}
        assert all(hadamard_order(w) == 1 for w in widths), (
            f"a width of the small Llama is not a power of two: {widths}"
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for seed in args.lm_seeds:
        for kv in ("post_rope", "pre_rope"):
            path = out / f"lm_{kv}_seed{seed}.json"
            if not path.exists():
                lm_eval(
                    args.lm_model,
                    "results/lm/tokens.safetensors",
                    {**cfg["quant"], "kv_cache": kv},
                    cfg["settings"],
                    cfg["calibration"],
                    cfg["evaluation"],
                    seed,
                    args.threads,
                    str(path),
                )
            rows.append(("lm", kv, seed, path))
    for seed in args.minilm_seeds:
        for rotation in ("kronecker", "block"):
            path = out / f"minilm_{rotation}_seed{seed}.json"
            if not path.exists():
                minilm_eval(
                    "results/lm/all-MiniLM-L6-v2",
                    "results/lm/corpus",
                    {
                        "wordsim353": "results/lm/word_sim/wordsim353.tsv",
                        "simlex999": "results/lm/word_sim/simlex999.txt",
                    },
                    {**cfg["quant"], "rotation": rotation},
                    cfg["minilm"],
                    seed,
                    args.threads,
                    str(path),
                )
            rows.append(("minilm", rotation, seed, path))
    methods = ("rtn", "hadrtn", "hadrtn17", "nestquant", "hadrtn_ldlq", "hadrtn17_ldlq", "nestquant_ldlq")
    print("model variant seed setting " + " ".join(methods))
    for model, variant, seed, path in rows:
        if model == "lm":
            for setting in cfg["settings"]:
                vals = [_metric(path, setting, m, "perplexity") for m in methods]
                print(f"lm {variant} {seed} {setting} " + " ".join(f"{v:.3f}" for v in vals))
        else:
            for key in ("fidelity", "wordsim353", "simlex999"):
                vals = [_metric(path, None, m, key) for m in methods]
                print(f"minilm {variant} {seed} {key} " + " ".join(f"{v:.4f}" for v in vals))


if __name__ == "__main__":
    main()
