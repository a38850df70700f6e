"""NestQuant's claims.json: measured metrics per seed, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.nestquant.results import write_paper_claims

write_paper_claims(
    synthetic_files=list(snakemake.input.synthetic),
    lm_files=list(snakemake.input.lm),
    minilm_files=list(snakemake.input.minilm),
    claim_q=snakemake.params.claim_q,
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
