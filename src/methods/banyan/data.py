"""Banyan's data: a training corpus of token-id sentences and evaluation pairs with gold similarity.

tiny: the synthetic grammar of `grammar.py` (word tokens). full: the paper's corpus and STS sets through
Hugging Face `datasets` (word tokens: the official BPEmb vocabulary downloads at run time, see README).
Word-level pairs: the grammar's synonym lists (tiny) and WordSim-353 / SimLex-999 from gensim's test data.
"""

from __future__ import annotations

import os
import re
from collections import Counter

import torch

from methods.common.io import log, save_torch, write_json

from . import grammar

UNK = "<unk>"
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def words_of(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, an inner apostrophe)."""
    return _WORD.findall(text.lower())


def keep_sentence(n_tokens: int, min_tokens: int, max_tokens: int) -> bool:
    """Official filter: min_tokens < n <= max_tokens (3 and 200 in the official training script)."""
    return min_tokens < n_tokens <= max_tokens


def build_vocab(sentences: list[list[str]], max_size: int) -> list[str]:
    """<unk> then the max_size - 1 most frequent words (ties broken alphabetically)."""
    counts = Counter(w for s in sentences for w in s)
    ranked = sorted(counts, key=lambda w: (-counts[w], w))
    return [UNK] + ranked[: max_size - 1]


def to_ids(words: list[str], index: dict[str, int]) -> list[int]:
    return [index.get(w, 0) for w in words]


def pack(sentences: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Flat token tensor and offsets (len n+1), so the corpus is saved as two tensors."""
    lengths = torch.tensor([len(s) for s in sentences], dtype=torch.long)
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
    return torch.tensor([t for s in sentences for t in s], dtype=torch.long), offsets


def unpack(tokens: torch.Tensor, offsets: torch.Tensor) -> list[torch.Tensor]:
    return list(torch.split(tokens, (offsets[1:] - offsets[:-1]).tolist()))


def synthetic_dataset(cfg: dict) -> dict:
    """Corpus and held-out pairs of the synthetic grammar (tiny scale)."""
    g = cfg["grammar"]
    train = grammar.corpus(cfg["n_train"], cfg["seed"], g["p_optional"], g["p_passive"])
    a, b, gold = grammar.sentence_pairs(cfg["n_eval_pairs"], cfg["seed"] + 1, g["p_optional"], g["p_passive"])
    wa, wb, wgold = grammar.word_pairs(cfg["seed"] + 2, cfg["n_word_pairs"])
    return {
        "train": train,
        "vocab": [UNK] + grammar.vocabulary(),
        "sentence_sets": {"grammar": {"a": [" ".join(s) for s in a], "b": [" ".join(s) for s in b], "gold": gold}},
        "word_sets": {"grammar_words": {"a": wa, "b": wb, "gold": wgold}},
    }


def _load(source: dict, cache_dir: str | None):
    """One `datasets.load_dataset` source (corpus or STS set) of the config, read through `cache_dir`."""
    import datasets

    return datasets.load_dataset(
        source["path"],
        source.get("name"),
        split=source["split"],
        data_files=source.get("data_files"),
        cache_dir=cache_dir,
    )


def hf_dataset(cfg: dict, cache_dir: str | None = None) -> dict:
    """The paper's corpus and STS sets through `datasets.load_dataset` (full scale)."""
    c = cfg["corpus"]
    ds = _load(c, cache_dir)
    if c["text_column"] not in ds.column_names:
        raise ValueError(
            f"config banyan.data.corpus.text_column {c['text_column']!r} is not a column of "
            f"{c['path']}; columns: {ds.column_names}"
        )
    texts = ds.select(range(min(cfg["n_train"], len(ds))))[c["text_column"]]  # only the documents used
    if c.get("split_sentences"):
        texts = [x for t in texts for x in _SENTENCE_END.split(t)]
    train = [words_of(t) for t in texts]
    sets = {}
    for name, s in cfg["sts"].items():
        d = _load(s, cache_dir)
        cols = [s["columns"][k] for k in ("a", "b", "score")]
        missing = [x for x in cols if x not in d.column_names]
        if missing:
            raise ValueError(
                f"config banyan.data.sts.{name}.columns: {missing} not in {s['path']}; columns: {d.column_names}"
            )
        sets[name] = {"a": list(d[cols[0]]), "b": list(d[cols[1]]), "gold": [float(x) for x in d[cols[2]]]}
    return {"train": train, "vocab": None, "sentence_sets": sets, "word_sets": {}}


DRAW_STRIDE = 10  # the grammar draw of seed s uses data seeds cfg.seed + 10 s (+0 corpus, +1 pairs, +2 words)


def fetch_datasets(cfg: dict, cache_dir: str, manifest: str) -> None:
    """Paper scale, on the submit host (rule banyan_download): download the corpus and every STS set into
    the Hugging Face cache `cache_dir`, where the data job reads them offline; a manifest names each source
    and its row count."""
    sources = {"corpus": cfg["corpus"], **{f"sts/{k}": v for k, v in cfg["sts"].items()}}
    rows = {}
    for name, source in sources.items():
        rows[name] = len(_load(source, cache_dir))
        log(f"banyan download {name}: {source['path']} ({rows[name]} rows) -> {cache_dir}")
    write_json(manifest, {"cache_dir": cache_dir, "sources": {k: dict(v) for k, v in sources.items()}, "rows": rows})


def prepare(cfg: dict, word_files: dict[str, str], seeds: list[int], cache_dir: str | None = None) -> dict:
    """{"draws": {key: one data draw}}: the synthetic grammar is drawn anew for every seed (corpus, held-out
    pairs and word pairs from data seed cfg.seed + 10 s; seed 0 keeps cfg.seed), so a verdict rests on
    independent data draws; a real corpus (`datasets`) is one draw, key "all", shared by the seeds."""
    if cfg["source"] == "grammar":
        return {
            "draws": {str(s): prepare_draw({**cfg, "seed": cfg["seed"] + DRAW_STRIDE * s}, word_files) for s in seeds}
        }
    return {"draws": {"all": prepare_draw(cfg, word_files, cache_dir)}}


def draw_for(data: dict, seed: int) -> dict:
    """The data draw a seed trains and is evaluated on."""
    draws = data["draws"]
    return draws["all"] if "all" in draws else draws[str(seed)]


def prepare_draw(cfg: dict, word_files: dict[str, str], cache_dir: str | None = None) -> dict:
    """Everything the training steps read: vocabulary, packed training ids, evaluation sets (as text)."""
    from methods.common.lm.minilm import read_word_pairs

    raw = synthetic_dataset(cfg) if cfg["source"] == "grammar" else hf_dataset(cfg, cache_dir)
    train = [s for s in raw["train"] if keep_sentence(len(s), cfg["min_tokens"], cfg["max_tokens"])]
    if not train:
        raise ValueError(
            f"banyan data: no training sentence has between {cfg['min_tokens'] + 1} and "
            f"{cfg['max_tokens']} tokens; check banyan.data.min_tokens / max_tokens"
        )
    vocab = raw["vocab"] or build_vocab(train, cfg["vocab_size"])
    index = {w: i for i, w in enumerate(vocab)}
    tokens, offsets = pack([to_ids(s, index) for s in train])
    word_sets = dict(raw["word_sets"])
    for name, path in word_files.items():
        pairs = read_word_pairs(path)
        word_sets[name] = {"a": [p[0] for p in pairs], "b": [p[1] for p in pairs], "gold": [p[2] for p in pairs]}
    return {
        "vocab": vocab,
        "train_tokens": tokens,
        "train_offsets": offsets,
        "sentence_sets": raw["sentence_sets"],
        "word_sets": word_sets,
    }


def encode_texts(texts: list[str], vocab: list[str]) -> list[torch.Tensor]:
    """Token ids of evaluation sentences (unknown words -> <unk>; an empty sentence -> [<unk>])."""
    index = {w: i for i, w in enumerate(vocab)}
    return [torch.tensor(to_ids(words_of(t), index) or [0], dtype=torch.long) for t in texts]


def check_data(data: dict, path: str, seeds: list[int] | None = None) -> dict:
    """The prepared data file has what the training steps read (one draw per seed, or one for all), or the
    error names the file and the fix."""
    need = {"vocab", "train_tokens", "train_offsets", "sentence_sets", "word_sets"}
    if not isinstance(data, dict) or not isinstance(data.get("draws"), dict) or not data["draws"]:
        raise ValueError(f"{path}: not a banyan data file (no 'draws'); delete it and rerun rule banyan_data")
    missing_seeds = [s for s in seeds or [] if "all" not in data["draws"] and str(s) not in data["draws"]]
    if missing_seeds:
        raise ValueError(
            f"{path}: no data draw for seeds {missing_seeds} (banyan.seeds changed?); "
            "delete it and rerun rule banyan_data"
        )
    for key, draw in data["draws"].items():
        if not isinstance(draw, dict) or need - set(draw):
            raise ValueError(
                f"{path}: draw {key} misses {sorted(need - set(draw or {}))}; delete it and rerun rule banyan_data"
            )
        if int(draw["train_offsets"][-1]) != len(draw["train_tokens"]):
            raise ValueError(
                f"{path}: draw {key}: offsets do not match the token tensor (corrupt); delete it and rerun banyan_data"
            )
    return data


def data_job(
    cfg: dict, word_files: dict[str, str], seeds: list[int], out_path: str, out_stats: str, cache_dir: str | None = None
) -> None:
    """Step banyan_data: training corpus and evaluation sets, one draw per seed (grammar) or one in all (a
    `datasets` corpus, read offline from `cache_dir`, which rule banyan_download filled on the submit host)."""
    if cfg["source"] == "datasets":
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # before `datasets` is imported: no network on a node
    data = prepare(cfg, word_files, seeds, cache_dir)
    stats = {}
    for key, d in data["draws"].items():
        stats[key] = {
            "n_train_sentences": len(d["train_offsets"]) - 1,
            "n_train_tokens": len(d["train_tokens"]),
            "vocab_size": len(d["vocab"]),
            "sentence_sets": {k: len(v["gold"]) for k, v in d["sentence_sets"].items()},
            "word_sets": {k: len(v["gold"]) for k, v in d["word_sets"].items()},
        }
        log(f"banyan data draw {key}: {stats[key]}")
    save_torch(out_path, data)
    write_json(out_stats, stats)
