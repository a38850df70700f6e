"""The NestQuant DAG's steps end to end on local stand-ins (random tiny Llama and BERT), and the
equal-rate comparison they rest on."""

import csv
import json
import math
import random

import pytest
import torch

from methods.common.claims import validate_claims
from methods.nestquant import evaluate, figures, results, synthetic
from methods.nestquant.model import QuantLinear
from methods.nestquant.quant import nestquant_rate, rtn

WORDS = [f"w{i}" for i in range(60)]
QUANT = {
    "q": 14,
    "rtn_bits": 4,
    "rotation": "kronecker",
    "kv_cache": "post_rope",
    "betas": {
        "weights": [4, 5.5, 7, 18],
        "activations": [3.47, 4.74, 6.9, 18.11],
        "keys": [3.5, 4.58, 6.47, 17.06],
        "values": [3.53, 5.59, 9.62, 29.03],
    },
}


def _text(n, seed):
    rng = random.Random(seed)
    return " ".join(" ".join(rng.choices(WORDS, k=rng.randint(6, 12))) + "." for _ in range(n))


def _q4_1_weight(rows, cols, gen):
    """A weight as a Q4_1 GGUF stores it, built from its codes: per group of 32 inputs of a row a scale d and
    a minimum m (multiples of 2^-10, so every value is exact in float32) and codes q in 0..15, w = m + d * q;
    each group holds the codes 0 and 15, so its range is exactly [m, m + 15 d]."""
    groups = cols // 32
    q = torch.randint(0, 16, (rows, groups, 32), generator=gen).float()
    q[..., 0], q[..., 1] = 0.0, 15.0
    d = torch.randint(8, 48, (rows, groups, 1), generator=gen).float() / 1024
    m = torch.randint(-64, 64, (rows, groups, 1), generator=gen).float() / 1024
    return (m + d * q).reshape(rows, cols)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    from transformers import BertConfig, BertModel, BertTokenizerFast, LlamaConfig, LlamaForCausalLM

    from methods.common.lm import save_token_splits
    from methods.common.lm.tokenizer import train_bpe

    root = tmp_path_factory.mktemp("nestquant")
    corpus = root / "corpus"
    corpus.mkdir()
    for i, split in enumerate(("train", "validation", "test")):
        (corpus / f"{split}.txt").write_text(_text(200, i))
    tok = train_bpe(corpus / "train.txt", 128, root / "llama")
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
    )
    llama = LlamaForCausalLM(cfg)
    with torch.no_grad():  # the block weights on a Q4_1 grid, as SmolLM2's dequantized GGUF has them
        gen = torch.Generator().manual_seed(0)
        for name, mod in llama.named_modules():
            if isinstance(mod, torch.nn.Linear) and "lm_head" not in name:
                mod.weight.copy_(_q4_1_weight(*mod.weight.shape, gen))
    llama.save_pretrained(root / "llama")
    (root / "wiki").mkdir()
    (root / "wiki" / "calibration.txt").write_text(_text(300, 10))
    (root / "wiki" / "test.txt").write_text(_text(300, 11))
    save_token_splits(
        root / "tokens.safetensors", {s: torch.randint(0, len(tok), (3000,)) for s in ("train", "validation", "test")}
    )
    (root / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."] + WORDS))
    bert_tok = BertTokenizerFast(vocab_file=str(root / "vocab.txt"))
    BertModel(
        BertConfig(
            vocab_size=len(bert_tok),
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
        )
    ).save_pretrained(root / "minilm")
    bert_tok.save_pretrained(root / "minilm")
    (root / "pairs.tsv").write_text("\n".join(f"{a}\t{b}\t{s}" for a, b, s in zip(WORDS[:20], WORDS[20:40], range(20))))
    return root


def test_dag_steps(artifacts, tmp_path):
    root = artifacts
    syn, lm, mini = [], [], []
    for seed in (0, 1):
        syn.append(str(tmp_path / f"syn_s{seed}.json"))
        synthetic.synthetic(
            ["gaussian", "student_t"],
            64,
            64,
            3,
            [8, 14],
            QUANT["betas"]["weights"],
            [3, 4, 5],
            [8, 16, 32],
            seed,
            syn[-1],
        )
        lm.append(str(tmp_path / f"lm_s{seed}.json"))
        evaluate.lm_eval_pretrained(
            str(root / "llama"),
            str(root / "wiki" / "calibration.txt"),
            str(root / "wiki" / "test.txt"),
            QUANT,
            ["w4a4kv4", "w4"],
            {"n_windows": 8, "seq_len": 16},
            {"seq_len": 16, "batch_size": 4, "max_windows": 4},
            seed,
            1,
            lm[-1],
            device=torch.device("cpu"),
        )
        mini.append(str(tmp_path / f"mini_s{seed}.json"))
        evaluate.minilm_eval(
            str(root / "minilm"),
            str(root / "corpus"),
            {"wordsim353": str(root / "pairs.tsv"), "simlex999": str(root / "pairs.tsv")},
            QUANT,
            {"n_calibration": 16, "n_eval": 8, "max_length": 16},
            seed,
            1,
            mini[-1],
            device=torch.device("cpu"),
        )
    s = json.loads(open(syn[0]).read())
    assert s["results"]["gaussian"]["nestquant"][1]["rate"] == pytest.approx(nestquant_rate(14, 4, 64))
    run = json.loads(open(lm[0]).read())
    for setting in ("w4a4kv4", "w4"):
        res = run["results"][setting]
        assert set(res) == set(evaluate.METHODS) | ({evaluate.GRID_TRAP} if setting == "w4" else set())
        # LDLQ minimizes tr(dW H dW^T) greedily: below nearest-point quantization with the same rotation
        assert res["nestquant_ldlq"]["weight_error"] < res["nestquant"]["weight_error"]
        assert res["hadrtn_ldlq"]["weight_error"] < res["hadrtn"]["weight_error"]
    m = json.loads(open(mini[0]).read())["results"]
    assert m["fp"]["fidelity"] == pytest.approx(1.0, abs=1e-5)
    assert all(m[x]["weight_error"] > 0 for x in evaluate.METHODS)
    assert m["nestquant_ldlq"]["weight_error"] < m["nestquant"]["weight_error"]
    # the grid trap, reported: on weights stored on a Q4_1 grid the group-32 asymmetric RTN is lossless, and
    # nothing else is (every claim's comparator is per-row or rotated)
    w4 = run["results"]["w4"]
    assert w4[evaluate.GRID_TRAP]["perplexity"] == pytest.approx(run["results"]["fp"]["perplexity"], rel=1e-5)
    assert w4[evaluate.GRID_TRAP]["weight_error"] < 1e-8
    assert min(w4[m]["weight_error"] for m in evaluate.METHODS) > 1e-4
    assert run["rates"][evaluate.GRID_TRAP]["weights"] == 5.0 and run["model"] == "smollm2-135m"
    figures.synthetic_figure(syn, 14, str(tmp_path / "synthetic.png"), str(tmp_path / "synthetic.csv"))
    rows = list(csv.DictReader(open(tmp_path / "synthetic.csv")))
    assert {r["quantizer"] for r in rows} == {"rtn", "hadrtn", "uniform_clipped", "nestquant"}
    assert {r["seed"] for r in rows} == {"0", "1"} and len(rows) == 2 * 2 * (3 + 3 + 3 + 2)
    figures.quality_figure(lm, mini, ["w4a4kv4", "w4"], str(tmp_path / "quality.png"))
    assert (tmp_path / "quality.png").read_bytes()[:4] == b"\x89PNG"
    results.write_paper_claims(
        syn, lm, mini, 14, "smoke", str(tmp_path / "claims.json"), str(tmp_path / "summary.json")
    )
    doc = json.loads(open(tmp_path / "claims.json").read())
    validate_claims(doc)
    trap = next(c for c in doc["claims"] if c["id"] == "lm_grid_trap")
    assert trap["kind"] == "check" and trap["verdict"] == "passed"
    assert {c["id"] for c in doc["claims"]} >= {"lm_gap_reduction", "synthetic_beats_scalar_gaussian"}
    summary = json.loads(open(tmp_path / "summary.json").read())
    fp, base, nq = (
        summary[f"lm_{k}"]["values"][0]
        for k in ("perplexity_fp", "w4a4kv4_perplexity_hadrtn_ldlq", "w4a4kv4_perplexity_nestquant_ldlq")
    )
    assert summary["lm_w4a4kv4_gap_reduction_nestquant_ldlq_vs_hadrtn_ldlq"]["values"][0] == pytest.approx(
        (base - nq) / (base - fp)
    )
    # equal budget: the scalar null of the LM claims gets no fewer bits per entry than NestQuant
    for kind in ("weights", "kv"):
        assert summary[f"rate_hadrtn17_{kind}"]["values"][0] >= summary[f"rate_nestquant_{kind}"]["values"][0]
    # the trivial alternatives are measured: uniform = the vocabulary size, unigram / bigram fitted on train
    vocab = run["trivial"]["uniform"]
    assert summary["lm_perplexity_uniform"]["values"] == [vocab] * len(lm)
    assert summary["lm_perplexity_unigram"]["values"][0] > 0 and summary["lm_perplexity_bigram"]["values"][0] > 0
    assert -1 <= summary["minilm_fidelity_mean"]["values"][0] <= 1
    headline = [c for c in doc["claims"] if c["kind"] == "headline"]
    assert all(c["verdict"] != "reproduced" or not any(n["holds"] for n in c["nulls"]) for c in headline)


def test_rtn_levels_is_the_wider_symmetric_grid():
    """rtn(levels=17): 17 points -8 .. 8 times absmax / 8, log2(17) = 4.09 bits per entry, no fewer than
    NestQuant's at q = 14 (4.06); the default 4-bit grid keeps its 2^4 points."""
    from methods.nestquant.quant import nestquant_rate, rtn, rtn_levels_rate

    torch.manual_seed(0)
    x = torch.randn(4, 64)
    y = rtn(x, 4, levels=17)
    scale = (x.abs().amax(-1, keepdim=True) / 8).half().float()
    assert torch.allclose(y, torch.clamp(torch.round(x / scale), -8, 8) * scale)
    assert len(torch.unique(torch.round(y / scale))) <= 17
    assert rtn_levels_rate(17, 64) >= nestquant_rate(14, 4, 64)
    assert torch.equal(rtn(x, 4), rtn(x, 4, levels=None))
    with pytest.raises(ValueError):
        rtn(x, 4, levels=16)


def test_error_at_rate_is_exact_on_a_log_linear_curve():
    """Scalar quantizers at high rate: error = c 2^(-2R); interpolation (and extrapolation) in log-error is exact."""
    curve = [{"rate": r, "mse": 3.0 * 2 ** (-2 * r)} for r in (2.0, 3.0, 4.5)]
    for r in (2.5, 4.06, 5.2):
        assert synthetic.error_at_rate(curve, r, "mse") == pytest.approx(3.0 * 2 ** (-2 * r), rel=1e-9)


def test_gain_is_zero_against_itself_and_counts_matmul_error_as_a_power():
    nq = [{"rate": 3.0, "q": 8, "mse": 0.04, "matmul": 0.2}, {"rate": 4.0, "q": 14, "mse": 0.01, "matmul": 0.1}]
    half = [{"rate": p["rate"], "mse": p["mse"] * 2, "matmul": p["matmul"] * 2} for p in nq]
    g = synthetic.gains_db({"nestquant": nq, "same": nq, "worse": half}, 14, "mse")
    assert g["same"] == pytest.approx(0.0, abs=1e-12)
    assert g["worse"] == pytest.approx(10 * math.log10(2))
    assert synthetic.gains_db({"nestquant": nq, "worse": half}, 14, "matmul")["worse"] == pytest.approx(
        20 * math.log10(2)
    )


def test_rtn_w4_model_holds_rtn_of_each_weight(artifacts):
    """Method rtn, setting w4: no rotation, each weight replaced by its per-channel absmax RTN."""
    from methods.common.lm import load_causal_lm

    model, _ = load_causal_lm(str(artifacts / "llama"))
    qm = evaluate.quantize_model(model, "rtn", "w4", 14, evaluate._betas(QUANT, 14), 4, 0, 16, None, ("lm_head",))
    layers = {n: m for n, m in qm.named_modules() if isinstance(m, QuantLinear)}
    assert layers and all(not m.rotate_input for m in layers.values())
    for name, layer in layers.items():
        torch.testing.assert_close(layer.weight_hat, rtn(model.get_submodule(name).weight.detach().float(), 4))
    assert evaluate.quantize_model(model, "fp", "w4", 14, {}, 4, 0, 16, None, ()) is model
    with pytest.raises(ValueError, match="calibration Hessians"):
        evaluate.quantize_model(model, "nestquant_ldlq", "w4", 14, evaluate._betas(QUANT, 14), 4, 0, 16, None, ())


def test_student_t_has_its_variance_and_heavy_tails():
    g = torch.Generator().manual_seed(0)
    t = synthetic.sample_matrix("student_t", 400, 500, g, 6)
    assert t.var().item() == pytest.approx(6 / 4, rel=0.05)  # df / (df - 2)
    z = synthetic.sample_matrix("gaussian", 400, 500, g, 6)
    kurt = lambda x: ((x - x.mean()) ** 4).mean() / x.var() ** 2  # noqa: E731
    assert kurt(t) > kurt(z) + 1  # excess kurtosis 6 / (df - 4) = 3 vs 0
    with pytest.raises(ValueError, match="nestquant.synthetic.distributions"):
        synthetic.sample_matrix("cauchy", 2, 2, g, 3)
