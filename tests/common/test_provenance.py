"""Provenance: tokens, config digests, dirtiness, the environment and the records of the jobs of a run."""

import sys

from methods.common.provenance import huggingface_token


def test_huggingface_token_from_env_or_login_file(monkeypatch, tmp_path):
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert huggingface_token() is None
    (tmp_path / "token").write_text("hf_file\n")
    assert huggingface_token() == "hf_file"
    monkeypatch.setenv("HF_TOKEN", "hf_env")
    assert huggingface_token() == "hf_env"


def test_the_config_digest_covers_the_shared_sections_a_paper_reads(repo_root):
    """The shared LM section decides slim's, nestquant's and alspec's model: changing it changes their digest
    and no other paper's. Every paper whose rules read the shared LM's outputs declares the section."""
    import re

    from methods.common import provenance as P

    config = {"scale": "tiny", "lm": {"steps": 100}, "slim": {"a": 1}, "timemcl": {"b": 2}}
    other = {**config, "lm": {"steps": 200}}
    assert P.paper_config_digest(config, "slim") != P.paper_config_digest(other, "slim")
    assert P.paper_config_digest(config, "timemcl") == P.paper_config_digest(other, "timemcl")
    for smk in (repo_root / "workflow" / "rules").glob("*.smk"):
        if re.search(r"rules\.lm_\w+", smk.read_text()):
            assert "lm" in P.SHARED_SECTIONS.get(smk.stem, ()), f"{smk.stem} reads the shared LM"


def test_an_untracked_source_file_makes_the_checkout_dirty(tmp_path, monkeypatch):
    import subprocess

    from methods.common import provenance as P

    git = lambda *a: subprocess.run(["git", "-C", str(tmp_path), *a], check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    (tmp_path / "README.md").write_text("x\n")
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x")
    monkeypatch.setattr(P, "REPO_ROOT", tmp_path)
    assert P.git_state()["dirty"] is False
    (tmp_path / "notes.txt").write_text("an untracked file outside src/ and workflow/\n")
    assert P.git_state()["dirty"] is False
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "patch.py").write_text("x = 1\n")
    assert P.git_state()["dirty"] is True


def test_the_environment_digest_is_of_the_installed_packages():
    from methods.common import provenance as P

    packages = P.installed_packages()
    names = [p.split("==")[0].lower() for p in packages]
    assert "numpy" in names and names == sorted(names)
    assert P.environment_digest(packages) == P.environment_digest() != P.environment_digest(packages[1:])


def test_result_environment_names_every_override_and_whether_the_kernels_ran_compiled(monkeypatch):
    """ICML25_KERNELS=reference turned slim's layer speedup from 2.61x to 0.01x with nothing in the provenance."""
    import sys

    from methods.common import provenance as P

    monkeypatch.setenv("ICML25_KERNELS", "reference")
    monkeypatch.setenv("ICML25_CPU_TUNING", "off")
    monkeypatch.setenv("ICML25_CACHE_DIR", "/tmp/anywhere")  # where plans are cached: no effect on a number
    fake = type(sys)("methods.kernels")
    fake.extension_available = lambda: False
    monkeypatch.setitem(sys.modules, "methods.kernels", fake)
    env = P.result_environment()
    assert env["ICML25_KERNELS"] == "reference" and env["ICML25_CPU_TUNING"] == "off"
    assert "ICML25_CACHE_DIR" not in env and env["kernels"] == "reference"


def test_publishing_refuses_a_run_with_reference_kernels_or_an_override():
    from methods.common import report as R

    docs = {
        "slim": {"provenance": {"environment": {"kernels": "reference", "ICML25_KERNELS": "reference"}}},
        "alspec": {"provenance": {"environment": {"kernels": "compiled"}}},
        "timemcl": {"provenance": {}},
    }
    problems = R.environment_problems(docs)
    assert len(problems) == 2 and all(p.startswith("slim: ") for p in problems), problems


def test_every_icml25_variable_the_code_reads_is_known_to_change_results_or_not(repo_root):
    """Each ICML25_* environment variable read anywhere (Python, the workflow, the profiles, the C++/CUDA getenv
    calls) is either recorded in provenance as changing a result or a timing, or known to change none."""
    import re

    from methods.common import provenance as P

    names = set()
    for pattern in ("src/**/*.py", "workflow/**/*", "profiles/**/*", "tests/**/*.py", "benchmarks/**/*.py"):
        for path in repo_root.glob(pattern):
            if path.is_file():
                names |= set(re.findall(r"(?<!-D)\b(ICML25_[A-Z0-9_]*[A-Z0-9])\b", path.read_text(errors="ignore")))
    for path in repo_root.glob("csrc/**/*"):
        if path.suffix in (".h", ".cpp", ".cu"):
            names |= set(re.findall(r'"(ICML25_[A-Z0-9_]+)"', path.read_text(errors="ignore")))
    assert {"ICML25_KERNELS", "ICML25_CUDA_TC", "ICML25_KMAJOR_ROWS_INT4"} <= names  # the scan sees C and Python
    assert not P.ENV_WITH_EFFECT & P.ENV_WITHOUT_EFFECT
    unknown = names - P.ENV_WITH_EFFECT - P.ENV_WITHOUT_EFFECT
    assert not unknown, (
        f"classify {sorted(unknown)} in methods.common.provenance (ENV_WITH_EFFECT or ENV_WITHOUT_EFFECT)"
    )


DEMO = {
    "paper": "demo",
    "title": "t",
    "arxiv": "0",
    "claims": [{"id": "c", "kind": "check", "statement": "x is small", "criterion": "x < 1"}],
}


def test_every_claims_document_records_the_environment(monkeypatch):
    from methods.common import claims as C

    monkeypatch.setenv("ICML25_CPU_VNNI", "0")
    monkeypatch.setenv("ICML25_SLURM_PARTITION", "gpu")  # where a cluster queues the job: no effect
    decl = DEMO
    doc = C.evaluate_claims(decl, {"x": 0.5}, "tiny")
    assert doc["provenance"]["environment"]["ICML25_CPU_VNNI"] == "0"
    assert "ICML25_SLURM_PARTITION" not in doc["provenance"]["environment"]
    C.validate_claims(doc)


FAKE_GPU_JOB = """
import torch
torch.cuda.is_available = lambda: True
torch.cuda.get_device_name = lambda index=0: "Fake GPU X1 (test)"
import types
snakemake = types.SimpleNamespace(
    rule="demo_train", log=[{log!r}], resources=types.SimpleNamespace(gpu=1), wildcards={{"seeds": "seed0"}}
)
import methods.kernels
from methods.common.device import job_device
assert str(job_device(snakemake.resources)) == "cuda"
"""


def test_a_job_on_a_gpu_node_lands_in_the_claims_json(tmp_path, repo_root):
    """On a cluster the claims job runs on a CPU node: claims.json must name the GPU of the job that computed (here
    a job run under a fake GPU name, as a Snakemake script job), its environment, and the run's kernels."""
    import json
    import os
    import subprocess
    import sys

    from methods.common import claims as C
    from methods.common import report as R

    log = tmp_path / "results" / "logs" / "demo" / "train_seed0.log"
    log.parent.mkdir(parents=True)
    env = {**os.environ, "ICML25_KERNELS": "reference", "PYTHONPATH": str(repo_root / "src")}
    subprocess.run([sys.executable, "-c", FAKE_GPU_JOB.format(log=str(log))], check=True, env=env, timeout=300)
    assert (log.parent / "train_seed0.provenance.json").exists()
    decl = DEMO
    claims_path = tmp_path / "results" / "demo" / "claims.json"
    C.write_claims(claims_path, C.evaluate_claims(decl, {"x": 0.5}, "full"))
    prov = json.loads(claims_path.read_text())["provenance"]
    (job,) = prov["jobs"]
    assert job["job"] == "demo/train_seed0" and job["rule"] == "demo_train"
    assert job["host"]["gpu"] == "Fake GPU X1 (test)" and prov["host"]["gpu"] is None  # the claims job has none
    assert job["environment"] == {"ICML25_KERNELS": "reference", "kernels": "reference"}
    assert prov["environment"]["kernels"] == "reference"  # the run's: any job on the reference ops
    assert any("PyTorch reference" in p for p in R.environment_problems({"demo": {"provenance": prov}}))


def test_a_job_outside_snakemake_records_nothing_and_shared_steps_are_gathered(tmp_path, monkeypatch):
    from methods.common import provenance as P

    monkeypatch.delattr(sys.modules["__main__"], "snakemake", raising=False)
    assert P.record_job() is None
    logs = tmp_path / "logs"
    for slug, name in (("slim", "speed"), ("lm", "train"), ("timemcl", "train")):
        P.write_job_record(logs / slug / f"{name}.log", f"{slug}_{name}")
    (logs / "slim" / "broken.provenance.json").write_text("{not json")
    (logs / "slim" / "other.provenance.json").write_text('{"host": "not a record"}')
    jobs = P.job_records(tmp_path / "slim" / "claims.json", "slim")
    assert [j["job"] for j in jobs] == ["slim/speed", "lm/train"]  # its own, the shared LM's; not timemcl's
    merged = P.merged_environment({}, [{"environment": {"kernels": "compiled"}}, {"environment": {}}])
    assert merged == {"kernels": "compiled"}


def test_results_of_another_config_without_a_snakemake_record_are_named(tmp_path):
    """A results folder copied in, then a config change: Snakemake reruns a job whose params changed only from its
    record, so without one it said "Nothing to be done"; the workflow now names the folder and the fix."""
    import json

    from methods.common import provenance as P

    config = {"scale": "tiny", "demo": {"steps": 3}}
    claims = tmp_path / "out" / "demo" / "claims.json"
    claims.parent.mkdir(parents=True)
    other = P.paper_config_digest({**config, "demo": {"steps": 4}}, "demo")
    claims.write_text(json.dumps({"provenance": {"config_digest": other}}))
    (problem,) = P.unrecorded_results_of_another_config("out", config, ["demo", "absent"], tmp_path)
    assert "out/demo/claims.json was made with another config" in problem and other in problem
    assert "remove out/demo" in problem
    # the same config, or a Snakemake record of the job (which reruns it when its params changed): nothing to say
    claims.write_text(json.dumps({"provenance": {"config_digest": P.paper_config_digest(config, "demo")}}))
    assert P.unrecorded_results_of_another_config("out", config, ["demo"], tmp_path) == []
    claims.write_text(json.dumps({"provenance": {"config_digest": other}}))
    record = P.snakemake_record("out/demo/claims.json", tmp_path)
    record.parent.mkdir(parents=True)
    record.write_text("{}")
    assert P.unrecorded_results_of_another_config("out", config, ["demo"], tmp_path) == []
