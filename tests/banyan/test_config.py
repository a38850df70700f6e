"""Bad banyan configuration stops the dry run, naming the key and the fix, before any job runs."""

import pytest


@pytest.mark.parametrize(
    "text, named",
    [
        ("banyan:\n  data:\n    min_tokens: 10\n    max_tokens: 10\n", "banyan.data.min_tokens"),
        ("banyan:\n  data:\n    source: datasets\n", "banyan.data.corpus"),
        ("banyan:\n  model:\n    chanels: 4\n", "chanels"),
    ],
)
def test_bad_banyan_config_is_named(run_snakemake, tmp_path, text, named):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    proc = run_snakemake("-n", "--configfile", bad, "--config", f"outdir={tmp_path}/out", "--", "banyan", check=False)
    assert proc.returncode != 0
    assert named in proc.stdout + proc.stderr
