"""Bad winwinlay configuration stops the workflow before any job, naming the key and the fix."""


def test_guided_steps_beyond_ddim_steps_is_named(tmp_path, run_snakemake):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text("winwinlay:\n  sampling: {ddim_steps: 20, guided_steps: 30}\n")
    proc = run_snakemake("-n", "--configfile", overlay, "--config", f"outdir={tmp_path}", "--", "winwinlay",
                         check=False)
    assert proc.returncode != 0
    message = proc.stdout + proc.stderr
    assert "winwinlay.sampling.guided_steps" in message and "lower guided_steps" in message


def test_sd_token_outside_the_prompt_is_named(tmp_path, run_snakemake):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text("winwinlay:\n  sd: {model_id: x, dtype: float32, device: cpu, height: 64, width: 64,\n"
                       "    guidance_scale: 7.5, attn_layers: [mid_block], map_res: 16, boxdiff_temperature: 100.0,\n"
                       "    layouts: [{prompt: a cat on a mat, objects: [{token: dog, box: [0.1, 0.1, 0.5, 0.5]}]}]}\n")
    proc = run_snakemake("-n", "--configfile", overlay, "--config", f"outdir={tmp_path}", "--", "winwinlay",
                         check=False)
    assert proc.returncode != 0
    message = proc.stdout + proc.stderr
    assert "winwinlay.sd.layouts[0].objects[0].token" in message and "name a word of the prompt" in message
