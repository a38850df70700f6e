"""`snakemake --lint` raises nothing but the one lint the README's Design section justifies."""

import re

# One environment for the whole workflow instead of a conda env per rule (README, "Design").
ACCEPTED = {"Specify a conda environment or container for each rule."}


def test_lint_raises_only_the_accepted_lint(run_snakemake):
    proc = run_snakemake("--lint", check=False)
    titles = set(re.findall(r"^\s+\* (.+?):$", proc.stdout + proc.stderr, flags=re.M))
    assert titles <= ACCEPTED, f"new lints: {sorted(titles - ACCEPTED)}"
    assert "Lints for" not in proc.stdout + proc.stderr or titles, "lint output changed format; update the parser"
