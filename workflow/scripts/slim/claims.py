"""SLiM's claims.json: measured metrics per calibration seed, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.slim.results import write_paper_claims

write_paper_claims(
    lm_files=list(snakemake.input.lm),
    minilm_files=list(snakemake.input.minilm),
    speed_json=snakemake.input.speed,
    speed_shape=snakemake.params.claim_shape,
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
