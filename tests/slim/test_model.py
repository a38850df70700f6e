"""SLiM on a tiny random Llama: every linear replaced, the ladder's error ordering, PEFT trains adapters only."""

import copy

import pytest
import torch

from methods.slim.compress import Recipe, compress_model, target_linears
from methods.slim.layer import SlimLinear
from methods.slim.peft import adapter_parameters, finetune_adapters


def _stats(model, ids):
    """X^T X / n and mean x^2 of every linear's inputs (independent of the shared substrate's capture)."""
    acc = {}

    def hook(name):
        def fn(_, args):
            x = args[0].detach().reshape(-1, args[0].shape[-1]).double()
            a = acc.setdefault(name, {"xtx": 0, "sq": 0, "n": 0})
            a["xtx"] = a["xtx"] + x.T @ x
            a["sq"] = a["sq"] + (x * x).sum(0)
            a["n"] += x.shape[0]

        return fn

    hs = [m.register_forward_pre_hook(hook(n)) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        model(input_ids=ids)
    for h in hs:
        h.remove()
    return {n: {"hessian": a["xtx"] / a["n"], "mean_sq": a["sq"] / a["n"]} for n, a in acc.items()}


@pytest.fixture(scope="module")
def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=96,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    model = LlamaForCausalLM(cfg).eval()
    ids = torch.randint(0, 96, (8, 32))
    return model, ids, _stats(model, ids)


def test_every_block_linear_replaced(tiny_llama):
    model, ids, stats = tiny_llama
    m = copy.deepcopy(model)
    errors = compress_model(m, Recipe(adapter="slim"), stats)
    assert set(errors) == set(target_linears(model))
    assert len(errors) == 14  # q k v o gate up down x 2 layers; lm_head stays dense
    assert all(isinstance(m.get_submodule(n), SlimLinear) for n in errors)
    assert isinstance(m.lm_head, torch.nn.Linear)
    assert torch.isfinite(m(input_ids=ids).logits).all()


def test_ladder_error_ordering(tiny_llama):
    model, _, stats = tiny_llama
    err = {}
    for name, r in {
        "absmax": Recipe(quantizer="absmax"),
        "slim_quant": Recipe(),
        "naive": Recipe(adapter="naive"),
        "slim": Recipe(adapter="slim"),
    }.items():
        e = compress_model(copy.deepcopy(model), r, stats)
        err[name] = sum(v["weighted_error"] for v in e.values())
    assert err["slim"] < err["naive"] < err["slim_quant"] < err["absmax"]


def test_peft_trains_only_adapters_and_lowers_loss(tiny_llama):
    model, ids, stats = tiny_llama
    m = copy.deepcopy(model)
    compress_model(m, Recipe(adapter="slim"), stats)
    frozen = {n: p.clone() for n, p in m.named_parameters() if "lora" not in n}
    loss = lambda mod, idx: mod(input_ids=ids[idx], labels=ids[idx]).loss  # noqa: E731
    with torch.no_grad():
        before = float(loss(m, torch.arange(8)))
    losses = finetune_adapters(m, 8, loss, steps=10, lr=1e-2, batch_size=8, seed=0)
    with torch.no_grad():
        after = float(loss(m, torch.arange(8)))
    assert after < before and len(losses) == 10
    assert all(torch.equal(p, frozen[n]) for n, p in m.named_parameters() if "lora" not in n)
    assert not any(p.requires_grad for p in adapter_parameters(m))


def test_recipe_rejects_unknown_keys():
    with pytest.raises(ValueError, match="unknown key"):
        Recipe.from_dict({"pruner": "wanda", "rank": 3})
    with pytest.raises(ValueError, match="peft needs adapters"):
        Recipe.from_dict({"peft": True})


@pytest.mark.parametrize(
    "options, named",
    [
        ({"quantizer": "slim", "group_size": 64}, "'group_size' has no effect, since quantizer is 'slim'"),
        ({"quantizer": "absmax", "clip_search": "rounding"}, "'clip_search' has no effect"),
        ({"pruner": "wanda", "damp": 0.1}, "'damp' has no effect, since pruner is 'wanda'"),
        ({"adapter": "none", "rank_ratio": 0.2}, "'rank_ratio' has no effect, since adapter is 'none'"),
        ({"adapter": "slim", "adapter_group_size": 64}, "'adapter_group_size' has no effect"),
        ({"adapter": "slim", "adapter_quant_order": "before_base"}, "'adapter_quant_order' has no effect"),
        ({"pruner": "magnitude", "shift_zero_metrics": False}, "'shift_zero_metrics' has no effect"),
    ],
)
def test_a_recipe_option_without_effect_is_an_error_naming_it(options, named):
    """Each refused option really changes nothing: compressing with and without it gives the same weight."""
    from methods.slim.lora import compress_weight

    with pytest.raises(ValueError, match=named):
        Recipe.from_dict(options)
    kept = {k: v for k, v in options.items() if k in ("pruner", "quantizer", "adapter")}
    g = torch.Generator().manual_seed(0)
    w, mean_sq = torch.randn(16, 64, generator=g), torch.rand(64, generator=g) + 0.1
    hessian = torch.eye(64) * mean_sq
    base = dict(pruner="wanda", quantizer="slim", bits=4, mean_sq=mean_sq, hessian=hessian, rank_ratio=0.25)
    same = compress_weight(w, **{**base, **kept}).dense()
    assert torch.equal(compress_weight(w, **{**base, **options}).dense(), same)


def test_recipe_options_that_take_effect_or_keep_their_default_are_accepted():
    # the config schema fills in defaults: an option at its default is not a choice the user made
    Recipe.from_dict({"quantizer": "absmax", "clip_search": "official", "rank_ratio": 0.1, "pad_rank": None})
    Recipe.from_dict({"quantizer": "group", "group_size": 64})
    Recipe.from_dict({"pruner": "sparsegpt", "damp": 0.1, "order": "prune_first"})
    Recipe.from_dict(
        {"adapter": "slim", "adapter_bits": 4, "adapter_group_size": 64, "adapter_quant_order": "before_base"}
    )
    Recipe.from_dict({"adapter": "naive", "pad_rank": True, "adapter_group_size": 8})
    Recipe.from_dict({"pruner": "magnitude", "adapter": "slim", "shift_zero_metrics": False})
