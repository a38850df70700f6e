"""Step graphgpt_pretrain (workflow/rules/graphgpt.smk): GET pre-trained with SMTP (encoder) or NTP
(decoder) on a domain's pool of serializations, for every model of the job's group, resumable
(checkpoint.py)."""

from __future__ import annotations

import numpy as np
import torch

from methods.common.io import load_torch, log, save_torch, set_seed, write_json

from .checkpoint import Checkpoints, fingerprint, resume_path
from .model import model_spec
from .serialize import Vocab
from .train import TrainConfig, Views, on_device, pretrain


def _pretrain_one(
    pool: dict,
    model_name: str,
    model_params: dict,
    train_params: dict,
    smtp: dict,
    seed: int,
    device: torch.device | str = "cpu",
    checkpoints: Checkpoints | None = None,
) -> tuple[dict, dict]:
    """Pre-train GET for one model on a loaded pool (NTP: decoder; SMTP: encoder): checkpoint, history."""
    set_seed(seed)
    spec = model_spec(model_name, "graphgpt pretrain")
    objective = spec["pretrain"]
    if objective is None:
        raise ValueError(f"graphgpt pretrain: model {model_name!r} is not pre-trained")
    vocab = Vocab.from_dict(pool["vocab"])
    cfg = TrainConfig.from_dict(train_params)
    views = Views(pool["pretrain"], vocab.n_node_ids, spec["reindex"])
    model, history = pretrain(
        views,
        len(vocab),
        vocab.n_channels,
        objective,
        model_params,
        cfg,
        seed,
        smtp,
        device,
        checkpoints,
        name=model_name,
    )
    ckpt = {
        "model_cfg": vars(model.cfg),
        "state": {k: v.cpu() for k, v in model.state_dict().items()},
        "model": model_name,
        "vocab": pool["vocab"],
        "train": train_params,
    }
    history = {
        "model": model_name,
        "objective": objective,
        "serialization": pool["serialization"],
        "reindex": spec["reindex"],
        **history,
    }
    log(
        f"pretrain {model_name}: loss {history['loss'][0]:.3f} -> {np.mean(history['loss'][-20:]):.3f} "
        f"in {history['seconds']:.1f} s"
    )
    return ckpt, history


def pretrain_domain(
    pool_paths: dict[str, str],
    models: list[str],
    model_params: dict,
    train_params: dict,
    smtp: dict,
    seed: int,
    ckpt_path: str,
    history_path: str,
    device: torch.device | str = "cpu",
    threads: int = 1,
) -> None:
    """Pre-train every model of a group in one job (`pool_paths`: serialization -> pool); one checkpoint
    file {model: checkpoint} and one history file {model: loss history}. Each model starts from
    `set_seed(seed)`, so its result does not depend on the others. A killed job rerun with the same
    parameters and inputs resumes: finished models are not redone, the one in progress continues from
    its last checkpoint (`checkpoint_every` steps; side file `<ckpt>.resume.pt`, removed at the end)."""
    torch.set_num_threads(threads)
    device = on_device(device)
    for model_name in models:
        ser = model_spec(model_name, "graphgpt pretrain")["serialization"]
        if ser not in pool_paths:
            raise ValueError(
                f"graphgpt pretrain: model {model_name!r} needs the {ser} pool; given {sorted(pool_paths)}"
            )
    every = TrainConfig.from_dict(train_params).checkpoint_every
    job = {
        "models": models,
        "model": model_params,
        "smtp": smtp,
        "seed": seed,
        "train": {k: v for k, v in train_params.items() if k != "checkpoint_every"},
    }
    checkpoints = Checkpoints(resume_path(ckpt_path) if every else None, fingerprint(job, sorted(pool_paths.values())))
    pools = {ser: load_torch(path) for ser, path in pool_paths.items()}
    ckpts, histories = {}, {}
    for model_name in models:
        done = checkpoints.done(model_name)
        if done is None:
            ser = model_spec(model_name, "graphgpt pretrain")["serialization"]
            ckpt, history = _pretrain_one(
                pools[ser], model_name, model_params, train_params, smtp, seed, device, checkpoints
            )
            done = {"ckpt": ckpt, "history": history}
            checkpoints.finish(model_name, done)
        ckpts[model_name], histories[model_name] = done["ckpt"], done["history"]
    save_torch(ckpt_path, ckpts)
    write_json(history_path, histories)
    checkpoints.remove()
