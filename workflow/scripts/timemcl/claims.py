"""TimeMCL's claims.json (and metrics.json): measured metrics per seed from every seed group, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.results import write_paper_claims

write_paper_claims(
    main_files=list(snakemake.input.main),
    toy_files=list(snakemake.input.toy),
    sweep_json=snakemake.input.sweep,
    datasets=snakemake.params.datasets,
    variants=snakemake.params.variants,
    primary=snakemake.params.primary,
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
    official_toy_json=snakemake.input.official_toy,
)
