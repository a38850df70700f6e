"""binary_denoising's claims.json: measured metrics per seed, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.binary_denoising.claims import write_paper_claims

datasets = snakemake.params.datasets
n_seeds = snakemake.params.n_seeds
digits = list(snakemake.input.digits)
write_paper_claims(
    mixture_files=list(snakemake.input.mixture),
    digits_files={ds: digits[i * n_seeds : (i + 1) * n_seeds] for i, ds in enumerate(datasets)},
    exact_files=list(snakemake.input.exact),
    declaration=snakemake.input.declaration,
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
