"""Two workers vs one: identical tokens, decode latency vs hit rate, kernel times for the cost model."""

import sys
from pathlib import Path

if __name__ == "__main__":  # the workers are spawned processes that re-import this file: do nothing there
    sys.stderr = open(snakemake.log[0], "w", buffering=1)

    from methods.alspec.timing import measure_timing

    p = snakemake.params
    measure_timing(
        task_model_dir=str(Path(snakemake.input.config).parent),
        tasks=p.tasks,
        sink=p.sink,
        window=p.window,
        lam=p.timing["lam"],
        timing=p.timing,
        seed=p.seed,
        out_path=snakemake.output.timing,
    )
