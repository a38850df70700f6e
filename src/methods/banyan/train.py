"""Step banyan_train: training and evaluation of Banyan and its ablations (official defaults: Adam 1e-3,
batch 512, dropout 0.1), on the job's device."""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F

from methods.common.io import load_torch, log, save_arrays, set_seed, write_json
from methods.common.lm.minilm import spearman

from .data import check_data, draw_for, encode_texts, unpack
from .model import build_model


def train_model(
    variant: str,
    corpus: list[torch.Tensor],
    vocab_size: int,
    model_cfg: dict,
    train_cfg: dict,
    seed: int,
    device: torch.device | str = "cpu",
):
    """Adam on the reconstruction loss, shuffled mini-batches; returns (model, per-step losses, nodes/batch)."""
    set_seed(seed)
    model = build_model(variant, vocab_size, model_cfg["channels"], model_cfg["channel_size"], model_cfg["dropout"])
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=train_cfg["lr"])
    gen = torch.Generator().manual_seed(seed)
    losses, nodes = [], []
    for epoch in range(train_cfg["epochs"]):
        order = torch.randperm(len(corpus), generator=gen).tolist()
        for start in range(0, len(order), train_cfg["batch_size"]):
            batch = [corpus[i] for i in order[start : start + train_cfg["batch_size"]]]
            loss = model.loss(batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        log(f"  {variant} seed {seed} epoch {epoch + 1}: loss {np.mean(losses[-20:]):.4f}")
    if hasattr(model, "encode"):
        with torch.no_grad():
            model.eval()
            probe = [corpus[i] for i in range(min(train_cfg["batch_size"], len(corpus)))]
            nodes = len(model.encode(probe).states)
            model.train()
    else:
        nodes = float("nan")
    return model, losses, nodes


def cosines(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    return F.cosine_similarity(a, b, dim=-1).cpu().numpy()


def sentence_scores(model, sets: dict, vocab: list[str]) -> dict:
    """Per set: cosine of the two sentences' roots (or means) against gold, Spearman rho (official eval.py)."""
    out = {}
    for name, s in sets.items():
        cos = cosines(model.embed(encode_texts(s["a"], vocab)), model.embed(encode_texts(s["b"], vocab)))
        out[name] = {"spearman": spearman(cos, s["gold"]), "cosine": cos}
    return out


def covered_pairs(s: dict, index: dict[str, int]) -> list[int]:
    """Indices of the word pairs whose two (distinct) words are in the vocabulary."""
    return [i for i, (x, y) in enumerate(zip(s["a"], s["b"])) if x in index and y in index and x != y]


def word_scores(model, sets: dict, vocab: list[str]) -> dict:
    """Per set: Spearman of word cosines over the pairs whose two words are in the vocabulary (a word is
    one token here, so its representation is its embedding, as the official eval for single tokens)."""
    index = {w: i for i, w in enumerate(vocab)}
    emb = model.embedding.weight.detach().cpu()
    out = {}
    for name, s in sets.items():
        keep = covered_pairs(s, index)
        if len(keep) < 3:
            out[name] = {"spearman": float("nan"), "covered": len(keep)}
            continue
        ia = torch.tensor([index[s["a"][i]] for i in keep])
        ib = torch.tensor([index[s["b"][i]] for i in keep])
        out[name] = {
            "spearman": spearman(cosines(emb[ia], emb[ib]), [s["gold"][i] for i in keep]),
            "covered": len(keep),
        }
    return out


def word_mean(metrics: dict, names: list[str], min_pairs: int, n_seeds: int) -> list[float]:
    """Mean word-level Spearman over the sets with at least min_pairs covered pairs (NaN if none)."""
    used = [n for n in names if metrics[f"word_{n}_covered"] >= min_pairs]
    if not used:
        return [float("nan")] * n_seeds
    return [float(np.mean([metrics[f"word_{n}"][i] for n in used])) for i in range(n_seeds)]


def run_variant(
    variant: str,
    data: dict,
    model_cfg: dict,
    train_cfg: dict,
    seeds: list[int],
    min_word_pairs: int,
    device: torch.device | str = "cpu",
) -> tuple[dict, dict]:
    """Train one variant on every seed, each on its own data draw (`data.draw_for`); metrics (lists over
    seeds) and arrays for the figures."""
    metrics: dict = {"variant": variant, "seeds": seeds, "loss_final": [], "train_seconds": [], "nodes_per_batch": []}
    arrays: dict = {}
    for seed in seeds:
        draw = draw_for(data, seed)
        corpus = unpack(draw["train_tokens"], draw["train_offsets"])
        vocab = draw["vocab"]
        # the claims' trivial null: the network this seed's training starts from (train_model's seeding and
        # build), scored untrained; for the mean variant a bag of random embeddings
        set_seed(seed)
        untrained = build_model(
            variant, len(vocab), model_cfg["channels"], model_cfg["channel_size"], model_cfg["dropout"]
        ).to(device)
        sts = sentence_scores(untrained, draw["sentence_sets"], vocab)
        words = word_scores(untrained, draw["word_sets"], vocab)
        metrics.setdefault("untrained_sts_mean", []).append(float(np.mean([r["spearman"] for r in sts.values()])))
        metrics.setdefault("untrained_word_mean", []).append(
            word_mean(
                {
                    **{f"word_{n}": [r["spearman"]] for n, r in words.items()},
                    **{f"word_{n}_covered": r["covered"] for n, r in words.items()},
                },
                list(words),
                min_word_pairs,
                1,
            )[0]
        )
        del untrained
        t0 = time.perf_counter()
        model, losses, nodes = train_model(variant, corpus, len(vocab), model_cfg, train_cfg, seed, device)
        metrics["train_seconds"].append(time.perf_counter() - t0)
        metrics["loss_final"].append(float(np.mean(losses[-20:])))
        metrics["nodes_per_batch"].append(nodes)
        metrics["non_embedding_parameters"] = model.non_embedding_parameters()
        arrays[f"loss_seed{seed}"] = np.asarray(losses)
        for name, r in sentence_scores(model, draw["sentence_sets"], vocab).items():
            metrics.setdefault(f"sts_{name}", []).append(r["spearman"])
            arrays[f"cos_{name}_seed{seed}"] = r["cosine"]
        for name, r in word_scores(model, draw["word_sets"], vocab).items():
            metrics.setdefault(f"word_{name}", []).append(r["spearman"])
            metrics[f"word_{name}_covered"] = r["covered"]
        log(
            f"{variant} seed {seed}: "
            + ", ".join(
                f"{k}={v[-1]:.4f}"
                for k, v in metrics.items()
                if k.startswith(("sts_", "word_", "untrained_")) and isinstance(v, list)
            )
        )
    names = list(draw["sentence_sets"])
    metrics["sts_mean"] = [float(np.mean([metrics[f"sts_{n}"][i] for n in names])) for i in range(len(seeds))]
    metrics["word_mean"] = word_mean(metrics, list(draw["word_sets"]), min_word_pairs, len(seeds))
    return metrics, arrays


def train_job(
    variant: str,
    data_path: str,
    model_cfg: dict,
    train_cfg: dict,
    seeds: list[int],
    min_word_pairs: int,
    threads: int,
    out_json: str,
    out_npz: str,
    device: torch.device | str = "cpu",
) -> None:
    """Step banyan_train: one variant (Banyan or an ablation) trained and evaluated on each seed of the
    job's seed group (each seed on its own data draw), on `device` (the job's, `job_device`)."""
    torch.set_num_threads(threads)
    data = check_data(load_torch(data_path), data_path, seeds)
    log(f"banyan {variant}: model {model_cfg}, train {train_cfg}, seeds {seeds}")
    metrics, arrays = run_variant(variant, data, model_cfg, train_cfg, seeds, min_word_pairs, device)
    save_arrays(out_npz, arrays, dtype=np.float64)
    write_json(out_json, {**metrics, "model": model_cfg, "train": train_cfg})
