"""Error vs bits per entry of NestQuant and the scalar baselines on Gaussian and Student-t matrices, one seed."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.nestquant.synthetic import synthetic

(seed,) = snakemake.params.seeds  # one job per seed at every scale
s = snakemake.params.synthetic
synthetic(
    distributions=s["distributions"],
    rows=s["rows"],
    cols=s["cols"],
    df=s["df"],
    nestquant_q=s["nestquant_q"],
    weight_betas=snakemake.params.weight_betas,
    rtn_bits=s["rtn_bits"],
    uniform_levels=s["uniform_levels"],
    seed=seed,
    out_json=snakemake.output.metrics,
)
