"""`make pull` (methods.common.pull) against a hostile or broken dvc.lock, with DVC and Snakemake replaced by a
recorder: a lock arrives in a pull request, so no path in it may reach outside the checkout, and the pull
deletes nothing but files of the outs dvc.yaml declares. Also: no lock, a failed `dvc pull` (a remote with
`verify = true` refusing an altered object), shared stages recorded for Snakemake, the kernels built here.
The real DVC round trips are in tests/workflow/test_dvc.py."""

import hashlib
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from methods.common import pull

MD5_BOGUS = "0" * 32


def make_repo(tmp_path, stages: dict, lock: dict | None) -> tuple:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}))
    if lock is not None:
        (repo / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": lock}))
    return repo


class Recorder:
    """Stands in for `dvc` and `snakemake`: every command is recorded; `dvc pull` fails when told to."""

    def __init__(self, pull_fails: bool = False):
        self.calls: list[list[str]] = []
        self.pull_fails = pull_fails

    def __call__(self, cmd, root):
        cmd = [str(c) for c in cmd]
        self.calls.append(cmd)
        tool, args = cmd[0].rsplit("/", 1)[-1], cmd[1:]
        rc, out = 0, ""
        if tool == "dvc" and args[:2] == ["status", "--json"]:
            out = "{}"
        elif tool == "dvc" and args[:2] == ["cache", "dir"]:
            out = ".dvc/cache"
        elif tool == "dvc" and args[:2] == ["remote", "default"]:
            out = "origin"
        elif tool == "dvc" and args[:1] == ["config"]:
            out = "/srv/dvc-store"
        elif tool == "snakemake" and "--list-rules" in args:  # the rules the rule files define
            rules = Path(root).glob("workflow/rules/**/*.smk")
            out = "\n".join(r for f in rules for r in re.findall(r"^rule (\w+):", f.read_text(), re.M))
        elif tool == "dvc" and args[:1] == ["pull"] and self.pull_fails:
            rc, out = 1, "ERROR: failed to pull data from the cloud - Checkout failed. Is your cache up to date?"
        return subprocess.CompletedProcess(cmd, rc, out, "")


@pytest.fixture
def fake(monkeypatch):
    rec = Recorder()

    def run(cmd, root, capture=False):  # as pull._run: a failure is a SystemExit
        proc = rec(cmd, root)
        if proc.returncode:
            raise SystemExit(f"`{' '.join(proc.args)}` failed (exit {proc.returncode})")
        return proc

    monkeypatch.setattr(pull, "_run", run)
    monkeypatch.setattr(pull, "_run_status", rec, raising=False)
    return rec


def dvc_ran(rec):
    return [c for c in rec.calls if c[0].endswith("dvc")]


PAPER_STAGE = {"paper": {"cmd": "snakemake -- paper", "outs": ["results/paper"]}}


def test_lock_out_with_dotdot_never_deletes_the_outside_file(tmp_path, fake):
    victim = tmp_path / "victim.txt"
    victim.write_text("someone's file\n")
    repo = make_repo(
        tmp_path, PAPER_STAGE, {"paper": {"cmd": "x", "outs": [{"path": "../victim.txt", "md5": MD5_BOGUS}]}}
    )
    with pytest.raises(SystemExit, match=r"paper: outs '\.\./victim\.txt'"):
        pull.main(["--root", str(repo), "paper"])
    assert victim.read_text() == "someone's file\n"
    assert not dvc_ran(fake), "DVC ran on a lock that reaches outside the checkout"


def test_lock_out_with_an_absolute_path_never_deletes_it(tmp_path, fake):
    victim = tmp_path / "elsewhere" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("keep me\n")
    repo = make_repo(
        tmp_path,
        PAPER_STAGE,
        {"paper": {"cmd": "x", "outs": [{"path": str(victim), "md5": MD5_BOGUS}], "deps": []}},
    )
    with pytest.raises(SystemExit, match="absolute"):
        pull.main(["--root", str(repo), "paper"])
    assert victim.exists()


def test_lock_path_escaping_through_a_symlink_is_refused(tmp_path, fake):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "claims.json").write_text("{}\n")
    repo = make_repo(
        tmp_path, PAPER_STAGE, {"paper": {"cmd": "x", "outs": [{"path": "results/claims.json", "md5": MD5_BOGUS}]}}
    )
    (repo / "results").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SystemExit, match="symlink"):
        pull.main(["--root", str(repo), "paper"])
    assert (outside / "claims.json").exists()


def test_a_dep_path_escaping_is_refused_too(tmp_path, fake):
    repo = make_repo(
        tmp_path,
        PAPER_STAGE,
        {"paper": {"cmd": "x", "deps": [{"path": "../../etc/passwd", "md5": MD5_BOGUS}], "outs": []}},
    )
    with pytest.raises(SystemExit, match="deps '../../etc/passwd'"):
        pull.main(["--root", str(repo), "paper"])


def test_a_pull_deletes_only_files_of_the_declared_outs(tmp_path, fake, capsys):
    """A lock naming a tracked file of the checkout (inside it, but no out of the stage in dvc.yaml) with a
    bogus md5: the mismatch is reported, the file stays."""
    repo = make_repo(
        tmp_path, PAPER_STAGE, {"paper": {"cmd": "x", "outs": [{"path": "config.yaml", "md5": MD5_BOGUS}]}}
    )
    (repo / "config.yaml").write_text("scale: tiny\n")
    assert pull.main(["--root", str(repo), "paper"]) == 1
    assert (repo / "config.yaml").read_text() == "scale: tiny\n"
    assert "outside the stages' outs" in capsys.readouterr().err


def test_no_lock_is_an_error_saying_there_is_nothing_to_pull(tmp_path, fake):
    repo = make_repo(tmp_path, PAPER_STAGE, None)
    with pytest.raises(SystemExit, match="nothing to pull"):
        pull.main(["--root", str(repo)])


def test_a_failed_dvc_pull_names_the_file_its_object_and_the_remote(tmp_path, fake, capsys):
    fake.pull_fails = True
    repo = make_repo(
        tmp_path,
        PAPER_STAGE,
        {"paper": {"cmd": "x", "outs": [{"path": "results/paper/claims.json", "md5": "ab" * 16}]}},
    )
    assert pull.main(["--root", str(repo), "paper"]) == 1
    err = capsys.readouterr().err
    assert "results/paper/claims.json was not restored" in err and "ab" * 16 in err, err
    assert "remote 'origin' (/srv/dvc-store)" in err, err


def test_shared_stages_are_recorded_for_snakemake_and_the_kernels_built_here(tmp_path, fake):
    stages = {
        "kernels": {"cmd": "snakemake --until kernels_build", "outs": ["results/kernels"]},
        "lm": {"cmd": "snakemake --until lm_train", "outs": ["results/lm"]},
        **PAPER_STAGE,
    }
    repo = make_repo(tmp_path, stages, None)
    lock = {}
    for stage, text in (("kernels", "/producer/csrc/build/abc/icml25_kernels.so\n"), ("lm", "weights\n")):
        f = repo / "results" / stage / "out.txt"
        f.parent.mkdir(parents=True)
        f.write_text(text)
        lock[stage] = {
            "cmd": "x",
            "outs": [{"path": f"results/{stage}/out.txt", "md5": hashlib.md5(text.encode()).hexdigest()}],
        }
        rules = repo / "workflow" / "rules" / "shared" / f"{stage}.smk"
        rules.parent.mkdir(parents=True, exist_ok=True)
        rules.write_text(f"rule {stage}_{'build' if stage == 'kernels' else 'train'}:\n    output: 'x'\n")
    (repo / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": lock}))
    assert pull.main(["--root", str(repo), "kernels", "lm"]) == 0
    touches = [c for c in fake.calls if c[0].endswith("snakemake") and "--touch" in c]
    assert any("--until" in c and "lm_train" in c and "kernels_build" in c for c in touches), fake.calls
    assert any(c[1:3] == ["-m", "methods.kernels.build"] for c in fake.calls), "the pulled build stamp was trusted"


def test_a_lock_recording_no_stage_is_an_error_saying_there_is_nothing_to_pull(tmp_path, fake):
    repo = make_repo(tmp_path, PAPER_STAGE, {})
    with pytest.raises(SystemExit, match=r"nothing to pull: dvc.lock records no stage.*`snakemake`"):
        pull.main(["--root", str(repo)])
    assert not [c for c in dvc_ran(fake) if c[1] == "pull"]


def test_paper_scale_stages_come_from_full_dvc_yaml_and_its_lock(tmp_path, fake):
    """The paper-scale stages live in full/dvc.yaml (so `dvc repro` at the root never runs them): a pull reads
    their lock beside it, names them to DVC by that file, checks their paths like the root lock's, and touches
    their jobs with the paper-scale config."""
    repo = make_repo(tmp_path, PAPER_STAGE, None)
    text = "scores\n"
    out = repo / "results_full" / "paper" / "claims.json"
    out.parent.mkdir(parents=True)
    out.write_text(text)
    (repo / "full").mkdir()
    (repo / "full" / "dvc.yaml").write_text(
        yaml.safe_dump({"stages": {"paper_full": {"cmd": "x", "wdir": "..", "outs": ["results_full/paper"]}}})
    )
    rules = repo / "workflow" / "rules" / "paper.smk"
    rules.parent.mkdir(parents=True)
    rules.write_text("rule paper_claims:\n    output: 'x'\n")
    locked = {
        "cmd": "x",
        "outs": [{"path": "results_full/paper/claims.json", "md5": hashlib.md5(text.encode()).hexdigest()}],
    }
    (repo / "full" / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {"paper_full": locked}}))
    assert pull.main(["--root", str(repo)]) == 0
    (dvc_pull,) = [c for c in dvc_ran(fake) if c[1] == "pull"]
    assert dvc_pull[2:] == ["full/dvc.yaml:paper_full"], dvc_pull
    statuses = [c for c in dvc_ran(fake) if c[1:3] == ["status", "--json"]]
    assert statuses and all(c[3:] == ["full/dvc.yaml:paper_full"] for c in statuses), statuses
    touches = [c for c in fake.calls if c[0].endswith("snakemake") and "--touch" in c]
    assert touches and all("config/full.yaml" in c for c in touches), touches

    bad = {"paper_full": {"cmd": "x", "outs": [{"path": "../elsewhere", "md5": MD5_BOGUS}]}}
    (repo / "full" / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": bad}))
    with pytest.raises(SystemExit, match=r"full/dvc.lock names paths outside the checkout"):
        pull.main(["--root", str(repo)])
