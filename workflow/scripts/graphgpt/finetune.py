"""Fine-tune every model of one task ({task} wildcard) for the seeds of one group ({seeds}); test metrics;
a resubmitted job resumes from its last checkpoint."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.graphgpt.finetuning import finetune_task

finetune_task(
    task_name=snakemake.wildcards.task,
    models=list(snakemake.params.models),
    data_json=snakemake.input.data,
    pool_paths={s: snakemake.input[s] for s in ("eulerian", "edgelist") if snakemake.input.get(s)},
    ckpt_paths=list(snakemake.input.get("ckpts", [])),
    model_params=snakemake.params.model,
    train_params=snakemake.params.finetune,
    gin_params=snakemake.params.gin,
    n_node_ids=snakemake.params.n_node_ids,
    val_fraction=snakemake.params.val_fraction,
    seeds=snakemake.params.seeds,
    out_metrics=snakemake.output.metrics,
    device=job_device(snakemake.resources),
    threads=snakemake.threads,
)
