"""SpecDecoder: exact path = HF forward, speculative output = attention over the selected keys,
verification, rollback, greedy agreement."""

import math

import pytest
import torch

from methods.alspec.engine import SpecConfig, SpecDecoder, verify


def _attention_over(q, K, V, idx, scale):
    """Independent reference: softmax over the listed key positions only, one head at a time."""
    B, H, D = q.shape
    out = torch.empty(B, H, D)
    for b in range(B):
        for h in range(H):
            s = torch.tensor([float(q[b, h] @ K[b, h, t]) * scale for t in idx])
            w = torch.softmax(s, 0)
            out[b, h] = sum(w[i] * V[b, h, t] for i, t in enumerate(idx))
    return out


def test_exact_decode_equals_the_hf_forward(tiny_llama, ids):
    ref = tiny_llama(input_ids=ids).logits
    run = SpecDecoder(tiny_llama).run(ids, 20, SpecConfig("exact"))
    # step s feeds ids[:, 20 + s] and predicts position 21 + s: the forward's logits at 20 + s
    torch.testing.assert_close(run["logits"], ref[:, 20:], atol=2e-5, rtol=1e-4)


def test_speculative_output_is_attention_over_sink_and_window_keys(tiny_llama):
    dec = SpecDecoder(tiny_llama)
    g = torch.Generator().manual_seed(3)
    q = torch.randn(2, dec.n_heads, dec.head_dim, generator=g)
    K = torch.randn(2, dec.n_kv, 30, dec.head_dim, generator=g)
    V = torch.randn(2, dec.n_kv, 30, dec.head_dim, generator=g)
    o, o_hat = dec.attend(q, K, V, SpecConfig("alspec", sink=3, window=5, lam=0.1))
    Ke, Ve = dec._expand(K), dec._expand(V)
    sel = [0, 1, 2, 25, 26, 27, 28, 29]
    torch.testing.assert_close(o_hat, _attention_over(q, Ke, Ve, sel, dec.scale), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(o, _attention_over(q, Ke, Ve, range(30), dec.scale), atol=1e-5, rtol=1e-5)
    _, static = dec.attend(q, K, V, SpecConfig("static", sink=3, window=5))
    torch.testing.assert_close(static, o_hat, atol=1e-6, rtol=1e-6)
    # GQA: query heads 0, 1 read kv head 0 and 2, 3 read kv head 1
    torch.testing.assert_close(Ke[:, 1], K[:, 0])
    torch.testing.assert_close(Ke[:, 2], K[:, 1])


def test_verification_accepts_identical_and_rejects_perturbed_outputs():
    g = torch.Generator().manual_seed(0)
    o = torch.randn(4, 3, 8, generator=g)
    lam = 0.1
    assert verify(o, o.clone(), lam).all()
    assert verify(o, o.clone(), lam, "head").all()
    direction = torch.randn(4, 3, 8, generator=g)
    direction = direction / torch.linalg.vector_norm(direction, dim=(-2, -1), keepdim=True)
    norm = torch.linalg.vector_norm(o, dim=(-2, -1), keepdim=True)
    assert verify(o, o + 0.9 * lam * norm * direction, lam).all()  # error 0.9 λ‖o‖: accepted
    assert not verify(o, o + 1.1 * lam * norm * direction, lam).any()  # error 1.1 λ‖o‖: rejected
    # per head: perturb head 1 of row 0 only
    bad = o.clone()
    bad[0, 1] += 2 * lam * torch.linalg.vector_norm(o[0, 1])
    acc = verify(o, bad, lam, "head")
    assert not acc[0, 1] and acc.sum() == acc.numel() - 1


def test_rollback_on_every_miss_is_exactly_the_exact_path(tiny_llama, ids):
    dec = SpecDecoder(tiny_llama)
    exact = dec.run(ids, 16, SpecConfig("exact", 2, 2), n_generate=6)
    never = dec.run(ids, 16, SpecConfig("alspec", 2, 2, lam=0.0), n_generate=6)  # λ = 0: nothing is accepted
    assert not never["hits"].any()
    assert torch.equal(never["logits"], exact["logits"])
    assert torch.equal(never["pred"], exact["pred"])


def test_static_differs_from_exact_beyond_sink_and_window(tiny_llama, ids):
    dec = SpecDecoder(tiny_llama)
    exact = dec.run(ids, 30, SpecConfig("exact", 2, 2))
    static = dec.run(ids, 30, SpecConfig("static", 2, 2))
    assert static["hits"].all() and (static["logits"] - exact["logits"]).abs().max() > 1e-3


def test_hits_commit_the_speculative_result_and_misses_roll_back(tiny_llama, ids):
    """Mixed verdicts: the ALSpec logits are those of the per-layer choice it reports."""
    dec = SpecDecoder(tiny_llama)
    spec = SpecConfig("alspec", 2, 6, lam=1.0)
    run = dec.run(ids, 40, spec)
    hits = run["hits"]
    assert 0 < hits.float().mean() < 1, "the test needs both hits and misses"
    # replay: at each step and layer, use ô where ALSpec reported a hit and o elsewhere
    _, cache = dec.prefill(ids[:, :40], capacity=48)
    replay = []
    for s in range(8):
        h = tiny_llama.model.embed_tokens(ids[:, 40 + s][:, None])
        pos = cache.length
        cos, sin = dec._rope(h, torch.full((1, 1), pos))
        for i, layer in enumerate(dec.layers):
            q, k, v = dec._qkv(layer, h, cos, sin)
            cache.write(i, k, v, pos)
            o, o_hat = dec.attend(q[:, :, 0], *cache.view(i, pos + 1), spec)
            use = torch.where(hits[s, i][:, None, None], o_hat, o)
            h = dec.rest_of_layer(layer, h, use)
        cache.length = pos + 1
        replay.append(dec._logits(h))
    torch.testing.assert_close(run["logits"], torch.stack(replay, 1), atol=1e-5, rtol=1e-5)


def test_greedy_decoding_under_verification_equals_exact_when_the_window_covers_the_context(tiny_llama, ids):
    """sink + window >= context: ô = o, every verification passes and the tokens are the exact ones."""
    dec = SpecDecoder(tiny_llama)
    exact = dec.run(ids[:, :20], 10, SpecConfig("exact"), n_generate=12)
    spec = dec.run(ids[:, :20], 10, SpecConfig("alspec", sink=16, window=16, lam=0.05), n_generate=12)
    assert spec["hits"].all()
    assert torch.equal(spec["pred"], exact["pred"])


def test_head_granularity_counts_approximated_heads(tiny_llama, ids):
    dec = SpecDecoder(tiny_llama)
    run = dec.run(ids, 40, SpecConfig("alspec", 2, 6, lam=1.0, granularity="head"))
    # a layer hit means every head was accepted, so the approximated fraction is at least the hit rate
    assert (run["approx"][run["hits"]] == 1).all()
    assert run["approx"].mean() >= run["hits"].float().mean()


@pytest.mark.parametrize("bad", [dict(mode="fast"), dict(granularity="token"), dict(lam=-1.0)])
def test_bad_spec_config_is_named(bad):
    with pytest.raises(ValueError, match=list(bad)[0]):
        SpecConfig(**bad)


def test_cache_overflow_is_explained(tiny_llama, ids):
    dec = SpecDecoder(tiny_llama)
    _, cache = dec.prefill(ids[:, :10], capacity=10)
    with pytest.raises(ValueError, match="capacity"):
        dec.step(ids[:, 10], cache, SpecConfig("exact"))
    assert math.isfinite(float(dec.prefill(ids[:, :10], capacity=11)[0].sum()))


def test_a_model_of_another_architecture_is_refused_with_the_fix():
    """The decoder drives Llama blocks; a Gemma-3 model (q/k norms, four norms per block, scaled embeddings)
    would decode wrongly without an error, so it is refused, naming lm.model_id."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(
        vocab_size=32,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
    )
    with pytest.raises(ValueError, match="Gemma3ForCausalLM.*lm.model_id"):
        SpecDecoder(Gemma3ForCausalLM(config))
