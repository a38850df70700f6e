"""Banyan's data: the grammar's gold similarities, the official length filter, the full-scale loader on a
local stand-in of the Hugging Face sets (offline), and the evaluation metric."""

import json

import numpy as np
import pytest
import torch

from methods.banyan import grammar
from methods.banyan.data import draw_for, encode_texts, fetch_datasets, keep_sentence, pack, prepare, unpack, words_of
from methods.banyan.train import covered_pairs, word_mean
from methods.common.io import read_json


def test_no_word_belongs_to_two_concepts():
    seen = {}
    for table in (grammar.NOUNS, grammar.VERBS, grammar.ADJECTIVES, grammar.PLACES):
        for cat, concepts in table.items():
            for i, syns in enumerate(concepts):
                for w in syns:
                    assert w not in seen, f"{w} in {seen[w]} and {(cat, i)}"
                    seen[w] = (cat, i)
    assert not set(seen) & set(grammar.FUNCTION_WORDS)


def test_frame_similarity_is_jaccard_of_slots():
    a = {"agent": 1, "action": 2, "patient": 3}
    assert grammar.frame_similarity(a, dict(a)) == 1.0
    b = {"agent": 1, "action": 2, "patient": 4, "place": 0}
    assert grammar.frame_similarity(a, b) == pytest.approx(2 / 5)
    swapped = {"agent": 3, "action": 2, "patient": 1}  # roles matter: a swap keeps only the verb
    assert grammar.frame_similarity(a, swapped) == pytest.approx(1 / 5)


def test_realised_sentences_carry_their_frame():
    rng = np.random.default_rng(0)
    for _ in range(50):
        frame = grammar.sample_frame(rng, 0.5)
        words = grammar.realise(rng, frame, 0.5)
        for slot, concept in frame.items():
            syns = grammar.SLOT_CONCEPTS[slot][concept][1]
            assert any(w in syns for w in words), (slot, words)
        assert ("was" in words) == ("by" in words)


def test_word_pair_gold():
    a, b, gold = grammar.word_pairs(0, 60)
    concept = {
        w: (cat, i)
        for table in (grammar.NOUNS, grammar.VERBS, grammar.ADJECTIVES, grammar.PLACES)
        for cat, cs in table.items()
        for i, syns in enumerate(cs)
        for w in syns
    }
    for x, y, g in zip(a, b, gold):
        same_concept, same_cat = concept[x] == concept[y], concept[x][0] == concept[y][0]
        assert g == (2.0 if same_concept else 1.0 if same_cat else 0.0)
        assert x != y
    assert sorted(set(gold)) == [0.0, 1.0, 2.0]


def test_length_filter_and_packing():
    assert [keep_sentence(n, 3, 200) for n in (3, 4, 200, 201)] == [False, True, True, False]
    sents = [[1, 2, 3], [4], [5, 6]]
    tokens, offsets = pack(sents)
    assert [s.tolist() for s in unpack(tokens, offsets)] == sents
    assert words_of("The dog's BALL, 3 times!") == ["the", "dog's", "ball", "3", "times"]
    vocab = ["<unk>", "dog", "the"]
    assert [t.tolist() for t in encode_texts(["the dog barked", ""], vocab)] == [[2, 1, 0], [0]]


def test_word_coverage_and_mean():
    s = {"a": ["dog", "cat", "dog"], "b": ["cat", "zebra", "dog"], "gold": [1, 2, 3]}
    assert covered_pairs(s, {"dog": 1, "cat": 2}) == [0]
    metrics = {"word_x": [0.5, 0.7], "word_x_covered": 60, "word_y": [0.1, 0.1], "word_y_covered": 10}
    assert word_mean(metrics, ["x", "y"], 50, 2) == [0.5, 0.7]
    assert all(np.isnan(word_mean(metrics, ["y"], 50, 2)))


def _grammar_cfg(**kw):
    return {
        "source": "grammar",
        "seed": 0,
        "n_train": 200,
        "n_eval_pairs": 20,
        "n_word_pairs": 12,
        "grammar": {"p_optional": 0.5, "p_passive": 0.3},
        "min_tokens": 3,
        "max_tokens": 200,
        "vocab_size": 100,
        "word_sets": [],
        **kw,
    }


def test_prepare_grammar_and_word_files(tmp_path):
    sim = tmp_path / "simlex.txt"
    sim.write_text("# comment\ndog\tcat\t3.5\nhound\tpuppy\t9.0\n")
    draws = prepare(_grammar_cfg(), {"simlex999": str(sim)}, seeds=[0, 1, 2])["draws"]
    assert sorted(draws) == ["0", "1", "2"]
    data = draws["0"]
    assert data["vocab"][0] == "<unk>" and len(data["vocab"]) == len(set(data["vocab"]))
    assert len(data["train_offsets"]) == 201  # every grammar sentence has more than 3 tokens
    assert int(data["train_tokens"].min()) > 0  # no unknown word in the grammar's own corpus
    assert data["word_sets"]["simlex999"]["gold"] == [3.5, 9.0]
    assert len(data["sentence_sets"]["grammar"]["gold"]) == 20
    # every seed has its own draw of the corpus and of the held-out pairs; seed 0 is the cfg.seed draw
    assert not torch.equal(data["train_tokens"][:50], draws["1"]["train_tokens"][:50])
    assert data["sentence_sets"]["grammar"]["a"] != draws["1"]["sentence_sets"]["grammar"]["a"]
    assert torch.equal(prepare(_grammar_cfg(), {}, seeds=[0])["draws"]["0"]["train_tokens"], data["train_tokens"])
    assert draw_for({"draws": draws}, 2) is draws["2"]
    with pytest.raises(ValueError, match="min_tokens"):
        prepare(_grammar_cfg(min_tokens=50, max_tokens=60), {}, seeds=[0])


def _standin_cfg(tmp_path):
    """config/full.yaml's `datasets` source on a local JSON corpus and STS set (offline)."""
    corpus = tmp_path / "corpus.jsonl"
    docs = [
        "The cat sat on the mat. A dog ran in the park!\nShort one.",
        "Birds fly over the river near the town. The cat saw a bird.",
    ] * 5
    corpus.write_text("\n".join(json.dumps({"text": d}) for d in docs))
    sts = tmp_path / "sts.jsonl"
    rows = [("a cat sat", "the cat sat", 4.5), ("a dog ran", "birds fly", 0.5), ("the town", "a town", 4.0)]
    sts.write_text("\n".join(json.dumps({"s1": a, "s2": b, "score": g}) for a, b, g in rows))
    cfg = _grammar_cfg(
        source="datasets",
        n_train=8,
        vocab_size=10,
        corpus={
            "path": "json",
            "data_files": str(corpus),
            "split": "train",
            "text_column": "text",
            "split_sentences": True,
        },
        sts={
            "toy": {
                "path": "json",
                "data_files": str(sts),
                "split": "train",
                "columns": {"a": "s1", "b": "s2", "score": "score"},
            }
        },
    )
    return cfg


def test_prepare_full_scale_loader_on_local_stand_ins(tmp_path):
    """The `datasets` path of config/full.yaml, offline: a local JSON corpus and STS set."""
    cfg = _standin_cfg(tmp_path)
    full = prepare(cfg, {}, seeds=[0, 1, 2])
    assert list(full["draws"]) == ["all"]  # real data: one draw shared by the seeds
    data = draw_for(full, 1)
    sents = unpack(data["train_tokens"], data["train_offsets"])
    assert all(3 < len(s) <= 200 for s in sents) and len(sents) == 16  # "Short one." is filtered out
    assert len(data["vocab"]) == 10 and data["vocab"][1] == "the"
    assert data["sentence_sets"]["toy"]["gold"] == [4.5, 0.5, 4.0]
    bad = dict(cfg, corpus=dict(cfg["corpus"], text_column="body"))
    with pytest.raises(ValueError, match="text_column"):
        prepare(bad, {}, seeds=[0])


def test_the_submit_host_fetch_fills_the_cache_the_data_job_reads(tmp_path):
    """banyan_download's fetch into a cache folder; the data step reads the same sets through it."""
    cfg = _standin_cfg(tmp_path)
    cache = tmp_path / "hf"
    fetch_datasets(cfg, str(cache), str(tmp_path / "hf.json"))
    manifest = read_json(tmp_path / "hf.json")
    assert manifest["rows"] == {"corpus": 10, "sts/toy": 3} and any(cache.iterdir())
    cached, direct = (prepare(cfg, {}, seeds=[0], cache_dir=c)["draws"]["all"] for c in (str(cache), None))
    assert torch.equal(cached["train_tokens"], direct["train_tokens"]) and cached["vocab"] == direct["vocab"]


def test_seed_groups_merge_into_the_all_seeds_metrics(tmp_path):
    """Paper scale trains one seed per job; merged, the files give what one job over all seeds writes."""
    from methods.banyan.model import VARIANTS
    from methods.banyan.results import VARIANTS as RESULT_VARIANTS
    from methods.banyan.results import claims_metrics
    from methods.common.io import write_json

    assert RESULT_VARIANTS == list(VARIANTS)  # results.py keeps its own copy so the claims job needs no torch

    def doc(seeds):
        return {
            "variant": "banyan",
            "seeds": seeds,
            "sts_mean": [0.1 * s for s in seeds],
            "loss_final": [1.0 + s for s in seeds],
            "word_x_covered": 60,
            "non_embedding_parameters": 14,
        }

    write_json(tmp_path / "all.json", doc([0, 1, 2]))
    for s in (2, 0, 1):
        write_json(tmp_path / f"seed{s}.json", doc([s]))
    write_json(tmp_path / "minilm.json", {"sts_mean": [0.5, 0.5, 0.5]})
    together = claims_metrics({"banyan": [str(tmp_path / "all.json")]}, str(tmp_path / "minilm.json"))
    split = claims_metrics(
        {"banyan": [str(tmp_path / f"seed{s}.json") for s in (2, 0, 1)]}, str(tmp_path / "minilm.json")
    )
    assert split == together and split["sts_mean_banyan"] == [0.0, 0.1, 0.2]


def test_trivial_nulls_bag_of_words_and_untrained_metrics(tmp_path):
    """The claims' trivial nulls: the count bag of words (cosine of token counts against gold) and the untrained
    network's scores, named <metric>_bow and untrained_<metric>_<variant> for claims.yaml."""
    from methods.banyan.minilm import bow_scores, bow_vectors
    from methods.banyan.results import claims_metrics
    from methods.common.io import write_json
    from methods.common.lm.minilm import spearman

    vocab = ["<unk>", "a", "b", "c", "d"]
    v = bow_vectors(encode_texts(["a a b", "d"], vocab), len(vocab))
    assert v.tolist() == [[0, 2, 1, 0, 0], [0, 0, 0, 0, 1]]
    a, b = ["a b", "a b", "a c", "d"], ["a b", "a c", "b d", "a"]
    gold = [1.0, 0.5, 0.2, 0.0]
    doc = bow_scores({"vocab": vocab, "sentence_sets": {"toy": {"a": a, "b": b, "gold": gold}}})
    cos = [1.0, 0.5, 0.0, 0.0]  # count cosines of the four pairs
    assert doc["bow_sts_toy"] == pytest.approx(spearman(np.array(cos), gold))
    assert doc["bow_sts_mean"] == doc["bow_sts_toy"]
    write_json(
        tmp_path / "banyan.json", {"variant": "banyan", "seeds": [0], "sts_mean": [0.4], "untrained_sts_mean": [0.1]}
    )
    write_json(tmp_path / "minilm.json", {"sts_mean": [0.5], "bow_sts_mean": [0.3]})
    m = claims_metrics({"banyan": [str(tmp_path / "banyan.json")]}, str(tmp_path / "minilm.json"))
    assert m["sts_mean_bow"] == [0.3] and m["sts_mean_minilm"] == [0.5] and m["untrained_sts_mean_banyan"] == [0.1]
    assert "bow_sts_mean_minilm" not in m


def test_untrained_null_is_the_network_training_starts_from():
    """run_variant scores the untrained network of each seed; with no training step it is the trained one."""
    from methods.banyan.train import run_variant

    data = prepare(_grammar_cfg(), {}, seeds=[0])
    cfg = {"channels": 4, "channel_size": 2, "dropout": 0.1}
    for variant in ("banyan", "mean"):
        metrics, _ = run_variant(variant, data, cfg, {"lr": 1e-3, "batch_size": 64, "epochs": 0}, [0], 50)
        assert metrics["untrained_sts_mean"] == pytest.approx(metrics["sts_mean"])
