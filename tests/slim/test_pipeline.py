"""The SLiM DAG's steps end to end on local stand-ins of the shared artifacts (random tiny Llama and BERT)."""

import csv
import json
import random

import pytest
import torch

from methods.slim import figures, ladder, results, speed

WORDS = [f"w{i}" for i in range(60)]
RECIPES = {
    "wanda_absmax": {"quantizer": "absmax"},
    "wanda_slimquant": {},
    "naive_lora": {"adapter": "naive", "rank_ratio": 0.25},
    "slim_lora": {"adapter": "slim", "rank_ratio": 0.25},
    "slim_lora_peft": {"adapter": "slim", "rank_ratio": 0.25, "peft": True, "adapter_bits": 4, "adapter_group_size": 8},
    "sparsegpt_slim_lora": {
        "pruner": "sparsegpt",
        "adapter": "slim",
        "rank_ratio": 0.25,
        "input_bits": 8,
        "order": "prune_first",
    },
    "group_rtn": {"quantizer": "group", "group_size": 32},
}
PEFT = {"steps": 2, "lr": 1e-3, "batch_size": 2}


def _text(n, seed):
    rng = random.Random(seed)
    return " ".join(" ".join(rng.choices(WORDS, k=rng.randint(6, 12))) + "." for _ in range(n))


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    from transformers import BertConfig, BertModel, BertTokenizerFast, LlamaConfig, LlamaForCausalLM

    from methods.common.lm import save_token_splits
    from methods.common.lm.tokenizer import train_bpe

    root = tmp_path_factory.mktemp("slim")
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
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    LlamaForCausalLM(cfg).save_pretrained(root / "llama")
    ids = {s: torch.randint(0, len(tok), (3000,)) for s in ("train", "validation", "test")}
    save_token_splits(root / "tokens.safetensors", ids)
    (root / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."] + WORDS))
    bert_tok = BertTokenizerFast(vocab_file=str(root / "vocab.txt"))
    bert = BertModel(
        BertConfig(
            vocab_size=len(bert_tok),
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
        )
    )
    bert.save_pretrained(root / "minilm")
    bert_tok.save_pretrained(root / "minilm")
    pairs = root / "pairs.tsv"
    pairs.write_text("\n".join(f"{a}\t{b}\t{s}" for a, b, s in zip(WORDS[:20], WORDS[20:40], range(20))))
    return root


def test_dag_steps(artifacts, tmp_path):
    root = artifacts
    names = list(RECIPES)
    lm_files, mini_files = [], []
    for seed in (0, 1):
        lm_files.append(str(tmp_path / f"lm_s{seed}.json"))
        ladder.lm_ladder(
            str(root / "llama"),
            RECIPES,
            names,
            seed,
            {"n_windows": 4, "n_heldout": 2, "seq_len": 16},
            {"seq_len": 16, "batch_size": 4, "max_windows": 4},
            PEFT,
            1,
            lm_files[-1],
            device=torch.device("cpu"),
            tokens=str(root / "tokens.safetensors"),
        )
        mini_files.append(str(tmp_path / f"mini_s{seed}.json"))
    # the MiniLM step reads corpus_dir/{train,validation,test}.txt
    for seed in (0, 1):
        ladder.minilm_ladder(
            str(root / "minilm"),
            str(root / "corpus"),
            {"wordsim353": str(root / "pairs.tsv")},
            RECIPES,
            names,
            seed,
            {"n_calibration": 8, "n_heldout": 4, "n_eval": 8, "max_length": 16},
            PEFT,
            1,
            mini_files[seed],
            device=torch.device("cpu"),
        )
    lm = json.loads(open(lm_files[0]).read())["results"]
    assert set(lm) == {"dense", *names}
    assert all(lm[n]["output_error"] > 0 for n in names)
    mini = json.loads(open(mini_files[0]).read())["results"]
    assert mini["dense"]["fidelity"] == pytest.approx(1.0, abs=1e-5)
    assert "wordsim353" in mini["slim_lora"]
    speed_json = str(tmp_path / "speed.json")
    speed.measure_speed(
        str(root / "llama"),
        [[64, 128]],
        [1, 4],
        0.1,
        2,
        {"prompt_len": 4, "new_tokens": 3, "repeats": 1, "batch_sizes": [1, 2]},
        {
            "adapter_bits": 4,
            "adapter_group_size": 128,
            "reference_model": {
                "name": "LLaMA-2-7B",
                "hidden": 4096,
                "intermediate": 11008,
                "layers": 32,
                "vocab": 32000,
            },
        },
        1,
        speed_json,
        device=torch.device("cpu"),
    )
    s = json.loads(open(speed_json).read())
    formats = {"dense_fp32", "dense_bf16", "torch_int4", "compiled_int4", "slim_2_4_int4", "slim"}
    assert set(s["decode_tokens_per_s"]) == formats
    assert set(s["decode_tokens_per_s_by_batch"]) == {"1", "2"}
    assert s["decode_tokens_per_s"] == s["decode_tokens_per_s_by_batch"]["1"]
    assert all(set(v) == formats and min(v.values()) > 0 for v in s["decode_tokens_per_s_by_batch"].values())
    assert 0.1 < s["memory_reference"]["ratio"] < 0.5
    figures.ladder_figure(lm_files, mini_files, names[:5], str(tmp_path / "ladder.png"), str(tmp_path / "ladder.csv"))
    rows = list(csv.DictReader(open(tmp_path / "ladder.csv")))
    assert len(rows) == 6 * 2 and {r["recipe"] for r in rows} == {"dense", *names[:5]}
    assert float(rows[0]["lm_perplexity"]) == pytest.approx(lm["dense"]["perplexity"])
    figures.speed_figure(speed_json, str(tmp_path / "speed.png"))
    results.write_paper_claims(
        lm_files,
        mini_files,
        speed_json,
        [64, 128],
        "smoke",
        str(tmp_path / "claims.json"),
        str(tmp_path / "summary.json"),
    )
    claims = json.loads(open(tmp_path / "claims.json").read())["claims"]
    assert {c["id"] for c in claims} >= {"lora_error_ordering", "memory_ratio", "peft_improves"}
    verdicts = {
        "headline": ("reproduced", "not_reproduced", "inconclusive"),
        "check": ("passed", "failed", "inconclusive"),
    }
    assert all(c["verdict"] in verdicts[c["kind"]] for c in claims)
    assert {c["id"] for c in claims if c["kind"] == "check"} == {"layer_speedup", "decode_speedup", "memory_ratio"}
    headline = [c for c in claims if c["kind"] == "headline"]
    assert all(c["nulls"] and c["strongest_null"] and c["verdict_reason"] for c in headline)
    # a null that holds on a seed keeps the claim from reading reproduced
    assert all(c["verdict"] != "reproduced" or not any(n["holds"] for n in c["nulls"]) for c in headline)
    # the trivial alternatives are measured on every seed, on the same windows / sentences
    summary = json.loads(open(tmp_path / "summary.json").read())
    vocab = json.loads((root / "llama" / "config.json").read_text())["vocab_size"]
    assert summary["lm_perplexity_uniform"]["values"] == [float(vocab)] * 2
    uni = summary["lm_perplexity_unigram"]["values"]
    assert uni[0] > 0 and uni == [uni[0]] * 2  # fitted on the train split, not on the seed's calibration windows
    assert all(-1 <= v <= 1 for v in summary["minilm_fidelity_mean"]["values"])


def test_lm_ladder_on_wikipedia_text(artifacts, tmp_path):
    """A pretrained LM with its own tokenizer reads text files: perplexity on exactly `max_windows` windows spread
    over the test text, the trivial predictors fitted on the calibration text, and a model name of its own."""
    from transformers import AutoTokenizer

    from methods.common.lm import load_causal_lm, perplexity
    from methods.common.lm.wikipedia import spread_windows, wikipedia_tokens

    root = artifacts
    wiki = {"calibration": str(tmp_path / "calibration.txt"), "test": str(tmp_path / "test.txt")}
    (tmp_path / "calibration.txt").write_text(_text(300, 7))
    (tmp_path / "test.txt").write_text(_text(200, 8))
    out = tmp_path / "lm.json"
    evaluation = {"seq_len": 16, "batch_size": 4, "max_windows": 3}
    names = ["wanda_slimquant", "slim_lora"]
    ladder.lm_ladder(
        str(root / "llama"),
        RECIPES,
        names,
        0,
        {"n_windows": 4, "n_heldout": 2, "seq_len": 16},
        evaluation,
        PEFT,
        1,
        str(out),
        wikipedia=wiki,
        model_name="stand-in",
    )
    doc = json.loads(out.read_text())
    assert doc["model"] == "stand-in" and set(doc["results"]) == {"dense", *names}
    tok = AutoTokenizer.from_pretrained(str(root / "llama"))
    windows = spread_windows(wikipedia_tokens(tok, wiki["test"]), 16, 3)
    dense, _ = load_causal_lm(str(root / "llama"))
    assert doc["results"]["dense"]["perplexity"] == pytest.approx(perplexity(dense, windows.reshape(-1), 16, 4))
    assert doc["trivial"]["uniform"] == dense.config.vocab_size
    with pytest.raises(ValueError, match="exactly one of tokens"):
        ladder.lm_ladder(str(root / "llama"), RECIPES, names, 0, {}, evaluation, PEFT, 1, str(tmp_path / "x.json"))


def test_peft_starts_from_the_one_shot_rung(artifacts):
    """SLiM-LoRA + PEFT started from the kept SLiM-LoRA model equals SLiM-LoRA + PEFT compressed afresh (no
    step of the compression is random); a user before the last gets a copy, the last takes the model."""
    from methods.common.lm import calibration_windows, capture_linear_inputs, load_causal_lm, load_token_splits
    from methods.slim.compress import one_shot_key

    dense, _ = load_causal_lm(str(artifacts / "llama"))
    ids = calibration_windows(load_token_splits(artifacts / "tokens.safetensors")["train"], 4, 16, 0)
    stats = capture_linear_inputs(dense, ids, dtype=torch.float32)
    recipes = ladder._recipes(
        {**RECIPES, "peft": {"adapter": "slim", "rank_ratio": 0.25, "peft": True}}, ["slim_lora", "peft"]
    )

    def loss(model, idx):
        return model(input_ids=ids[idx], labels=ids[idx]).loss

    args = (stats, stats, PEFT, loss, len(ids), 0, ("lm_head",))
    base, base_errors, _ = ladder._compress_and_tune(dense, recipes["slim_lora"], *args)
    kept = {k: v.clone() for k, v in base.state_dict().items()}
    key = one_shot_key(recipes["slim_lora"])
    assert key == one_shot_key(recipes["peft"])
    reuse = {key: [base, base_errors, 2]}
    first, _, losses_first = ladder._compress_and_tune(dense, recipes["peft"], *args, reuse=reuse)
    assert reuse[key][2] == 1 and all(torch.equal(v, base.state_dict()[k]) for k, v in kept.items())
    last, _, losses_last = ladder._compress_and_tune(dense, recipes["peft"], *args, reuse=reuse)
    assert key not in reuse and last is base
    fresh, _, losses_fresh = ladder._compress_and_tune(dense, recipes["peft"], *args)
    assert losses_first == losses_last == losses_fresh and len(losses_fresh) == PEFT["steps"]
    # gradient checkpointing recomputes the same activations: the same losses and adapters
    ckpt, _, losses_ckpt = ladder._compress_and_tune(dense, recipes["peft"], *args, checkpointing=True)
    assert losses_ckpt == losses_fresh
    assert all(torch.equal(v, ckpt.state_dict()[k]) for k, v in fresh.state_dict().items())
    assert not ckpt.is_activation_checkpointing
    for k, v in fresh.state_dict().items():
        assert torch.equal(v, first.state_dict()[k]) and torch.equal(v, last.state_dict()[k]), k
    # a recipe whose adapters are quantized one-shot is another compression
    assert one_shot_key(recipes["slim_lora"]) != one_shot_key(ladder.Recipe.from_dict(RECIPES["slim_lora_peft"]))


def test_trivial_predictors(artifacts):
    """The unigram predictor's perplexity is exp of the mean negative log add-one frequency over the predicted
    positions of the evaluation windows; the constant embedding's fidelity is the mean cosine to the normalised
    mean calibration embedding."""
    import math

    from methods.common.lm import embed, load_minilm, load_token_splits, mean_embedding_fidelity
    from methods.common.lm.baselines import trivial_perplexities

    splits = load_token_splits(artifacts / "tokens.safetensors")
    vocab = json.loads((artifacts / "llama" / "config.json").read_text())["vocab_size"]
    t = trivial_perplexities(splits, vocab, 16, 4)
    assert t["uniform"] == vocab
    counts = torch.bincount(splits["train"].long(), minlength=vocab).double()
    logp = torch.log((counts + 1) / (counts.sum() + vocab))
    w = splits["test"][: 4 * 16].view(4, 16)
    assert t["unigram"] == pytest.approx(math.exp(-logp[w[:, 1:]].mean().item()))
    model, tok = load_minilm(artifacts / "minilm")
    ref, sent = ["w1 w2 w3 .", "w4 w5 ."], ["w6 w7 .", "w8 w9 w10 ."]
    centre = torch.nn.functional.normalize(embed(model, tok, ref).mean(0), dim=-1)
    expect = float((embed(model, tok, sent) @ centre).mean())
    assert mean_embedding_fidelity(model, tok, ref, sent) == pytest.approx(expect)
