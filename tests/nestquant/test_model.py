"""Simulated quantization by module replacement and hooks on a random tiny Llama and BERT."""

import torch

from methods.common.lm import llama_config
from methods.nestquant.model import quantize_kv, quantize_linears
from methods.nestquant.quant import WEIGHT_BETAS, nestquant


def _llama():
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(llama_config(64, 32, 64, 2, 4, 2, 64)).eval()


def test_rotation_alone_leaves_the_model_unchanged():
    """Identity quantizers: Q_a(R x) · (W R^T)^T = W x, so logits are unchanged (R orthogonal)."""
    model = _llama()
    x = torch.randint(0, 64, (2, 12))
    with torch.no_grad():
        ref = model(input_ids=x).logits
        quantize_linears(model, None, None, seed=0)
        handles = quantize_kv(model, lambda t: t, head_dim=8, seed=1)
        got = model(input_ids=x).logits
    torch.testing.assert_close(got, ref, atol=1e-4, rtol=1e-4)
    assert len(handles) == 4  # k_proj and v_proj of 2 layers


def test_w4a4kv4_nestquant_changes_logits_a_little():
    model = _llama()
    x = torch.randint(0, 64, (2, 12))
    q = 14
    nq = lambda t: nestquant(t, q, [b / q for b in WEIGHT_BETAS])  # noqa: E731
    with torch.no_grad():
        ref = model(input_ids=x).logits
        quantize_linears(model, nq, nq, seed=0)
        quantize_kv(model, nq, head_dim=8, seed=1)
        got = model(input_ids=x).logits
    rel = ((got - ref).norm() / ref.norm()).item()
    assert 0 < rel < 0.3


def test_bert_key_value_hooks():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    bert = BertModel(
        BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64)
    ).eval()
    assert len(quantize_kv(bert, lambda t: t, head_dim=8, seed=0)) == 2


def test_unrotated_kv_hook_applies_the_quantizer_to_each_head():
    model = _llama()
    seen = []
    quantize_kv(model, lambda t: seen.append(t.shape) or t, head_dim=8, seed=0, rotate_heads=False)
    with torch.no_grad():
        model(input_ids=torch.randint(0, 64, (1, 5)))
    assert seen and all(s[-1] == 8 for s in seen)
