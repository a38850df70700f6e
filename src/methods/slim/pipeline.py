"""What each step of the SLiM DAG does (workflow/rules/slim.smk); one function per script.

- `lm_ladder`: the quality ladder on the shared small Llama for one calibration seed: perplexity and
  layer output errors of every recipe (dense -> Wanda 2:4 + absmax 4-bit -> + SLiM-Quant -> + Naive-LoRA
  -> + SLiM-LoRA -> + PEFT, and the extra recipes).
- `minilm_ladder`: the same recipes on all-MiniLM-L6-v2: embedding fidelity to the dense model and
  WordSim-353 / SimLex-999 Spearman.
- `speed`: per-layer times at LLaMA-2-7B shapes, decode tokens/s of the small Llama, memory ratios.
- `figures`, `write_paper_claims`.
"""
from __future__ import annotations

import copy
import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, set_seed, write_json
from methods.common.plotting import new_figure, save_figure

from . import speed as speed_mod
from .compress import Recipe, compress_model, layer_errors, recipe_dict
from .peft import finetune_adapters, quantize_adapters

DECLARATION = Path(__file__).with_name("claims.yaml")
DENSE = "dense"


def _mean_errors(errors: dict[str, dict[str, float]]) -> dict[str, float]:
    return {key: float(np.mean([e[key] for e in errors.values()])) for key in ("output_error", "weighted_error")}


def _recipes(recipes: dict, names: list[str]) -> dict[str, Recipe]:
    unknown = [n for n in names if n not in recipes]
    if unknown:
        raise ValueError(f"config slim.ladder / slim.extras: {unknown} are not in slim.recipes {sorted(recipes)}")
    return {n: Recipe.from_dict(dict(recipes[n])) for n in names}


def _compress_and_tune(dense, recipe: Recipe, calib, held_out, peft: dict, loss_fn, n_examples: int, seed: int,
                       skip: tuple[str, ...]) -> tuple[torch.nn.Module, dict, list[float]]:
    model = copy.deepcopy(dense)
    errors = compress_model(model, recipe, calib, held_out=held_out, skip=skip)
    losses = []
    if recipe.peft:
        losses = finetune_adapters(model, n_examples, loss_fn, steps=peft["steps"], lr=peft["lr"],
                                   batch_size=peft["batch_size"], seed=seed)
    if recipe.peft and recipe.adapter_bits is not None:
        quantize_adapters(model, recipe.adapter_bits, recipe.adapter_group_size)
    if recipe.peft:  # the adapters moved: measure the layers as they now are
        errors = layer_errors(model, dense, held_out)
    return model, errors, losses


# --- the small Llama ------------------------------------------------------------------------------

def lm_ladder(model_dir: str, tokens: str, recipes: dict, names: list[str], seed: int, calibration: dict,
              evaluation: dict, peft: dict, threads: int, out_json: str) -> None:
    """Every recipe of `names` on the small Llama with calibration seed `seed` -> perplexities and errors."""
    from methods.common.lm import (calibration_windows, capture_linear_inputs, load_causal_lm,
                                   load_token_splits, perplexity)

    torch.set_num_threads(threads)
    set_seed(seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"  # full scale: the GPU the rule asks for
    dense, _ = load_causal_lm(model_dir, device=device)
    splits = load_token_splits(tokens)
    calib_ids = calibration_windows(splits["train"], calibration["n_windows"], calibration["seq_len"], seed)
    held_ids = calibration_windows(splits["validation"], calibration["n_heldout"], calibration["seq_len"], 10_000)
    calib = capture_linear_inputs(dense, calib_ids)
    held_out = capture_linear_inputs(dense, held_ids)
    ppl = lambda m: perplexity(m, splits["test"], evaluation["seq_len"], evaluation["batch_size"],  # noqa: E731
                               evaluation["max_windows"])

    def lm_loss(model, idx):
        batch = calib_ids[idx].to(device)
        return model(input_ids=batch, labels=batch).loss

    results = {DENSE: {"perplexity": ppl(dense)}}
    log(f"dense perplexity {results[DENSE]['perplexity']:.3f}")
    for name, recipe in _recipes(recipes, names).items():
        t0 = time.perf_counter()
        model, errors, losses = _compress_and_tune(dense, recipe, calib, held_out, peft, lm_loss,
                                                   len(calib_ids), seed, skip=("lm_head",))
        results[name] = {"perplexity": ppl(model), **_mean_errors(errors), "per_layer": errors,
                         "peft_losses": losses, "recipe": recipe_dict(recipe), "seconds": time.perf_counter() - t0}
        log(f"{name}: perplexity {results[name]['perplexity']:.3f}, output error "
            f"{results[name]['output_error']:.4f} ({results[name]['seconds']:.1f} s)")
    write_json(out_json, {"model": "small_llama", "seed": seed, "device": device, "results": results})


# --- MiniLM ---------------------------------------------------------------------------------------

def _encode(tokenizer, sentences: list[str], max_length: int) -> dict[str, torch.Tensor]:
    return dict(tokenizer(sentences, padding="max_length", truncation=True, max_length=max_length,
                          return_tensors="pt"))


def _pooled(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    hidden = model(**batch).last_hidden_state  # (B, T, H)
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return F.normalize((hidden * mask).sum(1) / mask.sum(1).clamp_min(1e-9), dim=-1)


def minilm_ladder(minilm_dir: str, corpus_dir: str, pairs_files: dict[str, str], recipes: dict, names: list[str],
                  seed: int, minilm: dict, peft: dict, threads: int, out_json: str) -> None:
    """Every recipe on all-MiniLM-L6-v2: fidelity of embeddings to the dense model, word-similarity Spearman."""
    from methods.common.lm import (capture_linear_inputs, corpus_sentences, embedding_fidelity, load_minilm,
                                   word_similarity_spearman)

    torch.set_num_threads(threads)
    set_seed(seed)
    dense, tok = load_minilm(minilm_dir)
    calib_sent = corpus_sentences(f"{corpus_dir}/train.txt", minilm["n_calibration"], seed,
                                  key="slim.minilm.n_calibration")
    held_sent = corpus_sentences(f"{corpus_dir}/validation.txt", minilm["n_heldout"], 10_000,
                                 key="slim.minilm.n_heldout")
    eval_sent = corpus_sentences(f"{corpus_dir}/test.txt", minilm["n_eval"], 20_000,
                                 key="slim.minilm.n_eval")
    calib_enc = _encode(tok, calib_sent, minilm["max_length"])
    batches = lambda enc: [{k: v[i:i + 32] for k, v in enc.items()} for i in range(0, len(enc["input_ids"]), 32)]  # noqa: E731
    calib = capture_linear_inputs(dense, batches(calib_enc))
    held_out = capture_linear_inputs(dense, batches(_encode(tok, held_sent, minilm["max_length"])))
    with torch.no_grad():
        teacher = _pooled(dense, calib_enc)

    def distill_loss(model, idx):
        batch = {k: v[idx] for k, v in calib_enc.items()}
        return (1 - (_pooled(model, batch) * teacher[idx]).sum(-1)).mean()

    def quality(model):
        out = {"fidelity": embedding_fidelity(model, dense, tok, eval_sent)}
        for key, path in pairs_files.items():
            out[key] = word_similarity_spearman(model, tok, path)
        return out

    results = {DENSE: quality(dense)}
    for name, recipe in _recipes(recipes, names).items():
        t0 = time.perf_counter()
        model, errors, losses = _compress_and_tune(dense, recipe, calib, held_out, peft, distill_loss,
                                                   len(calib_sent), seed, skip=("pooler",))
        results[name] = {**quality(model), **_mean_errors(errors), "per_layer": errors, "peft_losses": losses,
                         "recipe": recipe_dict(recipe), "seconds": time.perf_counter() - t0}
        log(f"{name}: fidelity {results[name]['fidelity']:.4f}, output error {results[name]['output_error']:.4f}")
    write_json(out_json, {"model": "minilm", "seed": seed, "results": results})


# --- speed and memory -----------------------------------------------------------------------------

# Formats of the end-to-end decode: dense fp32 / bf16, torch's int4 kernel, our int4 kernel, SLiM's 2:4 + int4
# base alone and with its rank-r adapters (both through our 2:4 + int4 kernel).
DECODE_FORMATS = ("dense_fp32", "dense_bf16", "torch_int4", "k1_int4", "slim_2_4_int4", "slim")


def speed(model_dir: str, shapes: list[list[int]], batch_sizes: list[int], rank_ratio: float, repeats: int,
          decode: dict, memory: dict, threads: int, out_json: str) -> None:
    """Per-layer times at the configured shapes, decode tokens/s of the small Llama, memory ratios."""
    from methods import kernels
    from methods.common.lm import load_causal_lm

    torch.set_num_threads(threads)
    layers = []
    for n, k in shapes:
        for m in batch_sizes:
            t = speed_mod.layer_speed(n, k, m, rank_ratio, repeats)
            layers.append({"n": n, "k": k, "m": m, "seconds": t})
            log(f"layer {n}x{k}, M={m}: " + ", ".join(f"{f} {s * 1e3:.3f} ms" for f, s in t.items()))
    model, _ = load_causal_lm(model_dir)
    by_batch = {}
    for b in decode.get("batch_sizes", [1]):
        prompt = torch.randint(1, model.config.vocab_size, (b, decode["prompt_len"]),
                               generator=torch.Generator().manual_seed(0))
        by_batch[str(b)] = {}
        for fmt in DECODE_FORMATS:
            m = speed_mod.model_in_format(model, fmt, rank_ratio)
            by_batch[str(b)][fmt] = speed_mod.decode_speed(m, prompt, decode["new_tokens"], decode["repeats"])
            log(f"decode batch {b}, {fmt}: {by_batch[str(b)][fmt]:.1f} tokens/s")
    tokens_per_s = by_batch[str(min(decode.get("batch_sizes", [1])))]
    cfg = model.config
    kv = cfg.num_key_value_heads * (cfg.hidden_size // cfg.num_attention_heads)
    small_shapes = speed_mod.llama_linear_shapes(cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers, kv)
    small_other = sum(p.numel() for p in model.parameters()) - sum(n * k for n, k in small_shapes)
    big = memory["reference_model"]
    big_shapes = speed_mod.llama_linear_shapes(big["hidden"], big["intermediate"], big["layers"])
    big_other = 2 * big["vocab"] * big["hidden"] + (2 * big["layers"] + 1) * big["hidden"]
    mem_args = (rank_ratio, memory["adapter_bits"], memory["adapter_group_size"])
    write_json(out_json, {
        "device": "cpu", "threads": threads, "compiled_kernels": kernels.extension_available(),
        "rank_ratio": rank_ratio, "layers": layers, "decode_tokens_per_s": tokens_per_s,
        "decode_tokens_per_s_by_batch": by_batch, "kernels_cpu_vnni": kernels.cpu_vnni_enabled(),
        "memory_small": speed_mod.memory_bytes(small_shapes, *mem_args, small_other),
        "memory_reference": {"model": big["name"], **speed_mod.memory_bytes(big_shapes, *mem_args, big_other)},
    })


# --- figures --------------------------------------------------------------------------------------

def _load_runs(files: list[str]) -> list[dict]:
    return [read_json(f)["results"] for f in files]


def _num(v) -> float:
    """A measured value read back from JSON (null = not measured, e.g. an undefined correlation)."""
    return math.nan if v is None else float(v)


def ladder_figure(lm_files: list[str], minilm_files: list[str], ladder: list[str], out_png: str) -> None:
    """Perplexity and MiniLM fidelity along the ladder (mean and per seed), plus the mean layer output error."""
    lm, mini = _load_runs(lm_files), _load_runs(minilm_files)
    fig, axes = new_figure(1, 3, width=13, height=3.8)
    rungs = [DENSE] + ladder
    x = np.arange(len(rungs))
    for ax, runs, key, label in ((axes[0], lm, "perplexity", "small Llama test perplexity"),
                                 (axes[1], mini, "fidelity", "MiniLM embedding cosine to dense")):
        vals = np.array([[r[n][key] for n in rungs] for r in runs])
        for v in vals:
            ax.plot(x, v, color="0.7", lw=0.8)
        ax.plot(x, vals.mean(0), "o-", color="C0")
        ax.set_title(label)
        ax.set_xticks(x, rungs, rotation=35, ha="right")
    for runs, name, color in ((lm, "small Llama", "C1"), (mini, "MiniLM", "C2")):
        vals = np.array([[r[n]["output_error"] for n in ladder] for r in runs])
        axes[2].semilogy(x[1:], vals.mean(0), "o-", color=color, label=name)
    axes[2].set_xticks(x[1:], ladder, rotation=35, ha="right")
    axes[2].set_title("mean layer output error (held-out)")
    axes[2].legend()
    save_figure(fig, out_png)


def speed_figure(speed_json: str, out_png: str) -> None:
    """Speedup over dense fp32 per layer shape and batch, and decode tokens/s per format."""
    s = read_json(speed_json)
    fig, axes = new_figure(1, 2, width=11, height=3.8)
    formats = [f for f in s["layers"][0]["seconds"] if f != "dense_fp32"]
    labels = [f"{e['n']}x{e['k']}\nM={e['m']}" for e in s["layers"]]
    x = np.arange(len(labels))
    width = 0.8 / len(formats)
    for i, f in enumerate(formats):
        ratio = [e["seconds"]["dense_fp32"] / e["seconds"][f] for e in s["layers"]]
        axes[0].bar(x + i * width, ratio, width, label=f)
    axes[0].axhline(1, color="k", lw=0.8)
    axes[0].set_yscale("log")
    axes[0].set_xticks(x + 0.4 - width / 2, labels, fontsize=7)
    axes[0].set_title(f"speedup over dense fp32 (CPU, {s['threads']} threads)")
    axes[0].legend(fontsize=7)
    by_batch = s.get("decode_tokens_per_s_by_batch") or {"1": s["decode_tokens_per_s"]}
    fmts = list(next(iter(by_batch.values())))
    x = np.arange(len(fmts))
    width = 0.8 / len(by_batch)
    for i, (b, tps) in enumerate(by_batch.items()):
        axes[1].bar(x + i * width, [tps[f] for f in fmts], width, label=f"batch {b}")
    axes[1].set_xticks(x + 0.4 - width / 2, fmts, fontsize=7, rotation=20)
    axes[1].set_yscale("log")
    axes[1].legend(fontsize=7)
    axes[1].set_title("small Llama greedy decode, tokens/s (CPU)")
    save_figure(fig, out_png)


# --- claims ---------------------------------------------------------------------------------------

def claims_metrics(lm_files: list[str], minilm_files: list[str], speed_json: str, speed_shape: list[int]) -> dict:
    """Flat {metric: list over seeds or scalar} read by the criteria of claims.yaml."""
    lm, mini = _load_runs(lm_files), _load_runs(minilm_files)
    measured = {}
    for runs, prefix, key in ((lm, "lm", "perplexity"), (mini, "minilm", "fidelity")):
        for name in runs[0]:
            measured[f"{prefix}_{key}_{name}"] = [_num(r[name][key]) for r in runs]
            if name != DENSE:
                measured[f"{prefix}_error_{name}"] = [_num(r[name]["output_error"]) for r in runs]
    for name in mini[0]:
        for key in ("wordsim353", "simlex999"):
            if key in mini[0][name]:
                measured[f"minilm_{key}_{name}"] = [_num(r[name][key]) for r in mini]
    s = read_json(speed_json)
    n, k = speed_shape
    for e in s["layers"]:
        if (e["n"], e["k"]) == (n, k):
            t = e["seconds"]
            measured[f"layer_speedup_m{e['m']}"] = t["dense_fp32"] / t["slim_2_4_int4_lora"]
            measured[f"layer_speedup_nolora_m{e['m']}"] = t["dense_fp32"] / t["slim_2_4_int4"]
            measured[f"layer_speedup_vs_bf16_m{e['m']}"] = t["dense_bf16"] / t["slim_2_4_int4_lora"]
    tps = s["decode_tokens_per_s"]
    measured["decode_speedup_vs_fp32"] = tps["slim"] / tps["dense_fp32"]
    measured["decode_speedup_vs_bf16"] = tps["slim"] / tps["dense_bf16"]
    measured["memory_ratio_reference"] = s["memory_reference"]["ratio"]
    measured["memory_ratio_small"] = s["memory_small"]["ratio"]
    measured["compiled_kernels"] = float(s["compiled_kernels"])
    return measured


def write_paper_claims(lm_files: list[str], minilm_files: list[str], speed_json: str, speed_shape: list[int],
                       scale: str, claims_path: str, summary_path: str) -> None:
    measured = claims_metrics(lm_files, minilm_files, speed_json, speed_shape)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    summary = {k: {"mean": float(np.mean(v)), "values": v} if isinstance(v, list) else v for k, v in measured.items()}
    write_json(summary_path, summary)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
