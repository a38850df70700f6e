"""Step banyan_minilm: all-MiniLM-L6-v2 (pretrained, shared rule lm_minilm; not trained here) scored on
the same sentence and word pairs as the trained variants, an upper reference; and the count bag of words
(`bow_scores`, keys bow_*), the claims' trivial null that needs no training."""

from __future__ import annotations

import math

import numpy as np
import torch

from methods.common.io import load_torch, log, write_json
from methods.common.lm.minilm import embed, load_minilm, spearman

from .data import check_data, draw_for, encode_texts
from .train import covered_pairs


def minilm_job(
    data_path: str,
    model_dir: str,
    max_length: int,
    min_word_pairs: int,
    seeds: list[int],
    threads: int,
    out_json: str,
    device: torch.device | str = "cpu",
) -> None:
    """Step banyan_minilm: the pretrained all-MiniLM-L6-v2 on the same pairs as each seed (an upper
    reference, not trained here), on `device` (the job's); every value is a list over seeds."""
    torch.set_num_threads(threads)
    data = check_data(load_torch(data_path), data_path, seeds)
    model, tok = load_minilm(model_dir, device)
    per_seed = [
        {**_minilm_scores(draw_for(data, s), model, tok, max_length, min_word_pairs), **bow_scores(draw_for(data, s))}
        for s in seeds
    ]
    write_json(out_json, {k: [r[k] for r in per_seed] for k in per_seed[0]})


def bow_vectors(sentences: list[torch.Tensor], vocab_size: int) -> torch.Tensor:
    """Token-count vectors of token-id sentences: (B, vocab_size) float64."""
    out = torch.zeros(len(sentences), vocab_size, dtype=torch.float64)
    for i, s in enumerate(sentences):
        out[i].index_add_(0, s, torch.ones(len(s), dtype=torch.float64))
    return out


def bow_scores(data: dict) -> dict:
    """The claims' trivial null: cosine of the two sentences' token-count vectors (a bag of words with no
    training and no parameters) against gold, Spearman rho per sentence set and their mean; keys bow_*."""
    out = {}
    for name, s in data["sentence_sets"].items():
        a = bow_vectors(encode_texts(s["a"], data["vocab"]), len(data["vocab"]))
        b = bow_vectors(encode_texts(s["b"], data["vocab"]), len(data["vocab"]))
        out[f"bow_sts_{name}"] = spearman(torch.nn.functional.cosine_similarity(a, b, dim=-1).numpy(), s["gold"])
        log(f"bag of words sts_{name}: {out[f'bow_sts_{name}']:.4f}")
    out["bow_sts_mean"] = float(np.mean([out[f"bow_sts_{n}"] for n in data["sentence_sets"]]))
    return out


def _minilm_scores(data: dict, model, tok, max_length: int, min_word_pairs: int) -> dict:
    """MiniLM's Spearman rho on one data draw's sentence and word sets."""

    index = {w: i for i, w in enumerate(data["vocab"])}
    out = {}
    for name, s in data["sentence_sets"].items():
        a = embed(model, tok, list(s["a"]), max_length=max_length)
        b = embed(model, tok, list(s["b"]), max_length=max_length)
        out[f"sts_{name}"] = spearman((a * b).sum(-1).cpu().numpy(), s["gold"])
        log(f"minilm sts_{name}: {out[f'sts_{name}']:.4f}")
    used = []
    for name, s in data["word_sets"].items():
        keep = covered_pairs(s, index)  # the pairs the trained models are scored on
        out[f"word_{name}_covered"] = len(keep)
        if len(keep) < 3:
            out[f"word_{name}"] = math.nan
            continue
        a = embed(model, tok, [s["a"][i] for i in keep], max_length=max_length)
        b = embed(model, tok, [s["b"][i] for i in keep], max_length=max_length)
        out[f"word_{name}"] = spearman((a * b).sum(-1).cpu().numpy(), [s["gold"][i] for i in keep])
        used += [name] if len(keep) >= min_word_pairs else []
        log(f"minilm word_{name}: {out[f'word_{name}']:.4f} on {len(keep)} pairs")
    out["sts_mean"] = float(np.mean([out[f"sts_{n}"] for n in data["sentence_sets"]]))
    out["word_mean"] = float(np.mean([out[f"word_{n}"] for n in used])) if used else math.nan
    return out
