"""Bad winwinlay configuration stops the workflow before any job, naming the key and the fix."""


def test_guided_steps_beyond_ddim_steps_is_named(tmp_path, run_snakemake):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text("winwinlay:\n  sampling: {ddim_steps: 20, guided_steps: 30}\n")
    proc = run_snakemake("-n", "--configfile", overlay, "--config", f"outdir={tmp_path}", "--", "winwinlay",
                         check=False)
    assert proc.returncode != 0
    message = proc.stdout + proc.stderr
    assert "winwinlay.sampling.guided_steps" in message and "lower guided_steps" in message
