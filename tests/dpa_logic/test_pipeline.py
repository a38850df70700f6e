"""The DAG's steps end to end at toy size, and the full-scale fetch and LM steps offline on a tiny random
Llama loaded through from_pretrained, with a local jsonl through datasets.load_dataset."""

import csv
import json

import pytest

from methods.common.claims import validate_claims
from methods.dpa_logic import experiments, figures, lm, results, tabular

TASK = dict(n_prompts=3, n_responses=4, pairs_per_prompt=3, reward_scale=2.0, init_scale=0.5, max_length=3)
LOSSES = ["dpo", "orpo_or", "dpo_strict", "orpo_strict", "orpo_lenient", "cpo"]


def test_steps_write_claims(tmp_path):
    experiments.semantics_experiment(50, 0, 2, 10, tmp_path / "semantics.json")
    files = {}
    for policy, dim in {"shared": 2, "free": 4}.items():
        files[policy] = []
        for seed in (0, 1):
            f = tmp_path / f"{policy}{seed}.json"
            tabular.tabular_experiment(seed, policy, {**TASK, "feature_dim": dim}, LOSSES, {}, 3, 0.05, 1, f)
            files[policy].append(str(f))
    pngs = [tmp_path / f"{k}.png" for k in ("decompile", "lattice", "training")]
    figures.make_figures(tmp_path / "semantics.json", files, *pngs, tmp_path / "accuracy.csv")
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)
    rows = list(csv.DictReader((tmp_path / "accuracy.csv").open()))
    assert [r["label"] for r in rows] == [f"{p}/{n}" for p in ("shared", "free") for n in [*LOSSES, "reference"]]
    first = json.loads((tmp_path / "shared0.json").read_text())["losses"]["dpo"]["test_accuracy"]
    second = json.loads((tmp_path / "shared1.json").read_text())["losses"]["dpo"]["test_accuracy"]
    assert float(rows[0]["test_accuracy"]) == pytest.approx((first + second) / 2, rel=1e-5)
    results.write_paper_claims(
        tmp_path / "semantics.json", files, "smoke", tmp_path / "claims.json", tmp_path / "summary.json"
    )
    doc = json.loads((tmp_path / "claims.json").read_text())
    validate_claims(doc)
    by_id = {c["id"]: c for c in doc["claims"]}
    headline = [c for c in doc["claims"] if c["kind"] == "headline"]
    assert {c["id"] for c in headline} == {
        f"derived_loss_competitive_{p}_{d}"
        for p in ("shared", "free")
        for d in ("dpo_strict", "orpo_strict", "orpo_lenient")
    }
    for c in headline:
        assert c["setting"] == "toy" and {n["name"] for n in c["nulls"]} == {"reference_policy", "random_predictor"}
        assert all(n["kind"] == "trivial" and not n["self_tie"] for n in c["nulls"])
        assert "testable_if" not in c
    assert "strict_variant_raises_winner_free_dpo_strict" in by_id
    assert by_id["lenient_variant_lowers_winner_shared_orpo_lenient"]["kind"] == "check"
    assert not any(i.startswith(("compiled_equals_closed", "lattice_size")) for i in by_id)


def test_bad_hparams_named(tmp_path):
    with pytest.raises(ValueError, match="hparams.dpo"):
        tabular.tabular_experiment(
            0, "shared", {**TASK, "feature_dim": 2}, ["dpo"], {"dpo": {"gamma": 1.0}}, 1, 0.1, 1, tmp_path / "x.json"
        )
    with pytest.raises(ValueError, match="no preference structure"):
        tabular.tabular_experiment(0, "shared", {**TASK, "feature_dim": 2}, ["ipo"], {}, 1, 0.1, 1, tmp_path / "x.json")


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    """A random tiny Llama and a BPE tokenizer saved with save_pretrained; a local preference jsonl."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from methods.common.lm.tokenizer import train_bpe

    root = tmp_path_factory.mktemp("dpa_lm")
    rows = [
        {
            "prompt": f"question {i}: which colour is the sky?",
            "chosen": f"blue, answer {i}",
            "rejected": [{"role": "user", "content": "q"}, {"role": "assistant", "content": f"green {i} no"}],
        }
        for i in range(12)
    ]
    text = root / "text.txt"
    text.write_text("\n".join(f"{r['prompt']} {r['chosen']} green no" for r in rows) * 5)
    tok = train_bpe(text, 300, root / "model")
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        eos_token_id=tok.eos_token_id,
        bos_token_id=tok.bos_token_id,
    )
    LlamaForCausalLM(cfg).save_pretrained(root / "model", safe_serialization=True)
    data = root / "prefs.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows))
    return root


LOCAL = {"split": "train", "path": "json"}


def test_fetch_then_lm_step_offline(tiny_lm, tmp_path):
    """Full scale: the fetch step (submit host) copies the model and writes the shuffled pairs; the LM job reads
    only those files."""
    model, pairs = tmp_path / "model", tmp_path / "pairs.jsonl"
    lm.fetch_lm(
        str(tiny_lm / "model"), {**LOCAL, "data_files": str(tiny_lm / "prefs.jsonl")}, 12, str(model), str(pairs)
    )
    assert (model / "model.safetensors").is_file() and len(lm.read_pairs(pairs)) == 12
    assert lm.read_pairs(pairs) == lm.load_pairs("json", str(tiny_lm / "prefs.jsonl"), "train", 12, seed=0)
    out = tmp_path / "lm.json"
    lm.lm_experiment(
        str(model),
        str(pairs),
        n_train=8,
        n_test=4,
        max_prompt=16,
        max_response=8,
        losses=["dpo", "orpo_strict"],
        hparams={},
        steps=2,
        batch_size=4,
        lr=1e-3,
        seeds=[0],
        out_json=out,
    )
    doc = json.loads(out.read_text())
    assert set(doc["runs"]) == {"dpo", "orpo_strict"}
    r = doc["runs"]["dpo"][0]
    assert len(r["loss_curve"]) == 2 and r["loss_curve"][0] == pytest.approx(0.6931471805599453, abs=1e-6)
    assert 0.0 <= r["test_reward_accuracy"] <= 1.0


def test_lm_steps_too_few_pairs(tiny_lm, tmp_path):
    with pytest.raises(ValueError, match="fewer than n_train"):
        lm.fetch_lm(
            str(tiny_lm / "model"),
            {**LOCAL, "data_files": str(tiny_lm / "prefs.jsonl")},
            20,
            str(tmp_path / "m"),
            str(tmp_path / "p.jsonl"),
        )
    with pytest.raises(ValueError, match="fewer than n_train"):
        lm.lm_experiment(
            str(tiny_lm / "model"),
            str(tiny_lm / "prefs.jsonl"),
            n_train=10,
            n_test=10,
            max_prompt=16,
            max_response=8,
            losses=["dpo"],
            hparams={},
            steps=1,
            batch_size=4,
            lr=1e-3,
            seeds=[0],
            out_json=tmp_path / "x.json",
        )
