"""Checkpoint and resume of the long jobs (pre-training, fine-tuning): a job killed by its scheduler
(time limit, memory, a node lost) and resubmitted continues from its last checkpoint, with the same
result as a run that was never interrupted.

A job's state lives in one side file beside its output (`<output>.resume.pt`, not a declared output, so
Snakemake leaves it in place when the job fails), written atomically (`save_torch`):
- `done`: the results of the runs the job has finished (a pre-trained model, the metrics of a fine-tuning
  run of one model and seed), so they are not redone;
- `current`: the run in progress at the last checkpoint: model, optimizer, step, history and every random
  state it draws from (its numpy and torch generators, torch's global generator, CUDA's where used);
- `fingerprint`: a digest of the job's parameters and input files (path, size, modification time). A side
  file left by a run with other parameters or other inputs is ignored and overwritten.
The job removes the file once its output is written. Saving every `checkpoint_every` steps
(graphgpt.pretrain / finetune / gin.train; 0: never within a run) costs one torch.save; a job whose loops
all have 0 keeps no side file.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import torch

from methods.common.io import load_torch, log, save_torch


def resume_path(output: str) -> str:
    """The side file of a job whose (first) output is `output`."""
    p = Path(output)
    return str(p.with_name(p.name.split(".")[0] + ".resume.pt"))


def fingerprint(params: dict, inputs: list[str | None]) -> str:
    """Digest of what a job's result depends on: its parameters and its input files as they are now."""
    files = []
    for f in inputs:
        if f is not None:
            st = Path(f).stat()
            files.append([str(f), st.st_size, st.st_mtime_ns])
    blob = json.dumps({"params": params, "inputs": files}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def rng_state(numpy_rngs: dict | None = None, torch_gens: dict | None = None) -> dict:
    """Every random state a training run draws from (plain containers and tensors, for `load_torch`)."""
    legacy = np.random.get_state()
    state = {
        "numpy": {k: g.bit_generator.state for k, g in (numpy_rngs or {}).items()},
        "torch_gens": {k: g.get_state() for k, g in (torch_gens or {}).items()},
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "numpy_global": [legacy[0], legacy[1].tolist(), *legacy[2:]],
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict, numpy_rngs: dict | None = None, torch_gens: dict | None = None) -> None:
    """Restore what `rng_state` captured into the same named generators."""
    for k, g in (numpy_rngs or {}).items():
        g.bit_generator.state = state["numpy"][k]
    for k, g in (torch_gens or {}).items():
        g.set_state(state["torch_gens"][k])
    torch.set_rng_state(state["torch"])
    random.setstate(_tuples(state["python"]))
    name, keys, *rest = state["numpy_global"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), *rest))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _tuples(x):
    """random.setstate wants the tuples random.getstate gave (a round trip may turn them into lists)."""
    return tuple(_tuples(v) for v in x) if isinstance(x, (list, tuple)) else x


class Checkpoints:
    """The resumable state of one job (see the module docstring): finished runs by name, the run in
    progress, saved to `path` (None: never saved) every `checkpoint_every` steps of its training loop."""

    def __init__(self, path: str | None, key: str):
        self.path, self.key = (Path(path) if path else None), key
        self.state = {"fingerprint": key, "done": {}, "current": None}
        if self.path is not None and self.path.exists():
            self._read()

    def _read(self) -> None:
        try:
            state = load_torch(self.path)
        except Exception as e:  # noqa: BLE001 - a truncated or foreign file: start afresh, say why
            log(f"{self.path}: unreadable checkpoint ({type(e).__name__}: {e}); starting afresh")
            return
        if not isinstance(state, dict) or state.get("fingerprint") != self.key:
            log(f"{self.path}: a checkpoint of other parameters or inputs; starting afresh")
            return
        self.state = state
        cur = state.get("current")
        log(
            f"{self.path}: resuming; finished runs {sorted(state['done'])}"
            + (f", {cur['name']} from step {cur['state']['step']}" if cur else "")
        )

    def done(self, name: str):
        """The result of a finished run, or None."""
        return self.state["done"].get(name)

    def current(self, name: str) -> dict | None:
        """The saved state of run `name` if it was the run in progress, else None."""
        cur = self.state["current"]
        return cur["state"] if cur is not None and cur["name"] == name else None

    def due(self, steps_done: int, every: int) -> bool:
        """Whether a loop that saves every `every` steps (0: never) saves after `steps_done` steps."""
        return self.path is not None and every > 0 and steps_done % every == 0

    def save_current(self, name: str, state: dict) -> None:
        self.state["current"] = {"name": name, "state": state}
        self._write()

    def finish(self, name: str, result) -> None:
        """Record a finished run (saved at once, so a later kill does not redo it)."""
        self.state["done"][name] = result
        self.state["current"] = None
        if self.path is not None:
            self._write()

    def _write(self) -> None:
        save_torch(self.path, self.state)

    def remove(self) -> None:
        """The job's output is written: its checkpoint is no longer needed."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def no_checkpoints() -> Checkpoints:
    """Checkpoints that are never written (library use, tests)."""
    return Checkpoints(None, "")
