"""Quality / hit rate vs λ per task; latency vs hit rate and the cost model up to 128K."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.alspec.figures import write_figures

write_figures(
    task_files=list(snakemake.input.tasks),
    lm_file=snakemake.input.lm,
    timing_file=snakemake.input.timing,
    lams=snakemake.params.lams,
    extrapolate_to=snakemake.params.extrapolate_to,
    quality_png=snakemake.output.quality,
    timing_png=snakemake.output.timing,
    quality_csv=snakemake.output.data,
)
