"""GraphGPT's claims.json: measured metrics per seed, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.graphgpt.results import write_paper_claims

write_paper_claims(
    metric_files=list(snakemake.input.metrics),
    stats_files=list(snakemake.input.stats),
    scale=snakemake.params.scale,
    regression_tasks=snakemake.params.regression_tasks,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
