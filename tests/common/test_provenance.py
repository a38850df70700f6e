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
