"""Evaluate every model of one dataset and K on the test windows, seed by seed."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.pipeline import evaluate_dataset

variants, seeds = list(snakemake.params.variants), list(snakemake.params.seeds)
timemcl = list(snakemake.input.timemcl)  # seed-major, then variant (helpers/timemcl.smk)
histories = list(snakemake.input.histories)
for i, (seed, out) in enumerate(zip(seeds, snakemake.output.metrics, strict=True)):
    tag = f"_s{seed}."
    evaluate_dataset(
        dataset=snakemake.wildcards.dataset,
        series_csv=snakemake.input.series,
        spec=snakemake.params.spec,
        timemcl_ckpts=timemcl[i * len(variants) : (i + 1) * len(variants)],
        variants=variants,
        deepar_ckpt=snakemake.input.deepar[i],
        K=int(snakemake.wildcards.K),
        seed=int(seed),
        out_json=out,
        histories=[h for h in histories if tag in h.rsplit("/", 1)[-1]],
    )
