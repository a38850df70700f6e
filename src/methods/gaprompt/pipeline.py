"""What each DAG step of gaprompt does (one function per script in workflow/scripts/gaprompt/)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import load_arrays, log, read_json, save_arrays, write_json

DECLARATION = Path(__file__).with_name("claims.yaml")






def data_job(data: dict, out_npz: str, out_json: str, bunny_wheel: str | None = None) -> None:
    """Step gaprompt_data: pre-training (source) clouds and the downstream train/test splits. At the
    procedural scale the source set also holds `data.bunny.copies` random views of the Stanford bunny
    read from `bunny_wheel` (PyGSP's wheel)."""
    from .shapes import (SOURCE_FAMILIES, TARGET_FAMILIES, bunny_views, load_datasets_split, load_h5_split,
                         make_split, read_bunny)

    n = data["n_points"]
    kind = data["kind"]
    if kind == "procedural":
        x_src, _ = make_split(data["seed"], SOURCE_FAMILIES, data["source_per_family"], n, None)
        copies = data.get("bunny", {}).get("copies", 0)
        if copies:
            if bunny_wheel is None:
                raise ValueError("gaprompt.data.bunny.copies > 0 needs the PyGSP wheel (rule gaprompt_download)")
            views = bunny_views(read_bunny(bunny_wheel), copies, n, data["seed"] + 3)
            x_src = np.concatenate([x_src, views])
        x_tr, y_tr = make_split(data["seed"] + 1, TARGET_FAMILIES, data["train_per_class"], n, data["perturb"])
        x_te, y_te = make_split(data["seed"] + 2, TARGET_FAMILIES, data["test_per_class"], n, data["perturb"])
        classes = list(TARGET_FAMILIES)
    elif kind == "h5":
        for key in ("train", "test"):
            if not Path(data["h5"][key]).is_file():
                raise FileNotFoundError(f"gaprompt.data.h5.{key}: {data['h5'][key]} not found; ScanObjectNN is "
                                        "distributed after its licence form (hkust-vgd.github.io/scanobjectnn): place "
                                        "the h5 files there or point the key at them")
        x_tr, y_tr = load_h5_split(data["h5"]["train"], n)
        x_te, y_te = load_h5_split(data["h5"]["test"], n)
        x_src, classes = x_tr[:0], [str(c) for c in range(int(max(y_tr.max(), y_te.max())) + 1)]
    else:  # datasets
        x_tr, y_tr = load_datasets_split(data["datasets"], "train", n)
        x_te, y_te = load_datasets_split(data["datasets"], "test", n)
        x_src, classes = x_tr[:0], [str(c) for c in range(int(max(y_tr.max(), y_te.max())) + 1)]
    log(f"data ({kind}): source {x_src.shape}, train {x_tr.shape}, test {x_te.shape}, {len(classes)} classes")
    save_arrays(out_npz, {"source": x_src, "x_train": x_tr, "y_train": y_tr, "x_test": x_te, "y_test": y_te})
    n_bunny = data.get("bunny", {}).get("copies", 0) if kind == "procedural" else 0
    write_json(out_json, {"kind": kind, "classes": classes, "n_source": len(x_src), "n_bunny_views": n_bunny,
                          "n_train": len(x_tr),
                          "n_test": len(x_te), "n_points": n})


def pretrain_job(data_npz: str, backbone: dict, pretrain: dict, threads: int, out_ckpt: str, out_json: str) -> None:
    """Step gaprompt_pretrain: Point-MAE masked reconstruction on the source clouds, or (full scale) the
    released Point-MAE checkpoint loaded into the same backbone."""
    import torch

    from methods.common.io import save_torch

    from .model import MaskedAutoencoder, backbone_from_config, load_pointmae_checkpoint
    from .train import pretrain as run_pretrain

    torch.set_num_threads(threads)
    torch.manual_seed(pretrain["seed"])
    bb = backbone_from_config(backbone)
    if backbone.get("checkpoint"):
        if not Path(backbone["checkpoint"]).is_file():
            raise FileNotFoundError(f"gaprompt.backbone.checkpoint: {backbone['checkpoint']} not found; download "
                                    "Point-MAE's pretrain.pth (github.com/Pang-Yatian/Point-MAE, releases) there")
        info = load_pointmae_checkpoint(bb, backbone["checkpoint"])
        losses = []
        log(f"loaded {backbone['checkpoint']}: {info}")
    else:
        source = load_arrays(data_npz)["source"]
        if len(source) < pretrain["batch"]:
            raise ValueError(f"gaprompt: {len(source)} source clouds, fewer than gaprompt.pretrain.batch")
        mae = MaskedAutoencoder(bb, pretrain["decoder_depth"], backbone["heads"], pretrain["mask_ratio"],
                                pretrain["init"])
        losses = run_pretrain(mae, source, pretrain, pretrain["seed"], log)
    save_torch(out_ckpt, {"backbone": bb.state_dict(), "config": dict(backbone)})
    write_json(out_json, {"losses": losses, "first_loss": losses[0] if losses else None,
                          "last_loss": float(np.mean(losses[-10:])) if losses else None})


def adapt_job(method: str, data_npz: str, ckpt: str, backbone: dict, adapt: dict, seeds: list[int],
              paper_arch: dict, threads: int, out_json: str, out_npz: str) -> None:
    """Step gaprompt_adapt: one adaptation method on the frozen backbone, every seed."""
    import torch

    from methods.common.io import load_torch

    from .model import AdaptedClassifier, backbone_from_config, count_parameters
    from .train import adapt as run_adapt

    torch.set_num_threads(threads)
    d = load_arrays(data_npz)
    n_classes = int(max(d["y_train"].max(), d["y_test"].max())) + 1
    state = load_torch(ckpt)["backbone"]
    runs, arrays = [], {}
    for seed in seeds:
        torch.manual_seed(seed)
        bb = backbone_from_config(backbone)
        bb.load_state_dict(state)
        model = AdaptedClassifier(bb, method, n_classes, adapt)
        frozen_before = {n: p.detach().clone() for n, p in model.named_parameters()
                         if n not in model.trainable_parameters()}
        r = run_adapt(model, (d["x_train"], d["y_train"]), (d["x_test"], d["y_test"]), adapt, seed, log)
        r["frozen_unchanged"] = all(torch.equal(p, dict(model.named_parameters())[n]) for n, p in frozen_before.items())
        log(f"{method} seed {seed}: test acc {r['test_acc']:.4f}, train acc {r['train_acc']:.4f}, "
            f"trainable {r['trainable']} / {r['total']} ({100 * r['fraction']:.2f} %)")
        runs.append(r)
        if method == "gaprompt" and seed == seeds[0]:
            model.eval()
            # the first test cloud of each of the first n classes
            pick = [int(np.flatnonzero(d["y_test"] == c)[0]) for c in np.unique(d["y_test"])][: adapt["n_shift_examples"]]
            with torch.no_grad():
                x = torch.from_numpy(d["x_test"][pick])
                arrays = {"before": x.numpy(), "after": model.shift(x)[0].numpy(), "labels": d["y_test"][pick],
                          "point_prompts": (model.point_prompt.points[0] * model.point_prompt.factor).numpy()}
    out = {"method": method, "seeds": seeds, "test_acc": [r["test_acc"] for r in runs],
           "train_acc": [r["train_acc"] for r in runs], "trainable": runs[0]["trainable"], "total": runs[0]["total"],
           "fraction": runs[0]["fraction"], "frozen_unchanged": all(r["frozen_unchanged"] for r in runs),
           "seconds": [r["seconds"] for r in runs], "loss_curves": [r["loss_curve"] for r in runs]}
    if method == "gaprompt":  # the same modules at the paper's architecture (Point-MAE ViT-S, ScanObjectNN)
        big = AdaptedClassifier(backbone_from_config(paper_arch), "gaprompt", paper_arch["n_classes"],
                                {**adapt, **paper_arch})
        out["paper_arch"] = count_parameters(big)
        log(f"paper architecture: {out['paper_arch']}")
    save_arrays(out_npz, arrays or {"empty": np.zeros(0)})
    write_json(out_json, out)


def figures_job(method_json: dict[str, str], shift_npz: str, data_info: str, acc_png: str, shift_png: str) -> None:
    """Step gaprompt_figures."""
    from .figures import accuracy_figure, shift_figure

    accuracy_figure({m: read_json(p) for m, p in method_json.items()}, acc_png)
    shift_figure(load_arrays(shift_npz), shift_png, read_json(data_info)["classes"])


def claims_metrics(method_json: dict[str, str]) -> dict:
    """Flat {metric: value or per-seed list} read by claims.yaml's criteria."""
    out = {}
    for method, path in method_json.items():
        m = read_json(path)
        out[f"acc_{method}"] = m["test_acc"]
        out[f"fraction_{method}"] = m["fraction"]
        out[f"trainable_{method}"] = m["trainable"]
        out[f"frozen_unchanged_{method}"] = float(m["frozen_unchanged"])
        if "paper_arch" in m:
            out["fraction_gaprompt_paper_arch"] = m["paper_arch"]["fraction"]
            out["trainable_gaprompt_paper_arch"] = m["paper_arch"]["trainable"]
    return out


def write_paper_claims(method_json: dict[str, str], scale: str, claims_path: str, summary_path: str) -> None:
    """Step gaprompt_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(method_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
