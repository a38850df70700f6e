"""Bad winwinlay configuration stops the workflow before any job, naming the key and the fix."""

import re


def test_guided_steps_beyond_ddim_steps_is_named(tmp_path, run_snakemake):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text("winwinlay:\n  sampling: {ddim_steps: 20, guided_steps: 30}\n")
    proc = run_snakemake(
        "-n", "--configfile", overlay, "--config", f"outdir={tmp_path}", "--", "winwinlay", check=False
    )
    assert proc.returncode != 0
    message = proc.stdout + proc.stderr
    assert "winwinlay.sampling.guided_steps" in message and "lower guided_steps" in message


def test_sd_token_outside_the_prompt_is_named(tmp_path, run_snakemake):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(
        "winwinlay:\n  sd: {model_id: x, dtype: float32, height: 64, width: 64,\n"
        "    guidance_scale: 7.5, attn_layers: [mid_block], map_res: 16, boxdiff_temperature: 100.0,\n"
        "    layouts: [{prompt: a cat on a mat, objects: [{token: dog, box: [0.1, 0.1, 0.5, 0.5]}]}]}\n"
    )
    proc = run_snakemake(
        "-n", "--configfile", overlay, "--config", f"outdir={tmp_path}", "--", "winwinlay", check=False
    )
    assert proc.returncode != 0
    message = proc.stdout + proc.stderr
    assert "winwinlay.sd.layouts[0].objects[0].token" in message and "name a word of the prompt" in message


def test_paper_scale_fetches_the_weights_on_the_submit_host_and_a_gated_model_needs_a_token(
    tmp_path, run_snakemake, monkeypatch
):
    """At paper scale the Stable Diffusion weights are a download job before the GPU jobs (SD 1.5 is not gated: no
    token asked); a model marked gated stops the dry run saying how to get a token."""
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "ICML25_DAG_ONLY", "HF_TOKEN_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))
    out = f"outdir: {tmp_path}/out\nresources: {tmp_path}/resources\n"
    (tmp_path / "open.yaml").write_text(out)
    proc = run_snakemake("-n", "--configfile", "config/full.yaml", tmp_path / "open.yaml", "--", "winwinlay")
    assert re.search(r"^winwinlay_sd_download\s+1$", proc.stdout, re.M)
    assert f"{tmp_path}/resources/winwinlay/sd/stable-diffusion-v1-5--stable-diffusion-v1-5" in proc.stdout
    (tmp_path / "gated.yaml").write_text(out + "winwinlay:\n  sd: {gated: true}\n")
    proc = run_snakemake(
        "-n", "--configfile", "config/full.yaml", tmp_path / "gated.yaml", "--", "winwinlay", check=False
    )
    assert proc.returncode != 0
    assert "stable-diffusion-v1-5/stable-diffusion-v1-5 is gated on the Hugging Face Hub" in proc.stdout + proc.stderr
