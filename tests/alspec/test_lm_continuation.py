"""ALSpec's LM step on real text: the pretrained-LM path (model directory + tokenizer + a text file), the
shared prefill, and the exact mode's perplexity against a plain forward pass."""

import math

import pytest
import torch
import torch.nn.functional as F

from methods.alspec.engine import SpecConfig, SpecDecoder
from methods.alspec.evaluate import evaluate_lm
from methods.common.io import read_json

TEXT = "\n\n".join(
    f"Article {i}. The river flows past the old mill, and the miller counts {i} sacks of grain before dawn."
    for i in range(60)
)


@pytest.fixture(scope="module")
def lm_dir(tmp_path_factory):
    """A tiny random Llama saved with a byte-level BPE tokenizer: the layout lm_wheel_model writes."""
    from transformers import LlamaForCausalLM

    from methods.common.lm import llama_config
    from methods.common.lm.tokenizer import train_bpe

    d = tmp_path_factory.mktemp("pretrained")
    (d / "train.txt").write_text(TEXT)
    tok = train_bpe(d / "train.txt", 300, d)
    torch.manual_seed(0)
    cfg = llama_config(len(tok), 32, 64, 3, 4, 2, 64)
    LlamaForCausalLM(cfg).save_pretrained(d, safe_serialization=True)
    (d / "test.txt").write_text(TEXT)
    return d


def _run(lm_dir, tmp_path, context=32, n_windows=4):
    return evaluate_lm(
        lm_dir,
        lm_dir / "test.txt",
        2,
        2,
        [0.05, 0.10],
        "layer",
        n_windows,
        context,
        6,
        2,
        tmp_path / "lm.json",
        n_draws=2,
    )


def test_exact_mode_perplexity_is_the_plain_forward_pass(lm_dir, tmp_path):
    from methods.common.lm import load_causal_lm
    from methods.common.lm.wikipedia import spread_windows, wikipedia_tokens

    doc = _run(lm_dir, tmp_path)
    assert read_json(tmp_path / "lm.json")["modes"]["exact"]["perplexity"] == doc["modes"]["exact"]["perplexity"]
    model, tok = load_causal_lm(lm_dir)
    windows = spread_windows(wikipedia_tokens(tok, lm_dir / "test.txt"), 32, 4)  # (4, 32)
    with torch.no_grad():
        logits = model(windows).logits[:, 32 - 6 : -1]  # predictions of the 5 scored decode positions
    nll = F.cross_entropy(logits.transpose(1, 2), windows[:, 32 - 5 :])
    assert doc["modes"]["exact"]["perplexity"] == pytest.approx(math.exp(nll), rel=1e-4)
    assert len(doc["modes"]["alspec_0.10"]["hit_rate_by_layer"]) == 3
    assert len(doc["draws"]) == 2 and doc["modes"]["exact"]["hit_rate"] == 0.0


def test_context_beyond_the_model_is_refused_naming_the_key(lm_dir, tmp_path):
    with pytest.raises(ValueError, match="alspec.lm.context"):
        _run(lm_dir, tmp_path, context=128)


def test_a_shared_prefill_gives_the_runs_of_a_fresh_one(tiny_llama, ids):
    dec = SpecDecoder(tiny_llama)
    _, cache = dec.prefill(ids[:, :40], capacity=48)
    spec = SpecConfig("alspec", 4, 4, 0.10)
    fresh = dec.run(ids, 40, spec)
    shared = dec.run(ids, 40, spec, prefilled=cache)
    again = dec.run(ids, 40, spec, prefilled=cache)  # the first run must not have written into `cache`
    for key in ("logits", "hits", "approx"):
        assert torch.equal(fresh[key], shared[key]) and torch.equal(fresh[key], again[key])
    with pytest.raises(ValueError, match="prefilled cache"):
        dec.run(ids, 39, spec, prefilled=cache)
