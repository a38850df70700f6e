"""Provenance helpers: where a Hugging Face token would come from."""

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
