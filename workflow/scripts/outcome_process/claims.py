"""outcome_process's claims.json: measured metrics, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.outcome_process.claims import write_paper_claims

write_paper_claims(
    rate_files=list(snakemake.input.rate),
    horizon_files=list(snakemake.input.horizon),
    eps_files=list(snakemake.input.eps),
    samples_files=list(snakemake.input.samples),
    target=snakemake.params.target,
    lemma_json=snakemake.input.lemma,
    prm_json=snakemake.input.prm,
    preference_files=list(snakemake.input.preference),
    families=list(snakemake.params.families),
    prm_families=list(snakemake.params.prm_families),
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
