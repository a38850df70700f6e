"""What each DAG step of banyan does (one function per script in workflow/scripts/banyan/)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import load_arrays, load_torch, log, read_json, save_arrays, save_torch, write_json

from .model import VARIANTS

DECLARATION = Path(__file__).with_name("claims.yaml")
ABLATIONS = [v for v in VARIANTS if v != "banyan"]


def check_data(data: dict, path: str, seeds: list[int] | None = None) -> dict:
    """The prepared data file has what the training steps read (one draw per seed, or one for all), or the
    error names the file and the fix."""
    need = {"vocab", "train_tokens", "train_offsets", "sentence_sets", "word_sets"}
    if not isinstance(data, dict) or not isinstance(data.get("draws"), dict) or not data["draws"]:
        raise ValueError(f"{path}: not a banyan data file (no 'draws'); delete it and rerun rule banyan_data")
    missing_seeds = [s for s in seeds or [] if "all" not in data["draws"] and str(s) not in data["draws"]]
    if missing_seeds:
        raise ValueError(f"{path}: no data draw for seeds {missing_seeds} (banyan.seeds changed?); "
                         "delete it and rerun rule banyan_data")
    for key, draw in data["draws"].items():
        if not isinstance(draw, dict) or need - set(draw):
            raise ValueError(f"{path}: draw {key} misses {sorted(need - set(draw or {}))}; delete it and rerun "
                             "rule banyan_data")
        if int(draw["train_offsets"][-1]) != len(draw["train_tokens"]):
            raise ValueError(f"{path}: draw {key}: offsets do not match the token tensor (corrupt); delete it and "
                             "rerun banyan_data")
    return data


def data_job(cfg: dict, word_files: dict[str, str], seeds: list[int], out_path: str, out_stats: str) -> None:
    """Step banyan_data: training corpus and evaluation sets, one draw per seed (grammar) or one in all."""
    from .data import prepare

    data = prepare(cfg, word_files, seeds)
    stats = {}
    for key, d in data["draws"].items():
        stats[key] = {"n_train_sentences": len(d["train_offsets"]) - 1, "n_train_tokens": len(d["train_tokens"]),
                      "vocab_size": len(d["vocab"]),
                      "sentence_sets": {k: len(v["gold"]) for k, v in d["sentence_sets"].items()},
                      "word_sets": {k: len(v["gold"]) for k, v in d["word_sets"].items()}}
        log(f"banyan data draw {key}: {stats[key]}")
    save_torch(out_path, data)
    write_json(out_stats, stats)






def train_job(variant: str, data_path: str, model_cfg: dict, train_cfg: dict, seeds: list[int],
              min_word_pairs: int, threads: int, out_json: str, out_npz: str) -> None:
    """Step banyan_train: one variant (Banyan or an ablation) trained and evaluated on every seed (each
    seed on its own data draw)."""
    from .train import run_variant

    torch.set_num_threads(threads)
    data = check_data(load_torch(data_path), data_path, seeds)
    log(f"banyan {variant}: model {model_cfg}, train {train_cfg}, seeds {seeds}")
    metrics, arrays = run_variant(variant, data, model_cfg, train_cfg, seeds, min_word_pairs)
    save_arrays(out_npz, arrays, dtype=np.float64)
    write_json(out_json, {**metrics, "model": model_cfg, "train": train_cfg})


def minilm_job(data_path: str, model_dir: str, max_length: int, min_word_pairs: int, seeds: list[int],
               threads: int, out_json: str) -> None:
    """Step banyan_minilm: the pretrained all-MiniLM-L6-v2 on the same pairs as each seed (an upper
    reference, not trained here); every value is a list over seeds."""
    from methods.common.lm.minilm import load_minilm

    from .data import draw_for

    torch.set_num_threads(threads)
    data = check_data(load_torch(data_path), data_path, seeds)
    model, tok = load_minilm(model_dir)
    per_seed = [_minilm_scores(draw_for(data, s), model, tok, max_length, min_word_pairs) for s in seeds]
    write_json(out_json, {k: [r[k] for r in per_seed] for k in per_seed[0]})


def _minilm_scores(data: dict, model, tok, max_length: int, min_word_pairs: int) -> dict:
    """MiniLM's Spearman rho on one data draw's sentence and word sets."""
    from methods.common.lm.minilm import embed, spearman

    from .train import covered_pairs

    index = {w: i for i, w in enumerate(data["vocab"])}
    out = {}
    for name, s in data["sentence_sets"].items():
        a = embed(model, tok, list(s["a"]), max_length=max_length)
        b = embed(model, tok, list(s["b"]), max_length=max_length)
        out[f"sts_{name}"] = spearman((a * b).sum(-1).numpy(), s["gold"])
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
        out[f"word_{name}"] = spearman((a * b).sum(-1).numpy(), [s["gold"][i] for i in keep])
        used += [name] if len(keep) >= min_word_pairs else []
        log(f"minilm word_{name}: {out[f'word_{name}']:.4f} on {len(keep)} pairs")
    out["sts_mean"] = float(np.mean([out[f"sts_{n}"] for n in data["sentence_sets"]]))
    out["word_mean"] = float(np.mean([out[f"word_{n}"] for n in used])) if used else math.nan
    return out


def figures_job(metrics_json: dict[str, str], arrays_npz: dict[str, str], minilm_json: str, out_scores: str,
                out_curves: str) -> None:
    """Step banyan_figures."""
    from .figures import loss_figure, scores_figure

    metrics = {v: read_json(p) for v, p in metrics_json.items()}
    scores_figure(metrics, read_json(minilm_json), out_scores)
    loss_figure({v: load_arrays(p) for v, p in arrays_npz.items()}, out_curves)


def _nan_for_null(value):
    if isinstance(value, list):
        return [math.nan if v is None else v for v in value]
    return math.nan if value is None else value


def claims_metrics(metrics_json: dict[str, str], minilm_json: str) -> dict:
    """Flat {metric_variant: value or per-seed list} read by claims.yaml's criteria."""
    out = {}
    for variant, path in metrics_json.items():
        m = read_json(path)
        for key, val in m.items():
            if key.startswith(("sts_", "word_", "loss_final", "nodes_per_batch", "non_embedding_parameters")):
                out[f"{key}_{variant}"] = val
    for key, val in read_json(minilm_json).items():
        out[f"{key}_minilm"] = val
    return {k: _nan_for_null(v) for k, v in out.items()}


def write_paper_claims(metrics_json: dict[str, str], minilm_json: str, scale: str, claims_path: str,
                       summary_path: str) -> None:
    """Step banyan_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(metrics_json, minilm_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over={"ablation": ABLATIONS})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
