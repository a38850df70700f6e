"""The paper's figures: regret vs T, vs N and K, smooth model, lower bounds, multi-arm and zooming."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.figures import make_figures

make_figures(
    summary_json=snakemake.input.summary,
    two_point_files=list(snakemake.input.two_point),
    hidden_subset_files=list(snakemake.input.hidden_subset),
    zooming_files=list(snakemake.input.zooming),
    rate_png=snakemake.output.rate,
    rate_csv=snakemake.output.rate_data,
    sweep_png=snakemake.output.sweep,
    lipschitz_png=snakemake.output.lipschitz,
    lower_bound_png=snakemake.output.lower_bound,
    two_point_png=snakemake.output.two_point,
    hidden_subset_png=snakemake.output.hidden_subset,
    zooming_png=snakemake.output.zooming,
)
