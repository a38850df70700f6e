"""Bad mm_alignment configuration stops the dry run with the key named, before any job runs."""

import pytest


@pytest.mark.parametrize(
    "text, named",
    [
        ("mm_alignment:\n  synthetic:\n    uniqueness: [3, 6]\n", "mm_alignment.synthetic.uniqueness"),
    ],
)
def test_bad_config_names_the_key(run_snakemake, tmp_path, text, named):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    proc = run_snakemake("-n", "mm_alignment", "--configfile", bad, check=False)
    assert proc.returncode != 0
    assert named in proc.stdout + proc.stderr
