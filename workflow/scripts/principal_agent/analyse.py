"""Slopes with bootstrap intervals, bound ratios and comparisons from every simulation's records."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.pipeline import analyse

analyse(
    rate_files=list(snakemake.input.rate),
    sweep_files={"arms": snakemake.input.sweep_arms, "types": snakemake.input.sweep_types},
    lipschitz_files={"logit": snakemake.input.logit, "needle": snakemake.input.needle},
    lower_bound_file=snakemake.input.lower_bound,
    multiarm_file=snakemake.input.multiarm,
    two_point_file=snakemake.input.two_point,
    hidden_subset_file=snakemake.input.hidden_subset,
    zooming_file=snakemake.input.zooming,
    n_boot=snakemake.params.n_boot,
    level=snakemake.params.level,
    out_json=snakemake.output.summary,
)
