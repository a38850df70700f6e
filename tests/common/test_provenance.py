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
