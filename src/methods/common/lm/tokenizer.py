"""Tokenizer of the substrate and tokenization of the corpus splits.

Tiny scale trains a byte-level BPE on the train split with HF `tokenizers` (vocabulary of a few
thousand). Why not GPT-2's 50,257-token BPE: a vocabulary that large would put most of a small
model's parameters (and most of its CPU time) into the embedding and the softmax, and a corpus of a
few million characters cannot train 50k embeddings; a BPE fitted to the training text spends the
parameters on the transformer blocks that the compression papers quantize and prune. Full scale uses
the pretrained model's own tokenizer.
"""

from __future__ import annotations

from pathlib import Path

import torch

from methods.common.lm.corpus import SPLITS

EOS = "<|endoftext|>"


def train_bpe(train_text: str | Path, vocab_size: int, out_dir: str | Path, min_frequency: int = 2):
    """Byte-level BPE trained on the text file `train_text`, saved with save_pretrained to `out_dir`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train([str(train_text)], trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=EOS, eos_token=EOS, unk_token=None, model_max_length=1 << 30
    )
    fast.save_pretrained(str(out_dir))
    return fast


def load_tokenizer(path_or_id: str | Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path_or_id))


def tokenize_text(tokenizer, text: str, chunk_chars: int = 1 << 20) -> torch.Tensor:
    """Token ids of `text` without special tokens -> 1-D LongTensor; long texts go through the tokenizer
    in ~1 MB pieces cut at blank lines (document boundaries), which bounds its memory."""
    pieces, start = [], 0
    while start < len(text):
        end = len(text) if len(text) - start <= chunk_chars else text.rfind("\n\n", start, start + chunk_chars)
        if end <= start:
            end = min(len(text), start + chunk_chars)
        pieces.append(text[start:end])
        start = end
    ids = []
    for piece in pieces:
        ids += tokenizer(piece, add_special_tokens=False)["input_ids"]
    return torch.tensor(ids, dtype=torch.long)


def tokenize_splits(tokenizer, corpus_dir: str | Path) -> dict:
    """{split: LongTensor} for the {split}.txt files of `corpus_dir`."""
    corpus_dir = Path(corpus_dir)
    return {s: tokenize_text(tokenizer, (corpus_dir / f"{s}.txt").read_text(encoding="utf-8")) for s in SPLITS}
