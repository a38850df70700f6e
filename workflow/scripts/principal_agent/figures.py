"""The paper's figures: regret vs T, vs N and K, smooth model, lower bound and multi-arm."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.pipeline import make_figures

make_figures(
    summary_json=snakemake.input.summary,
    rate_png=snakemake.output.rate,
    sweep_png=snakemake.output.sweep,
    lipschitz_png=snakemake.output.lipschitz,
    lower_bound_png=snakemake.output.lower_bound,
)
