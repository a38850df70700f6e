"""Step graphgpt_finetune (workflow/rules/graphgpt.smk): every model of a task fine-tuned (GET) or
trained (GINE) for each seed of the job's seed group, test metrics; resumable (checkpoint.py)."""

from __future__ import annotations

import numpy as np
import torch

from methods.common.io import load_torch, log, read_json, set_seed, write_json

from .checkpoint import Checkpoints, fingerprint, no_checkpoints, resume_path
from .data import domain_vocab
from .model import GET, GETConfig, model_spec
from .serialize import Vocab
from .train import GETTask, GINTask, TrainConfig, Views, fit_and_test, metric, on_device


def _seed_split(task: dict, val_fraction: float, seed: int) -> dict:
    """Train/val drawn per seed from everything outside the fixed test sets."""
    held = set(task["test"]) | set(task.get("test_ood", []))
    rest = np.array([i for i in range(len(task["y"])) if i not in held])
    rest = np.random.default_rng(1000 + seed).permutation(rest)
    n_val = max(1, round(val_fraction * len(rest)))
    split = {"train": rest[n_val:], "val": rest[:n_val], "test": np.array(task["test"])}
    if "test_ood" in task:
        split["test_ood"] = np.array(task["test_ood"])
    return split


def _gin_graphs(doc: dict, task_name: str, vocab: Vocab):
    """Per graph: node attribute ids (n, a), edge_index (2, 2m) both directions, edge attribute ids (2m, b)."""
    nk, ek = doc["node_keys"], doc["edge_keys"]
    from .serialize import edge_attr_token, node_attr_token

    out = []
    for rec in doc["tasks"][task_name]["graphs"]:
        x = [[vocab.id(node_attr_token(k, v)) for k, v in zip(nk, attrs)] or [0] for attrs in rec["x"]]
        src = [e[0] for e in rec["e"]] + [e[1] for e in rec["e"]]
        dst = [e[1] for e in rec["e"]] + [e[0] for e in rec["e"]]
        ea = [[vocab.id(edge_attr_token(k, v)) for k, v in zip(ek, e[2:])] or [0] for e in rec["e"]] * 2
        out.append(
            (
                torch.as_tensor(x, dtype=torch.long),
                torch.as_tensor([src, dst], dtype=torch.long).reshape(2, -1),
                torch.as_tensor(ea, dtype=torch.long).reshape(len(src), max(1, len(ek))),
            )
        )
    return out


def untrained_metrics(task: GETTask, y: np.ndarray, kind: str, split: dict) -> dict:
    """The trivial null "the untrained model": the encoder and head at their random initialisation, not
    fine-tuned, predicting the test sets (regression outputs de-standardised with the training split's mean
    and std, as after fine-tuning). Evaluation only (fixed views, no dropout), so it draws from no generator
    and leaves the fine-tuning run that follows unchanged."""
    mu, sd = (
        (float(y[split["train"]].mean()), float(y[split["train"]].std() + 1e-8)) if kind == "regression" else (0.0, 1.0)
    )
    return {
        f"untrained_{name}": metric(task.predict(split[name], mu, sd), y[split[name]], kind)
        for name in ("test", "test_ood")
        if name in split
    }


def _finetune_one(
    task_name: str,
    model_name: str,
    doc: dict,
    pool: dict | None,
    ckpt: dict | None,
    model_params: dict,
    train_params: dict,
    gin_params: dict,
    n_node_ids: int,
    val_fraction: float,
    seeds: list[int],
    device: torch.device | str = "cpu",
    checkpoints: Checkpoints | None = None,
) -> dict:
    """Fine-tune one model on one task for every seed; test metrics (and OOD where the task has it).
    With `checkpoints`, a finished (model, seed) run is not redone and one in progress resumes."""
    checkpoints = checkpoints or no_checkpoints()
    spec = model_spec(model_name, f"config graphgpt.tasks.{task_name}.models")
    if spec["serialization"] is not None and pool is None:
        raise ValueError(f"graphgpt finetune {task_name}: model {model_name!r} needs the {spec['serialization']} pool")
    if spec["pretrain"] is not None and ckpt is None:
        raise ValueError(f"graphgpt finetune {task_name}: model {model_name!r} needs its pre-trained checkpoint")
    task = doc["tasks"][task_name]
    y, kind = np.asarray(task["y"], dtype=float), task["kind"]
    cfg = TrainConfig.from_dict(train_params)
    if spec["serialization"] is None:
        gin_vocab = domain_vocab(doc, n_node_ids)
        gin_graphs = _gin_graphs(doc, task_name, gin_vocab)
    runs = []
    for seed in seeds:
        name = f"{model_name}/seed{seed}"
        split = _seed_split(task, val_fraction, seed)
        done = checkpoints.done(name)
        if done is not None:
            runs.append(done)
        elif spec["serialization"] is None:
            set_seed(seed)
            gin = dict(gin_params)
            gcfg = TrainConfig.from_dict(gin.pop("train"))
            t = GINTask(gin_graphs, task.get("queries"), kind, task["n_out"], len(gin_vocab), gin, seed, device)
            runs.append(fit_and_test(t, y, kind, split, gcfg, np.random.default_rng(seed), checkpoints, name))
        else:
            set_seed(seed)
            vocab = Vocab.from_dict(pool["vocab"])
            if ckpt is not None:
                backbone = GET(GETConfig(**ckpt["model_cfg"]))
                backbone.load_state_dict(ckpt["state"])
            else:  # the headline's encoder, not pre-trained
                backbone = GET(
                    GETConfig(vocab_size=len(vocab), n_channels=vocab.n_channels, causal=False, **model_params)
                )
            views = Views(pool["tasks"][task_name], vocab.n_node_ids, spec["reindex"])
            t = GETTask(backbone, views, kind, task["n_out"], cfg, seed, device)
            untrained = untrained_metrics(t, y, kind, split) if ckpt is None else {}
            runs.append(fit_and_test(t, y, kind, split, cfg, np.random.default_rng(seed), checkpoints, name))
            runs[-1].update(untrained)
        if done is None:
            checkpoints.finish(name, runs[-1])
        msg = ", ".join(f"{k} {runs[-1][k]:.4f}" for k in ("val", "test", "test_ood") if k in runs[-1])
        log(f"{task_name}/{model_name} seed {seed}: {msg} ({runs[-1]['seconds']:.1f} s)")
    out = {
        "task": task_name,
        "model": model_name,
        "kind": kind,
        "metric": {"regression": "mae", "binary": "roc_auc"}.get(kind, "accuracy"),
        "seeds": list(seeds),
    }
    for k in ("val", "test", "test_ood", "best_step", "seconds", "untrained_test", "untrained_test_ood"):
        if k in runs[0]:
            out[k] = [r[k] for r in runs]
    out["history"] = [r["history"] for r in runs]
    if kind == "regression":  # the untrained null: every test graph predicted by the training split's mean
        out["mean_test"] = [
            float(
                np.mean(
                    np.abs(
                        y[_seed_split(task, val_fraction, s)["test"]]
                        - y[_seed_split(task, val_fraction, s)["train"]].mean()
                    )
                )
            )
            for s in seeds
        ]
    if kind == "binary":  # the constant predictor: every test graph the same score
        out["constant_test"] = [
            metric(np.zeros(len(sp["test"])), y[sp["test"]], kind)
            for sp in (_seed_split(task, val_fraction, s) for s in seeds)
        ]
    if kind == "classification":
        out["majority_test"] = float(np.max(np.bincount(y[split["test"]].astype(int))) / len(split["test"]))
        if "test_ood" in split:
            out["majority_test_ood"] = float(
                np.max(np.bincount(y[split["test_ood"]].astype(int))) / len(split["test_ood"])
            )
    return out


def finetune_task(
    task_name: str,
    models: list[str],
    data_json: str,
    pool_paths: dict[str, str],
    ckpt_paths: list[str],
    model_params: dict,
    train_params: dict,
    gin_params: dict,
    n_node_ids: int,
    val_fraction: float,
    seeds: list[int],
    out_metrics: str,
    device: torch.device | str = "cpu",
    threads: int = 1,
) -> None:
    """Fine-tune every model of a task, for each seed of `seeds`, in one job (`pool_paths`: serialization ->
    pool; `ckpt_paths`: the files of the domain's pre-trained models). Writes {"task", "seeds", "models":
    {model: metrics}}; each run starts from `set_seed(seed)`, so it does not depend on the models and seeds
    before it. A killed job rerun with the same parameters and inputs resumes: finished runs are not
    redone, the one in progress continues from its last checkpoint (side file `<metrics>.resume.pt`)."""
    torch.set_num_threads(threads)
    device = on_device(device)
    job = {
        "task": task_name,
        "models": models,
        "model": model_params,
        "n_node_ids": n_node_ids,
        "val_fraction": val_fraction,
        "seeds": seeds,
        "finetune": _without_checkpoints(train_params),
        "gin": {**gin_params, "train": _without_checkpoints(gin_params["train"])},
    }
    every = (
        TrainConfig.from_dict(train_params).checkpoint_every
        or TrainConfig.from_dict(gin_params["train"]).checkpoint_every
    )
    inputs = [data_json, *sorted(pool_paths.values()), *ckpt_paths]
    checkpoints = Checkpoints(resume_path(out_metrics) if every else None, fingerprint(job, inputs))
    doc = read_json(data_json)
    pools = {ser: load_torch(path) for ser, path in pool_paths.items()}
    ckpts = {name: c for path in ckpt_paths for name, c in load_torch(path).items()}
    out = {"task": task_name, "seeds": list(seeds), "models": {}}
    for model_name in models:
        spec = model_spec(model_name, f"config graphgpt.tasks.{task_name}.models")
        out["models"][model_name] = _finetune_one(
            task_name,
            model_name,
            doc,
            pools.get(spec["serialization"]),
            ckpts.get(model_name) if spec["pretrain"] else None,
            model_params,
            train_params,
            gin_params,
            n_node_ids,
            val_fraction,
            seeds,
            device,
            checkpoints,
        )
    write_json(out_metrics, out)
    checkpoints.remove()


def _without_checkpoints(train_params: dict) -> dict:
    """Training parameters without `checkpoint_every`, which does not change a result."""
    return {k: v for k, v in train_params.items() if k != "checkpoint_every"}
