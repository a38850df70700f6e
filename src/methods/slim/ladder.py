"""The quality-ladder steps of the SLiM DAG (rules slim_lm_ladder, slim_minilm_ladder), one calibration seed each.

- `lm_ladder`: the quality ladder on the shared causal LM: perplexity and layer output errors of every
  recipe (dense -> Wanda 2:4 + absmax 4-bit -> + SLiM-Quant -> + Naive-LoRA -> + SLiM-LoRA -> + PEFT, and
  the extra recipes).
- `minilm_ladder`: the same recipes on all-MiniLM-L6-v2: embedding fidelity to the dense model and
  WordSim-353 / SimLex-999 Spearman.
Both run on the device the job was given (`methods.common.device.job_device`: the GPU at paper scale).
"""

from __future__ import annotations

import copy
import time
from collections import Counter

import numpy as np
import torch
import torch.nn.functional as F

from methods.common.io import log, set_seed, write_json

from .compress import Recipe, add_output_energies, compress_model, layer_errors, one_shot_key, recipe_dict
from .peft import finetune_adapters, quantize_adapters

DENSE = "dense"  # the rung of the uncompressed model (results.py reads it back under the same name)


def _mean_errors(errors: dict[str, dict[str, float]]) -> dict[str, float]:
    return {key: float(np.mean([e[key] for e in errors.values()])) for key in ("output_error", "weighted_error")}


def _recipes(recipes: dict, names: list[str]) -> dict[str, Recipe]:
    unknown = [n for n in names if n not in recipes]
    if unknown:
        raise ValueError(f"config slim.ladder / slim.extras: {unknown} are not in slim.recipes {sorted(recipes)}")
    return {n: Recipe.from_dict(dict(recipes[n])) for n in names}


def _compress_and_tune(
    dense,
    recipe: Recipe,
    calib,
    held_out,
    peft: dict,
    loss_fn,
    n_examples: int,
    seed: int,
    skip: tuple[str, ...],
    reuse: dict | None = None,
    checkpointing: bool = False,
) -> tuple[torch.nn.Module, dict, list[float]]:
    """Compress a copy of `dense` by `recipe`, then fine-tune its adapters when the recipe says so. `reuse`
    ({one_shot_key: [model, errors, users]}) holds one-shot compressions already made and measured: a PEFT
    recipe whose one-shot rung is there starts from it instead of compressing again (the same model: no step
    is random); the last of its `users` takes the model itself, earlier ones a copy (one model less in memory
    than a copy for every user). `checkpointing`: PEFT recomputes each decoder layer's activations in the
    backward pass instead of keeping them (a transformers model's activation checkpointing: the same
    gradients, a third more compute, a fraction of the memory)."""
    key = one_shot_key(recipe)
    if reuse is not None and key in reuse:
        base, base_errors, users = reuse[key]
        if users > 1:
            reuse[key][2] -= 1
            model = copy.deepcopy(base)
        else:
            model = reuse.pop(key)[0]
        errors = dict(base_errors)
    else:
        model = copy.deepcopy(dense)
        errors = compress_model(model, recipe, calib, held_out=held_out, skip=skip)
    losses = []
    if recipe.peft:
        if checkpointing:
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        losses = finetune_adapters(
            model, n_examples, loss_fn, steps=peft["steps"], lr=peft["lr"], batch_size=peft["batch_size"], seed=seed
        )
        if checkpointing:
            model.activation_checkpointing_disable()
    if recipe.peft and recipe.adapter_bits is not None:
        quantize_adapters(model, recipe.adapter_bits, recipe.adapter_group_size)
    if recipe.peft:  # the adapters moved: measure the layers as they now are
        errors = layer_errors(model, dense, held_out)
    return model, errors, losses


# --- the causal LM ------------------------------------------------------------------------------


def lm_ladder(
    model_dir: str,
    recipes: dict,
    names: list[str],
    seed: int,
    calibration: dict,
    evaluation: dict,
    peft: dict,
    threads: int,
    out_json: str,
    device="cpu",
    tokens: str | None = None,
    wikipedia: dict | None = None,
    model_name: str = "small_llama",
) -> None:
    """Every recipe of `names` on the causal LM with calibration seed `seed` -> perplexities and errors,
    computed on `device` (the job's GPU at paper scale).

    The text is either the token splits of `tokens` (the shared LM's corpus) or, for a pretrained LM with its
    own tokenizer, the Wikipedia articles of `wikipedia` ({"calibration": file, "test": file}): calibration
    windows from the calibration articles, layer errors on windows of their held-out last tenth, perplexity
    on `evaluation.max_windows` windows spread over the test articles (`wikipedia_splits`)."""
    from methods.common.lm import (
        calibration_windows,
        capture_linear_inputs,
        load_causal_lm,
        load_token_splits,
        perplexity,
    )
    from methods.common.lm.wikipedia import wikipedia_splits, window_bos

    if (tokens is None) == (wikipedia is None):
        raise ValueError("lm_ladder: give exactly one of tokens (token splits) and wikipedia (text files)")
    torch.set_num_threads(threads)
    set_seed(seed)
    dense, tokenizer = load_causal_lm(model_dir, device=device)
    max_windows = evaluation["max_windows"]
    if wikipedia is not None:
        splits = wikipedia_splits(
            tokenizer, wikipedia["calibration"], wikipedia["test"], evaluation["seq_len"], max_windows
        )
        max_windows = None  # the test split holds exactly the chosen windows
    else:
        splits = load_token_splits(tokens)
    bos = window_bos(tokenizer)  # Gemma: every window starts with <bos>
    calib_ids = calibration_windows(splits["train"], calibration["n_windows"], calibration["seq_len"], seed, bos)
    held_ids = calibration_windows(splits["validation"], calibration["n_heldout"], calibration["seq_len"], 10_000, bos)
    # float32 statistics (a pretrained LM's 210 Hessians in float64 alone would take 2 GB), 2 windows per
    # forward pass (SmolLM2's logits of 8 windows alone take 0.4 GB)
    calib = capture_linear_inputs(dense, calib_ids, dtype=torch.float32, batch_size=2)
    held_out = capture_linear_inputs(dense, held_ids, dtype=torch.float32, batch_size=2)
    add_output_energies(dense, held_out)
    ppl = lambda m: perplexity(  # noqa: E731
        m, splits["test"], evaluation["seq_len"], evaluation["batch_size"], max_windows
    )

    def lm_loss(model, idx):
        batch = calib_ids[idx].to(device)
        return model(input_ids=batch, labels=batch).loss

    results = {DENSE: {"perplexity": ppl(dense)}}
    log(f"dense perplexity {results[DENSE]['perplexity']:.3f}")
    # the trivial predictors on the same test windows (nulls of the perplexity claims)
    from methods.common.lm.baselines import trivial_perplexities

    trivial = trivial_perplexities(splits, dense.config.vocab_size, evaluation["seq_len"], max_windows)
    log("trivial perplexities: " + ", ".join(f"{k} {v:.2f}" for k, v in trivial.items()))
    chosen = _recipes(recipes, names)
    # one-shot compressions a later PEFT recipe starts from (SLiM-LoRA for SLiM-LoRA + PEFT): kept, not redone
    peft_users = Counter(one_shot_key(r) for r in chosen.values() if r.peft)
    reuse = {}
    for name, recipe in chosen.items():
        t0 = time.perf_counter()
        model, errors, losses = _compress_and_tune(
            dense,
            recipe,
            calib,
            held_out,
            peft,
            lm_loss,
            len(calib_ids),
            seed,
            skip=("lm_head",),
            reuse=reuse,
            checkpointing=True,
        )
        key = one_shot_key(recipe)
        keep = not recipe.peft and peft_users[key] > 0 and key not in reuse
        results[name] = {
            "perplexity": ppl(model),
            **_mean_errors(errors),
            "per_layer": errors,
            "peft_losses": losses,
            "recipe": recipe_dict(recipe),
            "seconds": time.perf_counter() - t0,
        }
        log(
            f"{name}: perplexity {results[name]['perplexity']:.3f}, output error "
            f"{results[name]['output_error']:.4f} ({results[name]['seconds']:.1f} s)"
        )
        if keep:
            reuse[key] = [model, errors, peft_users[key]]
        del model  # one compressed model beside the dense one (SmolLM2: 0.5 GB each)
    write_json(
        out_json,
        {"model": model_name, "seed": seed, "device": str(device), "results": results, "trivial": trivial},
    )


# --- MiniLM ---------------------------------------------------------------------------------------


def _encode(tokenizer, sentences: list[str], max_length: int) -> dict[str, torch.Tensor]:
    return dict(tokenizer(sentences, padding="max_length", truncation=True, max_length=max_length, return_tensors="pt"))


def _pooled(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    hidden = model(**batch).last_hidden_state  # (B, T, H)
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return F.normalize((hidden * mask).sum(1) / mask.sum(1).clamp_min(1e-9), dim=-1)


def minilm_ladder(
    minilm_dir: str,
    corpus_dir: str,
    pairs_files: dict[str, str],
    recipes: dict,
    names: list[str],
    seed: int,
    minilm: dict,
    peft: dict,
    threads: int,
    out_json: str,
    device="cpu",
) -> None:
    """Every recipe on all-MiniLM-L6-v2: fidelity of embeddings to the dense model, word-similarity Spearman,
    computed on `device` (the job's GPU at paper scale)."""
    from methods.common.lm import (
        capture_linear_inputs,
        corpus_sentences,
        embed,
        embedding_fidelity,
        load_minilm,
        mean_embedding_fidelity,
        word_similarity_spearman,
    )

    torch.set_num_threads(threads)
    set_seed(seed)
    dense, tok = load_minilm(minilm_dir, device=device)
    calib_sent = corpus_sentences(
        f"{corpus_dir}/train.txt", minilm["n_calibration"], seed, key="slim.minilm.n_calibration"
    )
    held_sent = corpus_sentences(
        f"{corpus_dir}/validation.txt", minilm["n_heldout"], 10_000, key="slim.minilm.n_heldout"
    )
    eval_sent = corpus_sentences(f"{corpus_dir}/test.txt", minilm["n_eval"], 20_000, key="slim.minilm.n_eval")
    calib_enc = {k: v.to(device) for k, v in _encode(tok, calib_sent, minilm["max_length"]).items()}
    batches = lambda enc: [
        {k: v[i : i + 32] for k, v in enc.items()}  # noqa: E731
        for i in range(0, len(enc["input_ids"]), 32)
    ]
    calib = capture_linear_inputs(dense, batches(calib_enc))
    held_out = capture_linear_inputs(dense, batches(_encode(tok, held_sent, minilm["max_length"])))
    add_output_energies(dense, held_out, skip=("pooler",))
    with torch.no_grad():
        teacher = _pooled(dense, calib_enc)

    def distill_loss(model, idx):
        batch = {k: v[idx] for k, v in calib_enc.items()}
        return (1 - (_pooled(model, batch) * teacher[idx]).sum(-1)).mean()

    reference = embed(dense, tok, eval_sent)  # the dense embeddings every rung's fidelity reads

    def quality(model):
        out = {"fidelity": embedding_fidelity(model, reference, tok, eval_sent)}
        for key, path in pairs_files.items():
            out[key] = word_similarity_spearman(model, tok, path)
        return out

    results = {DENSE: quality(dense)}
    # the constant-embedding predictor (the mean of the calibration sentences' dense embeddings): a null
    trivial = {"fidelity_mean": mean_embedding_fidelity(dense, tok, calib_sent, eval_sent)}
    log(f"constant (mean) embedding fidelity {trivial['fidelity_mean']:.4f}")
    for name, recipe in _recipes(recipes, names).items():
        t0 = time.perf_counter()
        model, errors, losses = _compress_and_tune(
            dense, recipe, calib, held_out, peft, distill_loss, len(calib_sent), seed, skip=("pooler",)
        )
        results[name] = {
            **quality(model),
            **_mean_errors(errors),
            "per_layer": errors,
            "peft_losses": losses,
            "recipe": recipe_dict(recipe),
            "seconds": time.perf_counter() - t0,
        }
        log(f"{name}: fidelity {results[name]['fidelity']:.4f}, output error {results[name]['output_error']:.4f}")
    write_json(
        out_json, {"model": "minilm", "seed": seed, "device": str(device), "results": results, "trivial": trivial}
    )
