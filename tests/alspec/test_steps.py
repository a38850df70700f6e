"""The ALSpec DAG's training and evaluation steps end to end at smoke size, on the device they are given, and
the data file of the quality figure (one row per task and λ)."""

import csv
import json

import pytest
import torch

from methods.alspec.evaluate import evaluate_task
from methods.alspec.figures import quality_rows, write_rows
from methods.alspec.tasks import train_model

TASKS = {"seq_len": 48, "n_symbols": 16, "n_pairs": 4, "n_queries": 3, "copy_len": 4, "local_decode": 4, "noise": 0.1}
MODEL = {"hidden": 16, "layers": 2, "heads": 2, "kv_heads": 1, "intermediate": 32}
TRAIN = {"steps": 4, "batch_size": 6, "lr": 0.003, "warmup": 2, "weight_decay": 0.01}
LAMS = [0.05, 0.1]


def test_train_then_evaluate_on_the_given_device_then_tidy_rows(tmp_path):
    info = train_model(
        TASKS,
        MODEL,
        TRAIN,
        sink=4,
        window=4,
        seed=0,
        out_dir=tmp_path / "model",
        info_path=tmp_path / "training.json",
        eval_examples=4,
        device=torch.device("cpu"),
    )
    assert set(info["full_forward_accuracy"]) == {"local", "recall", "copy"}
    assert (tmp_path / "model" / "config.json").exists()
    doc = evaluate_task(
        tmp_path / "model",
        "recall",
        TASKS,
        4,
        4,
        LAMS,
        "layer",
        n_examples=4,
        batch_size=4,
        seed=0,
        metrics_path=tmp_path / "recall.json",
        device=torch.device("cpu"),
        n_draws=2,
    )
    # two data draws: disjoint halves of the examples; equal halves average to the pooled rates
    assert len(doc["draws"]) == 2 and all(d["exact"]["n_sequences"] == 2 for d in doc["draws"])
    for mode in doc["modes"]:
        halves = [d[mode]["hit_rate"] for d in doc["draws"]]
        assert sum(halves) / 2 == pytest.approx(doc["modes"][mode]["hit_rate"])
    assert json.loads((tmp_path / "recall.json").read_text())["modes"].keys() == doc["modes"].keys()
    assert set(doc["modes"]) == {"exact", "static", "alspec_0.05", "alspec_0.10"}
    rows = quality_rows([doc], LAMS)
    assert [r["lam"] for r in rows] == LAMS
    assert rows[1]["hit_rate"] == doc["modes"]["alspec_0.10"]["hit_rate"]
    assert rows[0]["exact"] == doc["modes"]["exact"]["accuracy"] and rows[0]["metric"] == "accuracy"
    write_rows(rows, tmp_path / "quality.csv")
    back = list(csv.DictReader(open(tmp_path / "quality.csv")))
    assert len(back) == 2 and float(back[0]["alspec"]) == pytest.approx(rows[0]["alspec"])


def test_per_repeat_speedups_pair_repeat_r_with_repeat_r():
    from methods.alspec.results import _per_repeat_speedups

    measured = {
        "sequential_all_s": [2.0, 2.0, 4.0, 4.0],
        "by_hit_rate": [
            {"hit_rate": 0.0, "alspec_all_s": [2.0, 2.0, 4.0, 4.0]},
            {"hit_rate": 1.0, "alspec_all_s": [1.0, 1.0, 1.0, 1.0]},
        ],
    }
    assert _per_repeat_speedups(measured, 2) == {0.0: [1.0, 1.0], 1.0: [2.0, 4.0]}
