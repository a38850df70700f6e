"""Train one model for every seed: a TimeMCL variant ({variant} wildcard) or the DeepAR-style baseline."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.pipeline import train_model

wc = snakemake.wildcards
for seed, ckpt, history in zip(snakemake.params.seeds, snakemake.output.ckpt, snakemake.output.history, strict=True):
    train_model(
        series_csv=snakemake.input.series,
        spec=snakemake.params.spec,
        method=wc.get("variant", "deepar"),
        K=int(wc.get("K", 1)),
        seed=int(seed),
        model_params=snakemake.params.model,
        train_params=snakemake.params.train,
        ckpt_path=ckpt,
        history_path=history,
    )
