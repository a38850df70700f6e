"""ALSpec's claims.json: measured metrics, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.alspec.results import write_paper_claims

write_paper_claims(
    task_files=list(snakemake.input.tasks),
    lm_file=snakemake.input.lm,
    timing_file=snakemake.input.timing,
    lams=snakemake.params.lams,
    extrapolate_to=snakemake.params.extrapolate_to,
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
