"""Simulated quantization by module replacement and hooks on a random tiny Llama and BERT."""

import pytest
import torch

from methods.common.lm import llama_config
from methods.nestquant.model import quantize_kv, quantize_kv_post_rope, quantize_linears
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


# --- the official KV path: Hadamard on queries and keys after RoPE, values unrotated -------------------


def test_post_rope_rotation_alone_leaves_attention_unchanged():
    """(Q R^T)(K R^T)^T = Q K^T: identity quantizers after the post-RoPE rotation give the same logits."""
    model = _llama()
    x = torch.randint(0, 64, (2, 12))
    with torch.no_grad():
        ref = model(input_ids=x).logits
        changed = quantize_kv_post_rope(model, lambda t: t, lambda t: t, head_dim=8, seed=1)
        got = model(input_ids=x).logits
    assert len(changed) == 2 and all(m.nestquant_kv.signs is not None for m in changed)
    torch.testing.assert_close(got, ref, atol=1e-5, rtol=1e-5)


def test_scores_are_invariant_to_a_shared_orthogonal_head_rotation():
    """The identity behind the path, on raw tensors: rotating queries and keys by one Hadamard (here the
    Kronecker one of a 12 x 2 head) keeps every score."""
    from methods.nestquant.quant import random_hadamard, rotate

    q, k = torch.randn(2, 3, 5, 24, dtype=torch.float64), torch.randn(2, 3, 7, 24, dtype=torch.float64)
    s = random_hadamard(24, 0).double()
    torch.testing.assert_close(rotate(q, s) @ rotate(k, s).transpose(-1, -2), q @ k.transpose(-1, -2))


def _capture_post_rope(model, x):
    """Post-RoPE keys and values the attention of layer 0 sees, and what the KV quantizers receive."""
    from transformers.models.llama import modeling_llama

    ref = {}
    attn = model.model.layers[0].self_attn
    orig = modeling_llama.apply_rotary_pos_emb

    def spy(q, k, cos, sin, *a, **kw):
        q2, k2 = orig(q, k, cos, sin, *a, **kw)
        ref.setdefault("k", k2.detach().clone())
        return q2, k2

    attn.v_proj.register_forward_hook(lambda m, a, out: ref.setdefault("v", out.detach().clone()))
    modeling_llama.apply_rotary_pos_emb = spy
    try:
        with torch.no_grad():
            model(input_ids=x)
    finally:
        modeling_llama.apply_rotary_pos_emb = orig
    return ref, attn


def test_post_rope_quantizes_rotated_post_rope_keys_and_unrotated_values():
    from methods.nestquant.quant import rotate

    model = _llama()
    x = torch.randint(0, 64, (1, 6))
    got = {}
    changed = quantize_kv_post_rope(
        model,
        lambda t: got.setdefault("k", t.detach().clone()),
        lambda t: got.setdefault("v", t.detach().clone()),
        head_dim=8,
        seed=1,
    )
    ref, attn = _capture_post_rope(model, x)
    assert attn in changed
    b, t = x.shape
    v_heads = ref["v"].view(b, t, -1, 8).transpose(1, 2)  # (B, nh, T, hs): values as projected, not rotated
    torch.testing.assert_close(got["v"], v_heads)
    torch.testing.assert_close(got["k"], rotate(ref["k"], attn.nestquant_kv.signs))  # keys after RoPE, rotated
    assert not torch.allclose(got["k"], ref["k"])


def test_official_kv_path_and_kronecker_rotation_are_the_defaults():
    """Fails if the defaults revert: config.yaml, the evaluation's defaults and the quantized model itself."""
    import inspect
    from pathlib import Path

    import yaml

    from methods.nestquant import evaluate
    from methods.nestquant.model import KV_ATTENTION, QuantLinear

    root = Path(__file__).resolve().parents[2]
    quant = yaml.safe_load((root / "config.yaml").read_text())["nestquant"]["quant"]
    assert (quant["kv_cache"], quant["rotation"]) == ("post_rope", "kronecker")
    for fn in (evaluate.quantize_model, evaluate.quantize_model_layerwise, evaluate._quantize_kv_cache):
        params = inspect.signature(fn).parameters
        assert params["kv_cache"].default == "post_rope" and params["rotation"].default == "kronecker"
    betas = evaluate._betas(
        {"betas": {k: [4.0, 5.5, 7.0, 18.0] for k in ("weights", "activations", "keys", "values")}}, 14
    )
    m = evaluate.quantize_model(_llama(), "nestquant", "w4a4kv4", 14, betas, 4, 0, 8, None, skip=("lm_head",))
    attn = m.model.layers[0].self_attn
    assert attn.config._attn_implementation == KV_ATTENTION and m.config._attn_implementation != KV_ATTENTION
    assert not attn.k_proj._forward_hooks and not attn.v_proj._forward_hooks  # no pre-RoPE hooks
    assert isinstance(attn.q_proj, QuantLinear) and attn.q_proj.rotation == "kronecker"


def test_pre_rope_option_keeps_the_projection_hooks():
    from methods.nestquant import evaluate

    betas = evaluate._betas(
        {"betas": {k: [4.0, 5.5, 7.0, 18.0] for k in ("weights", "activations", "keys", "values")}}, 14
    )
    m = evaluate.quantize_model(
        _llama(), "nestquant", "w4a4kv4", 14, betas, 4, 0, 8, None, skip=("lm_head",), kv_cache="pre_rope"
    )
    attn = m.model.layers[0].self_attn
    assert attn.k_proj._forward_hooks and attn.v_proj._forward_hooks
    assert not hasattr(attn, "nestquant_kv")
    with pytest.raises(ValueError, match="nestquant.quant.kv_cache"):
        evaluate.quantize_model(_llama(), "nestquant", "w4a4kv4", 14, betas, 4, 0, 8, None, (), kv_cache="both")


def test_bert_post_rope_path_quantizes_every_layer():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    bert = BertModel(
        BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    ).eval()
    x = torch.randint(0, 50, (2, 7))
    calls = []
    with torch.no_grad():
        ref = bert(input_ids=x).last_hidden_state
        quantize_kv_post_rope(bert, lambda t: calls.append(1) or t, lambda t: t, head_dim=8, seed=0)
        got = bert(input_ids=x).last_hidden_state
    assert len(calls) == 2
    torch.testing.assert_close(got, ref, atol=1e-5, rtol=1e-5)


def test_unknown_setting_is_refused_not_read_as_weights_only():
    # "w4a4" once reached the weights-only path silently: a setting is w4 or w4a4kv4, nothing else
    from methods.nestquant import evaluate

    betas = evaluate._betas(
        {"betas": {k: [4.0, 5.5, 7.0, 18.0] for k in ("weights", "activations", "keys", "values")}}, 14
    )
    with pytest.raises(ValueError, match="w4a4"):
        evaluate.quantize_model(_llama(), "nestquant", "w4a4", 14, betas, 4, 0, 8, None, skip=("lm_head",))
