"""The shared LM substrate on random tiny models saved with save_pretrained (no downloads needed)."""

import copy
import math

import pytest
import torch
import torch.nn.functional as F

from methods.common.lm import (
    CheckpointError,
    baselines,
    calibration_windows,
    capture_linear_inputs,
    embed,
    embedding_fidelity,
    llama_config,
    load_causal_lm,
    load_token_splits,
    perplexity,
    prepare,
    save_token_splits,
    spearman,
    word_similarity_spearman,
)
from methods.common.lm import corpus as corpus_mod
from methods.common.lm.baselines import bigram_baseline, ngram_perplexity, unigram_perplexity
from methods.common.lm.tokenizer import train_bpe

TEXT = (
    "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n"
    "The slings and arrows of outrageous fortune,\nOr to take arms against a sea of troubles\n"
) * 40


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    """A random tiny LlamaForCausalLM + a BPE tokenizer, written by save_pretrained."""
    from transformers import LlamaForCausalLM

    d = tmp_path_factory.mktemp("tiny_llama")
    (d / "train.txt").write_text(TEXT)
    tok = train_bpe(d / "train.txt", 300, d)
    torch.manual_seed(0)
    model = LlamaForCausalLM(llama_config(len(tok), 32, 64, 2, 4, 2, 64))
    model.save_pretrained(str(d), safe_serialization=True)
    return d


def test_load_round_trip_gives_the_same_logits(tiny_dir):
    model, tok = load_causal_lm(tiny_dir)
    again, _ = load_causal_lm(tiny_dir)
    x = torch.randint(0, model.config.vocab_size, (2, 16))
    assert torch.equal(model(input_ids=x).logits, again(input_ids=x).logits)
    assert type(model).__name__ == "LlamaForCausalLM"
    assert tok.decode(tok("To be, or not")["input_ids"]) == "To be, or not"


def test_uniform_model_perplexity_is_the_vocabulary_size(tiny_dir):
    model, _ = load_causal_lm(tiny_dir)
    with torch.no_grad():
        model.lm_head.weight.zero_()  # every logit 0: p = 1/V for every token
    ids = torch.randint(0, model.config.vocab_size, (500,))
    assert perplexity(model, ids, seq_len=32) == pytest.approx(model.config.vocab_size, rel=1e-5)


def test_perplexity_is_the_mean_over_non_overlapping_windows(tiny_dir):
    model, _ = load_causal_lm(tiny_dir)
    ids = torch.randint(0, model.config.vocab_size, (170,))  # 5 windows of 32, 10 tokens dropped
    nll = []
    with torch.no_grad():
        for w in range(5):
            x = ids[w * 32 : (w + 1) * 32][None]
            nll.append(F.cross_entropy(model(input_ids=x).logits[0, :-1], x[0, 1:], reduction="none"))
    expected = math.exp(torch.cat(nll).mean().item())
    assert perplexity(model, ids, 32, batch_size=2) == pytest.approx(expected, rel=1e-5)
    assert perplexity(model, ids, 32, max_windows=2) == pytest.approx(
        math.exp(torch.cat(nll[:2]).mean().item()), rel=1e-5
    )
    with pytest.raises(ValueError, match="fewer than one window"):
        perplexity(model, ids[:10], 32)


def test_calibration_windows_are_seeded_slices():
    ids = torch.arange(1000)
    w = calibration_windows(ids, 6, 20, seed=3)
    assert w.shape == (6, 20) and w.dtype == torch.long
    assert torch.equal(w[:, 1:] - w[:, :-1], torch.ones(6, 19, dtype=torch.long))  # contiguous slices
    assert torch.equal(w, calibration_windows(ids, 6, 20, seed=3))
    assert not torch.equal(w, calibration_windows(ids, 6, 20, seed=4))


def test_capture_linear_inputs_matches_the_direct_computation(tiny_dir):
    model, _ = load_causal_lm(tiny_dir)
    w = torch.randint(0, model.config.vocab_size, (3, 16))
    stats = capture_linear_inputs(model, w, batch_size=2)
    assert len(stats) == 2 * 7 + 1  # q, k, v, o, gate, up, down per layer + lm_head
    with torch.no_grad():
        x = model.model.layers[0].input_layernorm(model.model.embed_tokens(w)).reshape(-1, 32).double()
    got = stats["model.layers.0.self_attn.q_proj"]
    torch.testing.assert_close(got["hessian"], x.T @ x / x.shape[0])
    torch.testing.assert_close(got["mean_sq"], (x * x).mean(0))
    assert got["n"] == 48
    torch.testing.assert_close(stats["model.layers.0.self_attn.k_proj"]["hessian"], got["hessian"])


def test_capture_skips_padding_positions(tiny_dir):
    """A dict batch with attention_mask: masked positions are left out (mask all-ones == no mask)."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    bert = BertModel(
        BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    ).eval()
    ids = torch.randint(1, 50, (1, 8))
    full = capture_linear_inputs(bert, [{"input_ids": ids, "attention_mask": torch.ones(1, 8, dtype=torch.long)}])
    padded = torch.cat([ids, torch.zeros(1, 4, dtype=torch.long)], 1)
    mask = torch.cat([torch.ones(1, 8), torch.zeros(1, 4)], 1).long()
    part = capture_linear_inputs(bert, [{"input_ids": padded, "attention_mask": mask}])
    name = "encoder.layer.0.attention.self.query"
    assert part[name]["n"] == 8
    torch.testing.assert_close(part[name]["hessian"], full[name]["hessian"])


def test_checkpoint_that_does_not_match_its_config_names_both(tiny_dir, tmp_path):
    import json
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(tiny_dir, bad)
    cfg = json.loads((bad / "config.json").read_text())
    cfg["hidden_size"] = 64
    (bad / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="do not match config.json"):
        load_causal_lm(bad)


def test_unknown_model_id_says_how_to_use_a_local_path(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(CheckpointError, match="local directory"):
        load_causal_lm("no-such-org/no-such-model-xyz")


def test_token_splits_round_trip(tmp_path):
    splits = {s: torch.randint(0, 100, (n,)) for s, n in [("train", 50), ("validation", 20), ("test", 10)]}
    save_token_splits(tmp_path / "t.safetensors", splits)
    back = load_token_splits(tmp_path / "t.safetensors")
    assert all(torch.equal(back[s], splits[s]) for s in splits)


def test_bigram_baseline_on_a_deterministic_stream():
    """A cyclic stream is predictable from the previous token: bigram ppl -> 1, unigram ppl = V."""
    ids = torch.arange(10).repeat(200)
    logp, lam, ppl, uni = bigram_baseline(ids, ids, 10, seq_len=20, lambdas=(0.999,))
    assert ppl < 1.01
    assert unigram_perplexity(uni, ids, 20) == pytest.approx(10.0, rel=1e-6)
    assert ngram_perplexity(logp, ids, 20) == ppl


def _dense_bigram_log_probs(ids, vocab_size, lam):
    """The dense V x V table the sparse model replaced (log(lam * bigram ML + (1 - lam) * add-one unigram))."""
    uni = torch.bincount(ids, minlength=vocab_size).double()
    big = torch.bincount(ids[:-1] * vocab_size + ids[1:], minlength=vocab_size * vocab_size).double()
    big = big.view(vocab_size, vocab_size)
    p_uni = (uni + 1) / (uni.sum() + uni.numel())
    rows = big.sum(1, keepdim=True)
    p_big = torch.where(rows > 0, big / rows.clamp_min(1), p_uni)
    return torch.log(lam * p_big + (1 - lam) * p_uni)


def test_sparse_bigram_model_equals_the_dense_table_bitwise():
    """Same numbers as the dense table on every (prev, next) pair, seen or unseen, and on tokens never seen
    as a previous token (a vocabulary larger than the stream's tokens); so the perplexities are unchanged."""
    g = torch.Generator().manual_seed(0)
    vocab = 37
    train = torch.randint(0, 30, (5000,), generator=g)  # tokens 30..36 never occur
    model = baselines.ngram_counts(train, vocab).with_lambda(0.8)
    dense = _dense_bigram_log_probs(train, vocab, 0.8)
    prev, nxt = torch.meshgrid(torch.arange(vocab), torch.arange(vocab), indexing="ij")
    assert torch.equal(model.log_prob(prev, nxt), dense)
    test = torch.randint(0, vocab, (640,), generator=g)
    w = test.view(-1, 64)
    assert ngram_perplexity(model, test, 64) == math.exp(-dense[w[:, :-1], w[:, 1:]].mean().item())


def test_figures_step_draws_the_perplexity_bars_and_the_loss_curve(tmp_path):
    from methods.common.io import write_json
    from methods.common.lm import figures

    metrics = {
        "seq_len": 16,
        **{
            f"{s}{k}": v
            for s in ("validation", "test")
            for k, v in (("_ppl", 20.0), ("_bigram_ppl", 40.0), ("_unigram_ppl", 90.0))
        },
    }
    write_json(tmp_path / "metrics.json", metrics)
    write_json(
        tmp_path / "training.json",
        {"history": {"step": [0, 1], "train_loss": [3.0, 2.5], "eval_step": [2], "val_loss": [2.7]}},
    )
    figures.draw_perplexity(tmp_path / "metrics.json", tmp_path / "ppl.png")
    figures.draw_loss_curve(tmp_path / "training.json", tmp_path / "loss.png")
    assert (tmp_path / "ppl.png").stat().st_size > 0 and (tmp_path / "loss.png").stat().st_size > 0
    write_json(tmp_path / "pretrained.json", {"source": "pretrained"})
    with pytest.raises(ValueError, match="no training history"):
        figures.draw_loss_curve(tmp_path / "pretrained.json", tmp_path / "l2.png")


def test_spearman_reference_value():
    # scipy.stats.spearmanr([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) = 0.8207826816681233 (ties averaged)
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(0.8207826816681233, abs=1e-12)
    assert spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)


def test_documents_split_disjointly():
    docs = [(f"d{i}", f"text {i}") for i in range(30)]
    s = corpus_mod.split_documents(docs, 0.1, 0.2, seed=0)
    names = [n for part in s.values() for n, _ in part]
    assert sorted(names) == sorted(n for n, _ in docs) and len(set(names)) == 30
    assert (len(s["validation"]), len(s["test"])) == (3, 6)
    assert s == corpus_mod.split_documents(docs, 0.1, 0.2, seed=0)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from transformers import BertConfig, BertModel, BertTokenizerFast

    d = tmp_path_factory.mktemp("bert")
    words = ["cat", "dog", "tiger", "car", "bus", "love", "sex", "king", "queen"]
    (d / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words) + "\n")
    tok = BertTokenizerFast(vocab=str(d / "vocab.txt"))
    torch.manual_seed(0)
    model = BertModel(
        BertConfig(
            vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
        )
    ).eval()
    return model, tok, d


def test_embed_is_the_normalised_masked_mean(tiny_bert):
    model, tok, _ = tiny_bert
    e = embed(model, tok, ["cat dog", "tiger"])
    with torch.no_grad():
        one = model(**tok(["tiger"], return_tensors="pt")).last_hidden_state[0].mean(0)
    torch.testing.assert_close(e[1], F.normalize(one, dim=0))  # padding of the batch is ignored
    torch.testing.assert_close(e.norm(dim=1), torch.ones(2))
    assert embedding_fidelity(model, model, tok, ["cat dog", "king queen bus"]) == pytest.approx(1.0, abs=1e-6)


def test_embedding_fidelity_reads_precomputed_reference_embeddings_as_the_model(tiny_bert):
    """The reference model's embeddings, computed once, give the same fidelity as the model itself; embeddings
    of other sentences are refused."""
    model, tok, _ = tiny_bert
    other = copy.deepcopy(model)
    with torch.no_grad():
        for p in other.parameters():
            p.add_(0.05 * torch.randn_like(p))
    sentences = ["cat dog", "king queen bus", "a tiger"]
    direct = embedding_fidelity(other, model, tok, sentences)
    assert direct < 0.9999
    assert embedding_fidelity(other, embed(model, tok, sentences), tok, sentences) == direct
    with pytest.raises(ValueError, match="reference embeddings"):
        embedding_fidelity(other, embed(model, tok, sentences[:2]), tok, sentences)


def test_word_similarity_spearman_matches_the_direct_computation(tiny_bert):
    model, tok, d = tiny_bert
    pairs = [("cat", "dog", 8.0), ("tiger", "cat", 7.5), ("car", "love", 1.0), ("king", "queen", 8.5)]
    f = d / "pairs.tsv"
    f.write_text("# comment\n" + "".join(f"{a}\t{b}\t{s}\n" for a, b, s in pairs))
    cos = [float(embed(model, tok, [a])[0] @ embed(model, tok, [b])[0]) for a, b, _ in pairs]
    assert word_similarity_spearman(model, tok, f) == pytest.approx(spearman(cos, [s for *_, s in pairs]))


def test_full_scale_path_offline(tiny_dir, tmp_path):
    """Full scale: a model id through from_pretrained + save_pretrained, a corpus through
    datasets.load_dataset; here a local save_pretrained model and a local text file, same code."""
    model_dir = tmp_path / "model"
    prepare.fetch_pretrained(str(tiny_dir), model_dir, dtype="float32")
    ref, _ = load_causal_lm(tiny_dir)
    got, _ = load_causal_lm(model_dir)
    x = torch.randint(0, ref.config.vocab_size, (1, 12))
    assert torch.equal(ref(input_ids=x).logits, got(input_ids=x).logits)

    text = tmp_path / "wiki.txt"
    text.write_text(TEXT)
    corpus_cfg = {
        "source": "datasets",
        "datasets": {
            "path": "text",
            "name": None,
            "data_files": {s: str(text) for s in ("train", "validation", "test")},
            "splits": {"train": "train", "validation": "validation", "test": "test"},
        },
    }
    prepare.build_corpus(tmp_path / "corpus", corpus_cfg)
    prepare.tokenize(model_dir, tmp_path / "corpus", tmp_path / "tokens.safetensors")
    splits = load_token_splits(tmp_path / "tokens.safetensors")
    assert splits["test"].numel() > 100
    metrics = baselines.evaluate_model(
        model_dir, tmp_path / "tokens.safetensors", {"seq_len": 32, "max_windows": 4}, tmp_path / "m.json"
    )
    assert metrics["test_ppl"] == pytest.approx(perplexity(got, splits["test"], 32, max_windows=4), rel=1e-6)
