"""One dataset, one seed group: every KNN / RBF / masked / label context on every split seed (tau, err_d*, their
correlations)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read

from methods.contextures.experiment import run_dataset

run_dataset(
    dataset=snakemake.wildcards.contextures_dataset,
    contexts=dict(snakemake.params.contexts),
    seeds=list(snakemake.params.seeds),
    fractions=dict(snakemake.params.split),
    max_pretrain=snakemake.params.max_pretrain,
    d_grid=list(snakemake.params.d_grid),
    ridge_alpha=snakemake.params.ridge_alpha,
    beta=snakemake.params.beta,
    d0_max=snakemake.params.d0_max,
    out_json=snakemake.output.metrics,
    mask=dict(snakemake.params.mask),
    wheel=snakemake.input.get("wheel"),
    openml_npz=snakemake.input.get("openml"),
    label_bins=snakemake.params.label_bins,
)
