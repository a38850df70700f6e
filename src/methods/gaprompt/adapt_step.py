"""Step gaprompt_adapt: one adaptation method on the frozen pre-trained backbone, for the seeds of one job."""

from __future__ import annotations

import numpy as np
import torch

from methods.common.io import load_arrays, load_torch, log, save_arrays, write_json

from .model import AdaptedClassifier, backbone_from_config, count_parameters
from .train import adapt as run_adapt


def shift_examples(model: AdaptedClassifier, x_test: np.ndarray, y_test: np.ndarray, n: int) -> dict:
    """The first test cloud of each of the first `n` classes before and after the Point Shift Prompter, and the
    point prompts (Sec. 3.2, Fig. 3), as CPU arrays."""
    model.eval()
    device = next(model.parameters()).device
    pick = [int(np.flatnonzero(y_test == c)[0]) for c in np.unique(y_test)][:n]
    with torch.no_grad():
        x = torch.from_numpy(x_test[pick])
        return {
            "before": x.numpy(),
            "after": model.shift(x.to(device))[0].cpu().numpy(),
            "labels": y_test[pick],
            "point_prompts": (model.point_prompt.points[0] * model.point_prompt.factor).cpu().numpy(),
        }


def majority_accuracy(y_train: np.ndarray, y_test: np.ndarray) -> float:
    """Held-out accuracy of predicting the most frequent training class (lowest label on a tie) everywhere."""
    return float(np.mean(y_test == np.bincount(y_train).argmax()))


def adapt_job(
    method: str,
    data_npz: str,
    ckpt: str,
    backbone: dict,
    adapt: dict,
    seeds: list[int],
    paper_arch: dict,
    threads: int,
    out_json: str,
    out_npz: str,
    device: torch.device | str = "cpu",
) -> None:
    """One method (Sec. 4.1's comparison: linear probe, VPT-deep, adapters, GAPrompt, full fine-tuning) on the
    frozen backbone for each of `seeds` (all seeds in one job at tiny scale, one seed per job at paper scale), on
    `device`: held-out accuracy, trainable parameters; for GAPrompt the shift examples of the job's first seed."""
    torch.set_num_threads(threads)
    d = load_arrays(data_npz)
    n_classes = int(max(d["y_train"].max(), d["y_test"].max())) + 1
    state = load_torch(ckpt)["backbone"]
    runs, arrays = [], {}
    # "untrained": the linear probe of the backbone at its random initialisation (a trivial null: what the
    # pre-training adds), with the linear probe's trainer, epochs and parameter count
    kind = "linear" if method == "untrained" else method
    for seed in seeds:
        torch.manual_seed(seed)
        bb = backbone_from_config(backbone)
        if method != "untrained":
            bb.load_state_dict(state)
        model = AdaptedClassifier(bb, kind, n_classes, adapt)
        frozen_before = {
            n: p.detach().clone() for n, p in model.named_parameters() if n not in model.trainable_parameters()
        }
        r = run_adapt(model, (d["x_train"], d["y_train"]), (d["x_test"], d["y_test"]), adapt, seed, log, device)
        now = dict(model.named_parameters())
        r["frozen_unchanged"] = all(torch.equal(p, now[n].detach().cpu()) for n, p in frozen_before.items())
        log(
            f"{method} seed {seed} ({device}): test acc {r['test_acc']:.4f}, train acc {r['train_acc']:.4f}, "
            f"trainable {r['trainable']} / {r['total']} ({100 * r['fraction']:.2f} %)"
        )
        runs.append(r)
        if method == "gaprompt" and seed == seeds[0]:
            arrays = shift_examples(model, d["x_test"], d["y_test"], adapt["n_shift_examples"])
    out = {
        "method": method,
        "seeds": seeds,
        "test_acc": [r["test_acc"] for r in runs],
        "train_acc": [r["train_acc"] for r in runs],
        "trainable": runs[0]["trainable"],
        "total": runs[0]["total"],
        "fraction": runs[0]["fraction"],
        "frozen_unchanged": all(r["frozen_unchanged"] for r in runs),
        "epochs": adapt["epochs"],
        # trivial null: the majority class of the training labels predicted for every test cloud
        "majority_acc": majority_accuracy(d["y_train"], d["y_test"]),
        "seconds": [r["seconds"] for r in runs],
        "loss_curves": [r["loss_curve"] for r in runs],
    }
    if method == "gaprompt":  # the same modules at the paper's architecture (Point-MAE ViT-S, ScanObjectNN)
        big = AdaptedClassifier(
            backbone_from_config(paper_arch), "gaprompt", paper_arch["n_classes"], {**adapt, **paper_arch}
        )
        out["paper_arch"] = count_parameters(big)
        log(f"paper architecture: {out['paper_arch']}")
    save_arrays(out_npz, arrays or {"empty": np.zeros(0)})
    write_json(out_json, out)
