"""Real Wikipedia text for the pretrained LM at tiny scale (a WikiText-2-like corpus, offline).

Source: the shortened English Wikipedia dump in gensim's test data (`WIKI_MEMBER` of the pinned gensim
wheel, read as a zip): the first articles of enwiki's pages-articles1 dump (2016), full wikitext. Main
namespace pages only, redirects dropped; each article's wikitext is reduced to plain text with
mwparserfromhell's `strip_code()` (templates, references, tables, links' targets and markup removed; the
visible text of links kept), blank lines collapsed. Articles are then split whole, with a seeded shuffle,
into calibration and test text, so that no article is in both.
"""

from __future__ import annotations

import bz2
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from methods.common.data import read_wheel_member
from methods.common.io import atomic_path, log, write_json

WIKI_MEMBER = "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
WIKI_SPLITS = ("calibration", "test")
ARTICLE_SEPARATOR = "\n\n"
# Links that are not running text: images and files (their captions), categories.
NON_TEXT_LINKS = {"file", "image", "category"}
REF_ELEMENT = re.compile(r"<ref\b[^>]*(?<!/)>.*?</ref\s*>", re.DOTALL | re.IGNORECASE)
REF_SELF_CLOSING = re.compile(r"<ref\b[^>]*/>", re.IGNORECASE)
LEFTOVER_MARKUP = re.compile(r"^\s*(\{\||\|\}|\|-|\||!)|\[\[|\]\]|\{\{|\}\}|</?ref\b", re.IGNORECASE)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def wikitext_to_plain(wikitext: str) -> str:
    """Plain text of one article's wikitext: references, image/file links and categories removed, then
    mwparserfromhell's strip_code(); lines where markup survived (table rows the parser could not read)
    dropped; one blank line between paragraphs, trailing spaces removed."""
    import mwparserfromhell

    # References go before parsing: mwparserfromhell keeps a <ref> it cannot parse (one holding unbalanced
    # italics, for instance) as text, and the dump has such references.
    wikitext = REF_SELF_CLOSING.sub("", REF_ELEMENT.sub("", wikitext))
    code = mwparserfromhell.parse(wikitext)
    for link in code.filter_wikilinks():
        if str(link.title).split(":", 1)[0].strip().lower() in NON_TEXT_LINKS and code.contains(link):
            code.remove(link)
    text = code.strip_code(normalize=True, collapse=True)
    # what the parser left as text (malformed tables, links with nested links) is markup, not prose
    lines = [ln.rstrip() for ln in text.splitlines() if not LEFTOVER_MARKUP.search(ln)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def parse_dump(xml_bytes: bytes) -> list[tuple[str, str]]:
    """(title, plain text) of every main-namespace, non-redirect article of a MediaWiki XML export."""
    articles = []
    for page in ET.fromstring(xml_bytes).iter():
        if _local(page.tag) != "page":
            continue
        fields = {_local(child.tag): child for child in page}
        if fields.get("ns") is None or fields["ns"].text != "0" or "redirect" in fields:
            continue
        text_el = next((el for el in page.iter() if _local(el.tag) == "text"), None)
        plain = wikitext_to_plain(text_el.text or "") if text_el is not None else ""
        if plain:
            articles.append((fields["title"].text, plain))
    if not articles:
        raise ValueError("the Wikipedia dump holds no main-namespace article with text")
    return articles


def read_wikipedia(gensim_wheel: str | Path) -> list[tuple[str, str]]:
    """(title, plain text) of the articles of gensim's shortened Wikipedia dump, in dump order."""
    return parse_dump(bz2.decompress(read_wheel_member(gensim_wheel, WIKI_MEMBER)))


def split_articles(articles: list[tuple[str, str]], test: float, seed: int) -> dict:
    """Whole articles shuffled with `seed`, the first round(test * n) (at least one) to test, the rest to
    calibration; each split keeps dump order, so the output does not depend on the shuffle beyond membership."""
    if not 0 < test < 1:
        raise ValueError(f"lm.wikipedia.test must be in (0, 1), got {test}")
    if len(articles) < 2:
        raise ValueError(f"split_articles: need at least 2 articles, got {len(articles)}")
    order = list(range(len(articles)))
    random.Random(seed).shuffle(order)
    n_test = min(len(articles) - 1, max(1, round(test * len(articles))))
    test_ids = set(order[:n_test])
    return {
        "calibration": [a for i, a in enumerate(articles) if i not in test_ids],
        "test": [a for i, a in enumerate(articles) if i in test_ids],
    }


def build_wikipedia(gensim_wheel, outputs: dict, test: float, seed: int) -> dict:
    """The lm_wikipedia step: calibration.txt and test.txt (articles joined by a blank line) and a
    manifest (titles, characters, words per split)."""
    splits = split_articles(read_wikipedia(gensim_wheel), test, seed)
    manifest = {"source": WIKI_MEMBER, "test_fraction": test, "seed": seed}
    for split in WIKI_SPLITS:
        text = ARTICLE_SEPARATOR.join(t for _, t in splits[split])
        with atomic_path(outputs[split]) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
        manifest[split] = {
            "articles": [title for title, _ in splits[split]],
            "characters": len(text),
            "words": len(text.split()),
        }
    write_json(outputs["manifest"], manifest)
    return manifest


def wikipedia_tokens(tokenizer, text_file: str | Path):
    """Token ids (1-D LongTensor, no special tokens) of one split's text, articles in file order."""
    from methods.common.lm.tokenizer import tokenize_text

    return tokenize_text(tokenizer, Path(text_file).read_text(encoding="utf-8"))


def window_bos(tokenizer) -> int | None:
    """The token every window of a model starts with: its BOS id where its tokenizer starts every text with
    it (Gemma's `<bos>`: the model was trained that way, and its perplexity without it is far worse), else
    None (SmolLM2, whose tokenizer adds nothing: windows start with text)."""
    bos = tokenizer.bos_token_id
    ids = tokenizer("a").input_ids
    return int(bos) if bos is not None and ids and ids[0] == bos else None


def spread_windows(ids, seq_len: int, max_windows, bos: int | None = None):
    """The non-overlapping `seq_len`-token windows of `ids` -> [n, seq_len]; with `max_windows`, that many
    of them evenly spaced over the stream (first and last included), so that a short evaluation still
    samples every part of the test articles instead of the first one or two. With `bos`, each window is
    `bos` followed by seq_len - 1 tokens of text (`window_bos`)."""
    import torch

    from methods.common.lm.evaluate import with_bos

    text_len = seq_len - (bos is not None)
    n = ids.numel() // text_len
    if n == 0:
        raise ValueError(f"{ids.numel()} test tokens are fewer than one window of seq_len={seq_len}; lower seq_len")
    windows = ids[: n * text_len].view(n, text_len)
    if max_windows is not None and max_windows < n:
        windows = windows[torch.linspace(0, n - 1, int(max_windows)).round().long()]
    return with_bos(windows, bos)


def wikipedia_splits(tokenizer, calibration_file, test_file, seq_len: int, max_windows, validation: float = 0.1):
    """Token splits of the Wikipedia text in the shape of `load_token_splits`, for a pretrained LM with its
    own tokenizer: train = the calibration articles but their last `validation` fraction (held out), test =
    `max_windows` windows of `seq_len` spread over the test articles (`spread_windows`, each starting with
    the model's `window_bos`), flattened, so that the whole test split is exactly the scored windows."""
    cal = wikipedia_tokens(tokenizer, calibration_file)
    test = wikipedia_tokens(tokenizer, test_file)
    cut = int(cal.numel() * (1 - validation))
    windows = spread_windows(test, seq_len, max_windows, bos=window_bos(tokenizer))
    log(
        f"Wikipedia: {cal.numel()} calibration tokens ({cal.numel() - cut} held out), {test.numel()} test tokens; "
        f"{windows.shape[0]} test windows of {seq_len} spread over the articles"
    )
    return {"train": cal[:cut], "validation": cal[cut:], "test": windows.reshape(-1)}


def evaluate_pretrained(
    model_dir,
    calibration_file,
    test_file,
    out_path,
    seq_len: int,
    batch_size: int,
    max_windows,
    threads=None,
    device="cpu",
) -> dict:
    """The lm_pretrained_evaluate step: perplexity of the pretrained LM on `max_windows` non-overlapping
    `seq_len`-token windows spread over the Wikipedia test articles (each window scored on its own, as
    `perplexity` does; each starts with the model's `window_bos`), with the token counts of both splits."""
    import time

    from methods.common.lm.evaluate import perplexity, torch_threads
    from methods.common.lm.model import load_causal_lm

    with torch_threads(threads):
        start = time.perf_counter()
        model, tokenizer = load_causal_lm(model_dir, device=device)
        load_s = time.perf_counter() - start
        tokens = {
            s: wikipedia_tokens(tokenizer, f) for s, f in (("calibration", calibration_file), ("test", test_file))
        }
        windows = spread_windows(tokens["test"], seq_len, max_windows, bos=window_bos(tokenizer))
        n_windows = windows.shape[0]
        start = time.perf_counter()
        ppl = perplexity(model, windows.reshape(-1), seq_len, batch_size, progress=True)
        eval_s = time.perf_counter() - start
    result = {
        "model_dir": str(model_dir),
        "test_perplexity": ppl,
        "seq_len": seq_len,
        "n_windows": n_windows,
        "calibration_tokens": int(tokens["calibration"].numel()),
        "test_tokens": int(tokens["test"].numel()),
        "load_seconds": round(load_s, 2),
        "eval_seconds": round(eval_s, 2),
    }
    write_json(out_path, result)
    log(f"Wikipedia test perplexity {ppl:.3f} over {n_windows} windows of {seq_len} tokens ({eval_s:.0f} s)")
    return result
