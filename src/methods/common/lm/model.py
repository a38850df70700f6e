"""The causal LM of the substrate: a `transformers` LlamaForCausalLM, small at tiny scale, a real
checkpoint (Llama-3-8B, LLaMA-2-7B) at full scale, loaded through the same `from_pretrained` code.

Checkpoints are safetensors only (`use_safetensors=True`); token splits are a safetensors file of
LongTensors, so nothing is ever unpickled.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

TOKEN_SPLITS = ("train", "validation", "test")


class CheckpointError(RuntimeError):
    """A model directory or model id that cannot be loaded; the message says which and how to fix it."""


def llama_config(
    vocab_size: int,
    hidden_size: int,
    intermediate_size: int,
    num_hidden_layers: int,
    num_attention_heads: int,
    num_key_value_heads: int,
    max_position_embeddings: int,
    rope_theta: float = 10000.0,
    tie_word_embeddings: bool = False,
    bos_token_id=None,
    eos_token_id=None,
):
    """A LlamaConfig from the `lm.model` section (the same architecture class as Llama-3, only smaller)."""
    from transformers import LlamaConfig

    if hidden_size % num_attention_heads:
        raise ValueError(
            f"lm.model: hidden_size {hidden_size} is not a multiple of num_attention_heads {num_attention_heads}"
        )
    if num_attention_heads % num_key_value_heads:
        raise ValueError(
            f"lm.model: num_attention_heads {num_attention_heads} is not a multiple of "
            f"num_key_value_heads {num_key_value_heads}"
        )
    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads,
        num_key_value_heads=num_key_value_heads,
        max_position_embeddings=max_position_embeddings,
        rope_theta=rope_theta,
        tie_word_embeddings=tie_word_embeddings,
        bos_token_id=bos_token_id,
        eos_token_id=eos_token_id,
    )


def _load_model(path_or_id: str, dtype: torch.dtype):
    from transformers import AutoModelForCausalLM

    path = Path(path_or_id)
    local = path.exists()
    if local:
        if not (path / "config.json").exists():
            raise CheckpointError(
                f"{path}: no config.json; expected a directory written by save_pretrained "
                "(config.json + model.safetensors)"
            )
        if not list(path.glob("*.safetensors")):
            raise CheckpointError(
                f"{path}: no *.safetensors weights; only safetensors checkpoints are loaded "
                "(convert a .bin checkpoint with save_pretrained(safe_serialization=True))"
            )
    try:
        model, info = AutoModelForCausalLM.from_pretrained(
            str(path_or_id), dtype=dtype, use_safetensors=True, output_loading_info=True
        )
    except OSError as e:
        if local:
            raise CheckpointError(f"{path}: could not be loaded ({e})") from e
        raise CheckpointError(
            f"model id {path_or_id!r} could not be downloaded or found in the Hugging Face cache ({e}). "
            "Download it where the hub is reachable (e.g. `huggingface-cli download "
            f"{path_or_id} --local-dir DIR`) and set lm.model_id to that local directory DIR."
        ) from e
    except RuntimeError as e:  # size mismatch between the config and the weights
        raise CheckpointError(
            f"{path_or_id}: the weights do not match config.json ({str(e)[:800]}); "
            "the checkpoint and its config come from different models"
        ) from e
    missing = [k for k in info.get("missing_keys", []) if "rotary" not in k]
    mismatched = info.get("mismatched_keys", [])
    if missing or mismatched:
        raise CheckpointError(
            f"{path_or_id}: the weights do not match config.json: missing {missing[:5]}, "
            f"mismatched {mismatched[:5]}; the checkpoint and its config come from "
            "different models"
        )
    return model


def load_causal_lm(path_or_id: str | Path, device: str = "cpu", dtype: torch.dtype = torch.float32):
    """(model, tokenizer) from a local save_pretrained directory or a Hugging Face model id."""
    from transformers import AutoTokenizer

    model = _load_model(str(path_or_id), dtype).to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(path_or_id))
    if len(tokenizer) > model.config.vocab_size:
        raise CheckpointError(
            f"{path_or_id}: tokenizer has {len(tokenizer)} tokens but config.json says "
            f"vocab_size={model.config.vocab_size}; tokenizer and model do not belong together"
        )
    return model, tokenizer


def save_token_splits(path: str | Path, splits: dict, meta: dict | None = None) -> None:
    """Write {"train", "validation", "test"} 1-D LongTensors as one safetensors file, atomically."""
    from safetensors.torch import save_file

    from methods.common.io import atomic_path

    missing = [s for s in TOKEN_SPLITS if s not in splits]
    if missing:
        raise ValueError(f"save_token_splits: missing splits {missing}")
    tensors = {s: splits[s].long().contiguous() for s in TOKEN_SPLITS}
    with atomic_path(path) as tmp:
        save_file(tensors, str(tmp), metadata={"meta": json.dumps(meta or {})})


def load_token_splits(path: str | Path) -> dict:
    """{"train", "validation", "test"} -> 1-D LongTensor, from the safetensors file of `lm_tokens()`."""
    from safetensors.torch import load_file

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: token splits not found (produced by rule lm_tokenize)")
    splits = load_file(str(path))
    missing = [s for s in TOKEN_SPLITS if s not in splits]
    if missing:
        raise ValueError(f"{path}: missing splits {missing}; rerun rule lm_tokenize")
    return {s: splits[s] for s in TOKEN_SPLITS}
