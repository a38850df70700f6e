"""The adaptation step as the DAG runs it: any device, and seeds split into one job per seed at paper scale."""

from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from methods.common.io import read_json, save_arrays, save_torch
from methods.gaprompt.adapt_step import adapt_job
from methods.gaprompt.model import METHODS, AdaptedClassifier, MaskedAutoencoder, backbone_from_config
from methods.gaprompt.runs import merge_seed_runs
from methods.gaprompt.shapes import TARGET_FAMILIES, make_split

ROOT = Path(__file__).resolve().parents[2]
CFG = yaml.safe_load((ROOT / "config.yaml").read_text())["gaprompt"]
BACKBONE = {**CFG["backbone"], "dim": 16, "depth": 2, "heads": 2, "n_groups": 8, "group_size": 8, "encoder_width": 4}
ADAPT = {
    **CFG["adapt"],
    "epochs": 1,
    "batch": 8,
    "head_hidden": 8,
    "prompt_depth": 1,
    "n_prompt_tokens": 2,
    "adapter_rank": 2,
    "n_shift_examples": 2,
}
PAPER_ARCH = {**BACKBONE, "n_classes": 8, "head_hidden": 8, "prompt_depth": 1, "n_prompt_tokens": 2, "adapter_rank": 2}


@pytest.mark.parametrize("method", METHODS)
def test_forward_and_backward_stay_on_the_input_device(method):
    """Every tensor of the forward and backward pass lives on the model's device: on the `meta` device a tensor
    created on the CPU inside the graph (as a CUDA run would hit) fails the backward pass."""
    model = AdaptedClassifier(backbone_from_config(BACKBONE), method, 8, ADAPT).to("meta").train()
    out = model(torch.randn(4, 48, 3, device="meta"))
    out.sum().backward()
    assert out.device.type == "meta" and out.shape == (4, 8)


def test_masked_autoencoder_stays_on_the_input_device():
    mae = MaskedAutoencoder(backbone_from_config(BACKBONE), 1, 2, 0.6).to("meta")
    loss = mae(torch.randn(4, 48, 3, device="meta"), torch.Generator().manual_seed(0))
    loss.backward()
    assert loss.device.type == "meta"


@pytest.fixture(scope="module")
def run_inputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("adapt")
    x_tr, y_tr = make_split(1, TARGET_FAMILIES, 2, 48, CFG["data"]["perturb"])
    x_te, y_te = make_split(2, TARGET_FAMILIES, 1, 48, CFG["data"]["perturb"])
    save_arrays(tmp / "clouds.npz", {"x_train": x_tr, "y_train": y_tr, "x_test": x_te, "y_test": y_te})
    torch.manual_seed(0)
    save_torch(tmp / "backbone.pt", {"backbone": backbone_from_config(BACKBONE).state_dict()})
    return tmp


def _adapt(tmp, method, seeds, name):
    js = tmp / f"{name}.json"
    adapt_job(
        method,
        str(tmp / "clouds.npz"),
        str(tmp / "backbone.pt"),
        BACKBONE,
        ADAPT,
        seeds,
        PAPER_ARCH,
        1,
        str(js),
        str(tmp / f"{name}.npz"),
        device=torch.device("cpu"),
    )
    return read_json(js)


@pytest.mark.parametrize("method", ["vpt", "gaprompt"])
def test_one_job_per_seed_merges_to_the_one_job_over_all_seeds(run_inputs, method):
    """Paper scale runs one job per seed; merged in seed order they equal tiny scale's single job over all seeds
    (each seed re-seeds everything it draws), so splitting the seeds changes no number."""
    together = _adapt(run_inputs, method, [0, 1], f"{method}_all")
    merged = merge_seed_runs([_adapt(run_inputs, method, [s], f"{method}_seed{s}") for s in (0, 1)])
    for key in ("seeds", "test_acc", "train_acc", "loss_curves", "trainable", "total", "fraction", "frozen_unchanged"):
        assert merged[key] == together[key], key
    assert merged.get("paper_arch") == together.get("paper_arch")


def test_merge_refuses_repeated_seeds_and_disagreeing_counts():
    part = {
        "method": "vpt",
        "seeds": [0],
        "test_acc": [0.5],
        "train_acc": [0.6],
        "seconds": [1.0],
        "loss_curves": [[1.0]],
        "trainable": 10,
        "total": 100,
        "fraction": 0.1,
        "frozen_unchanged": True,
        "epochs": 1,
        "majority_acc": 0.25,
    }
    with pytest.raises(ValueError, match="seed repeated"):
        merge_seed_runs([part, part])
    with pytest.raises(ValueError, match="disagree on trainable"):
        merge_seed_runs([part, {**part, "seeds": [1], "trainable": 11}])
    assert merge_seed_runs([part, {**part, "seeds": [1], "test_acc": [0.7]}])["test_acc"] == [0.5, 0.7]


def test_majority_class_accuracy_is_the_share_of_the_most_frequent_training_class():
    from methods.gaprompt.adapt_step import majority_accuracy

    y_train = np.array([0, 1, 1, 2, 1])
    assert majority_accuracy(y_train, np.array([1, 1, 0, 2])) == 0.5
    assert majority_accuracy(np.array([0, 0, 1, 1]), np.array([0, 1])) == 0.5  # tie: the lowest label


def test_untrained_backbone_null_gets_the_linear_probe_budget(run_inputs):
    """The untrained-backbone null trains the linear probe's parameters for the same epochs, on a backbone that
    differs from the pre-trained one (seed 1: the fixture's checkpoint is the initialisation of seed 0)."""
    lin = _adapt(run_inputs, "linear", [1], "linear_seed1")
    unt = _adapt(run_inputs, "untrained", [1], "untrained_seed1")
    for key in ("trainable", "total", "epochs", "majority_acc"):
        assert unt[key] == lin[key], key
    assert len(unt["loss_curves"][0]) == len(lin["loss_curves"][0])
    assert unt["loss_curves"] != lin["loss_curves"]
