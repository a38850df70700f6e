"""Fine-tune one model ({model} wildcard) on one task ({task}) for every seed; test metrics."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.graphgpt.pipeline import finetune_model

finetune_model(
    task_name=snakemake.wildcards.task,
    model_name=snakemake.wildcards.model,
    data_json=snakemake.input.data,
    pool_path=snakemake.input.get("pool"),
    ckpt_path=snakemake.input.get("ckpt"),
    model_params=snakemake.params.model,
    train_params=snakemake.params.finetune,
    gin_params=snakemake.params.gin,
    n_node_ids=snakemake.params.n_node_ids,
    val_fraction=snakemake.params.val_fraction,
    seeds=snakemake.params.seeds,
    out_metrics=snakemake.output.metrics,
)
