"""Checkpoint and resume (methods.graphgpt.checkpoint): a pre-training or fine-tuning job killed midway
(SIGKILL, as a scheduler's time limit or the out-of-memory killer does) and run again continues from its
last checkpoint, and its outputs equal those of a run that was never interrupted.

The end-to-end test runs the workflow at smoke scale (with more steps than smoke's two, so the kill falls
inside a run) through Snakemake. A `sitecustomize` module on PYTHONPATH, in the test only, makes the job
process kill itself with SIGKILL right after its n-th mid-run checkpoint."""

import os
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from methods.common.io import load_torch, read_json
from methods.graphgpt.checkpoint import Checkpoints, fingerprint, resume_path, rng_state, set_rng_state

ROOT = Path(__file__).resolve().parents[2]
# smoke scale with runs long enough to be killed midway: checkpoints every 2 of 6 steps
OVERLAY = {
    "graphgpt": {
        "pretrain": {"steps": 6, "checkpoint_every": 2},
        "finetune": {"steps": 6, "eval_every": 2, "checkpoint_every": 2},
        "gin": {"train": {"steps": 6, "eval_every": 2, "checkpoint_every": 2}},
    }
}
KILLER = textwrap.dedent("""
    import os, signal, sys

    _job, _at = os.environ.get("GRAPHGPT_KILL_JOB"), int(os.environ.get("GRAPHGPT_KILL_AT_SAVE", "0"))
    if _job and _at and any(a.endswith(f".{_job}.py") for a in sys.argv):
        from methods.graphgpt import checkpoint

        _write, _saves = checkpoint.Checkpoints._write, []

        def _write_then_die(self):
            _write(self)
            if self.state["current"] is not None:  # a mid-run checkpoint
                _saves.append(1)
                if len(_saves) == _at:
                    os.kill(os.getpid(), signal.SIGKILL)

        checkpoint.Checkpoints._write = _write_then_die
""")


def test_rng_state_round_trip_restores_every_stream():
    rng, gen = np.random.default_rng(3), torch.Generator().manual_seed(3)
    torch.manual_seed(5)
    np.random.seed(5)
    state = rng_state({"r": rng}, {"g": gen})
    first = (rng.random(3), torch.rand(3, generator=gen), torch.rand(3), np.random.rand(3))
    set_rng_state(state, {"r": rng}, {"g": gen})
    again = (rng.random(3), torch.rand(3, generator=gen), torch.rand(3), np.random.rand(3))
    for a, b in zip(first, again):
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_a_checkpoint_of_other_parameters_or_inputs_is_ignored(tmp_path):
    data = tmp_path / "pool.pt"
    data.write_bytes(b"x")
    path = resume_path(str(tmp_path / "molecules_all.pt"))
    assert path.endswith("molecules_all.resume.pt")
    key = fingerprint({"steps": 6}, [str(data)])
    c = Checkpoints(path, key)
    c.save_current("get_smtp", {"step": 2})
    assert Checkpoints(path, key).current("get_smtp") == {"step": 2}
    assert Checkpoints(path, fingerprint({"steps": 8}, [str(data)])).current("get_smtp") is None
    data.write_bytes(b"xy")  # the input was rewritten
    assert Checkpoints(path, fingerprint({"steps": 6}, [str(data)])).current("get_smtp") is None
    Path(path).write_bytes(b"truncated")
    assert Checkpoints(path, key).current("get_smtp") is None
    c.remove()
    assert not Path(path).exists()


def _outputs(outdir: Path) -> dict:
    out = outdir / "graphgpt"
    metrics = read_json(out / "metrics" / "triangles_all.json")
    for m in metrics["models"].values():
        m.pop("seconds")
    ckpt = load_torch(out / "pretrain" / "structure_all.pt")
    history = read_json(out / "pretrain" / "structure_all.history.json")
    for h in history.values():
        h.pop("seconds")
    return {"metrics": metrics, "history": history, "state": ckpt}


def _same(a: dict, b: dict) -> None:
    assert a["metrics"] == b["metrics"]
    assert a["history"] == b["history"]
    assert a["state"].keys() == b["state"].keys()
    for model in a["state"]:
        for k, v in a["state"][model]["state"].items():
            assert torch.equal(v, b["state"][model]["state"][k]), (model, k)


@pytest.mark.parametrize("job,at_save", [("pretrain", 3), ("finetune", 4)])
def test_a_job_killed_midway_resumes_to_the_uninterrupted_result(run_snakemake, tmp_path, monkeypatch, job, at_save):
    target = lambda outdir: str(outdir / "graphgpt" / "metrics" / "triangles_all.json")  # noqa: E731
    overlay = tmp_path / "overlay.yaml"
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILLER)
    monkeypatch.setenv("PYTHONPATH", f"{hook}{os.pathsep}{ROOT / 'src'}")

    def run(outdir, check=True):
        overlay.write_text(yaml.safe_dump({**OVERLAY, "outdir": str(outdir)}))
        return run_snakemake(
            "--cores", "1", "--configfile", "config/smoke.yaml", str(overlay), "--", target(outdir), check=check
        )

    run(tmp_path / "whole")
    monkeypatch.setenv("GRAPHGPT_KILL_JOB", job)
    monkeypatch.setenv("GRAPHGPT_KILL_AT_SAVE", str(at_save))
    killed = tmp_path / "killed"
    proc = run(killed, check=False)
    assert proc.returncode != 0, "the job was not killed"
    side = (
        killed
        / "graphgpt"
        / ("pretrain/structure_all.resume.pt" if job == "pretrain" else "metrics/triangles_all.resume.pt")
    )
    assert side.exists(), "no checkpoint was left by the killed job"
    saved = load_torch(side)
    assert saved["current"] is not None and 0 < saved["current"]["state"]["step"] < 6
    monkeypatch.delenv("GRAPHGPT_KILL_JOB")
    run(killed)
    assert not side.exists(), "the finished job left its checkpoint behind"
    assert "resuming" in next((killed / "logs" / "graphgpt").glob(f"{job}_*.log")).read_text()
    _same(_outputs(killed), _outputs(tmp_path / "whole"))
