"""A tiny random Llama (grouped-query attention) shared by the ALSpec tests."""

import pytest
import torch


@pytest.fixture(scope="session")
def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=61,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=128,
    )
    cfg._attn_implementation = "eager"
    return LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="session")
def tiny_llama_dir(tiny_llama, tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_llama")
    tiny_llama.save_pretrained(d)
    return d


@pytest.fixture(scope="session")
def ids():
    return torch.randint(0, 61, (3, 48), generator=torch.Generator().manual_seed(1))
