"""Bad gaprompt configuration stops the workflow before any job, naming the key and the fix."""


def test_prompt_depth_beyond_depth_is_named(run_snakemake, tmp_path):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text("gaprompt:\n  adapt: {prompt_depth: 9}\n")
    proc = run_snakemake("-n", "gaprompt", "--configfile", overlay, "--config", f"outdir={tmp_path}/out", check=False)
    assert proc.returncode != 0
    assert "gaprompt.adapt.prompt_depth" in proc.stdout + proc.stderr


def _full_overlay(tmp_path, h5, checkpoint):
    """A paper-scale overlay (after config/full.yaml) that points the prerequisites at `h5` and `checkpoint`."""
    overlay = tmp_path / "paths.yaml"
    overlay.write_text(
        f"outdir: {tmp_path}/out\ngaprompt:\n  data: {{h5: {{train: {h5}, test: {h5}}}}}\n"
        f"  backbone: {{checkpoint: {checkpoint}}}\n"
    )
    return overlay


def test_paper_scale_dry_run_names_the_missing_dataset_and_checkpoint(run_snakemake, tmp_path, monkeypatch):
    """ScanObjectNN's h5 files (licence form) and Point-MAE's checkpoint are inputs at paper scale: the dry run
    stops naming what to obtain and where, the dataset first, then (once it is there) the checkpoint."""
    monkeypatch.delenv("ICML25_DAG_ONLY", raising=False)
    missing = tmp_path / "absent"
    proc = run_snakemake(
        "-n",
        "--configfile",
        "config/full.yaml",
        _full_overlay(tmp_path, missing / "a.h5", missing / "pretrain.pth"),
        "--",
        "gaprompt",
        check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"is missing: expected at {missing / 'a.h5'}" in out and "hkust-vgd.github.io/scanobjectnn" in out
    h5 = tmp_path / "split.h5"
    h5.write_bytes(b"")
    proc = run_snakemake(
        "-n",
        "--configfile",
        "config/full.yaml",
        _full_overlay(tmp_path, h5, missing / "pretrain.pth"),
        "--",
        "gaprompt",
        check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"is missing: expected at {missing / 'pretrain.pth'}" in out and "Point-MAE" in out
    ckpt = tmp_path / "pretrain.pth"
    ckpt.write_bytes(b"")
    proc = run_snakemake("-n", "--configfile", "config/full.yaml", _full_overlay(tmp_path, h5, ckpt), "--", "gaprompt")
    assert "gaprompt_adapt" in proc.stdout
