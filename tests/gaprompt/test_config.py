"""Bad gaprompt configuration stops the workflow before any job, naming the key and the fix."""


def test_prompt_depth_beyond_depth_is_named(run_snakemake, tmp_path):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text("gaprompt:\n  adapt: {prompt_depth: 9}\n")
    proc = run_snakemake("-n", "gaprompt", "--configfile", overlay, "--config", f"outdir={tmp_path}/out", check=False)
    assert proc.returncode != 0
    assert "gaprompt.adapt.prompt_depth" in proc.stdout + proc.stderr
