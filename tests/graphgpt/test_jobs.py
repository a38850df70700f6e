"""The DAG's merged jobs (one per domain or task): a model's numbers do not depend on which other
models share its job, and the claims read every model of the per-task files."""

import pytest
import torch

from methods.common.io import load_torch, read_json
from methods.graphgpt.data import prepare_and_serialize
from methods.graphgpt.finetuning import finetune_task
from methods.graphgpt.pretraining import pretrain_domain
from methods.graphgpt.results import measured_metrics

MODEL = {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_ff": 32}
TRAIN = {"steps": 3, "batch_size": 4, "lr": 1e-3, "warmup": 1}
FT = {**TRAIN, "eval_every": 2, "eval_views": 1}
GIN = {"d": 8, "n_layers": 1, "train": dict(FT)}
SMTP = {"mtp": [0.8, 0.0, 0.2], "schedule": "uniform"}
SPEC = {
    "source": "random_graphs",
    "n_train": 16,
    "n_test": 6,
    "train_nodes": [5, 7],
    "ood_nodes": [9, 10],
    "mean_degree": 2.0,
    "n_classes": 3,
}


@pytest.fixture(scope="module")
def domain(tmp_path_factory):
    d = tmp_path_factory.mktemp("gg_jobs")
    pools = {s: (str(d / f"{s}.pt"), str(d / f"{s}.json")) for s in ("eulerian", "edgelist")}
    prepare_and_serialize("structure", SPEC, [], 0, str(d / "ogb"), str(d / "data.json"), 16, 2, pools, ["triangles"])
    return d, {s: p for s, (p, _) in pools.items()}


def _pretrain(d, pools, models, name):
    pretrain_domain(pools, models, MODEL, TRAIN, SMTP, 0, str(d / f"{name}.pt"), str(d / f"{name}.json"))
    return load_torch(str(d / f"{name}.pt")), read_json(d / f"{name}.json")


def test_one_job_per_domain_writes_data_and_both_pools(domain):
    d, pools = domain
    assert set(read_json(d / "data.json")["tasks"]) == {"triangles"}
    for s in pools:
        assert read_json(d / f"{s}.json")["roundtrip_fraction"] == 1.0


def test_pretraining_a_model_alone_or_with_others_gives_the_same_weights(domain):
    d, pools = domain
    both, h_both = _pretrain(d, pools, ["get_smtp", "get_ntp", "edgelist_smtp"], "all")
    alone, h_alone = _pretrain(d, {"eulerian": pools["eulerian"]}, ["get_ntp"], "ntp")
    assert set(both) == {"get_smtp", "get_ntp", "edgelist_smtp"} and set(alone) == {"get_ntp"}
    assert h_both["get_ntp"]["loss"] == h_alone["get_ntp"]["loss"]
    for k, v in alone["get_ntp"]["state"].items():
        assert torch.equal(v, both["get_ntp"]["state"][k]), k
    assert not torch.equal(both["get_smtp"]["state"]["embed.weight"], both["get_ntp"]["state"]["embed.weight"])


def test_finetuning_a_model_alone_or_with_others_gives_the_same_metrics(domain):
    d, pools = domain
    ckpt = d / "ft_ckpt.pt"
    _pretrain(d, pools, ["get_smtp"], "ft_ckpt")
    args = dict(
        data_json=str(d / "data.json"),
        ckpt_paths=[str(ckpt)],
        model_params=MODEL,
        train_params=FT,
        gin_params=GIN,
        n_node_ids=16,
        val_fraction=0.2,
        seeds=[0, 1],
    )
    finetune_task(
        "triangles",
        ["get_smtp", "get_scratch", "gin"],
        pool_paths={"eulerian": pools["eulerian"]},
        out_metrics=str(d / "all.json"),
        **args,
    )
    finetune_task(
        "triangles",
        ["gin", "get_scratch"],
        pool_paths={"eulerian": pools["eulerian"]},
        out_metrics=str(d / "two.json"),
        **args,
    )
    many, two = read_json(d / "all.json")["models"], read_json(d / "two.json")["models"]
    for model in ("gin", "get_scratch"):
        for k in ("val", "test", "test_ood", "best_step", "history"):
            assert many[model][k] == two[model][k], (model, k)
    measured = measured_metrics([str(d / "all.json")], [])
    for model in ("get_smtp", "get_scratch", "gin"):
        assert measured[f"triangles_{model}_test"] == many[model]["test"] and len(many[model]["test"]) == 2
    assert "triangles_majority_test_ood" in measured
    # the untrained-encoder null: measured once per seed on the from-scratch run (at its random init, before
    # any step), an accuracy; its evaluation draws from no generator, so the fine-tuned scratch run above
    # matched the one without it in the other job
    assert len(measured["triangles_untrained_test"]) == 2 and len(measured["triangles_untrained_test_ood"]) == 2
    assert all(0.0 <= a <= 1.0 for a in measured["triangles_untrained_test"])
    assert "untrained_test" not in many["get_smtp"] and "untrained_test" not in many["gin"]
    # equal budgets: the pre-trained model and its from-scratch ablation fine-tune for the same steps
    assert [len(h["loss"]) for h in many["get_smtp"]["history"]] == [FT["steps"]] * 2
    assert [len(h["loss"]) for h in many["get_scratch"]["history"]] == [FT["steps"]] * 2


def test_the_untrained_null_de_standardises_with_the_training_split():
    """The regression untrained null reads the model's standardised outputs with the training split's mean and
    std, as after fine-tuning: a head that outputs 0 is the training-mean predictor."""
    import numpy as np

    from methods.graphgpt.finetuning import untrained_metrics

    class Const:
        def predict(self, idx, mu, sd):
            return np.zeros(len(idx)) * sd + mu  # a head that outputs 0 in standardised units

    y = np.array([1.0, 2.0, 3.0, 10.0, 20.0])
    split = {"train": np.array([0, 1, 2]), "test": np.array([3, 4])}
    got = untrained_metrics(Const(), y, "regression", split)
    assert got == {"untrained_test": float(np.mean(np.abs(y[[3, 4]] - 2.0)))}


def test_a_pretrained_model_without_its_checkpoint_or_pool_is_named(domain):
    d, pools = domain
    args = dict(
        data_json=str(d / "data.json"),
        model_params=MODEL,
        train_params=FT,
        gin_params=GIN,
        n_node_ids=16,
        val_fraction=0.2,
        seeds=[0],
        out_metrics=str(d / "x.json"),
    )
    with pytest.raises(ValueError, match="get_smtp.*checkpoint"):
        finetune_task("triangles", ["get_smtp"], pool_paths={"eulerian": pools["eulerian"]}, ckpt_paths=[], **args)
    with pytest.raises(ValueError, match="edgelist_smtp.*edgelist pool"):
        finetune_task(
            "triangles",
            ["edgelist_smtp"],
            pool_paths={"eulerian": pools["eulerian"]},
            ckpt_paths=[str(d / "ft_ckpt.pt")],
            **args,
        )
    with pytest.raises(ValueError, match="edgelist_smtp.*edgelist pool"):
        pretrain_domain(
            {"eulerian": pools["eulerian"]},
            ["edgelist_smtp"],
            MODEL,
            TRAIN,
            SMTP,
            0,
            str(d / "y.pt"),
            str(d / "y.json"),
        )
