"""The device a job computes on, from the resources Snakemake gave it (never hard-coded).

A rule that declares `gpu=at_scale(0, 1)` gets a GPU at paper scale; its script calls
`job_device(snakemake.resources)` and moves its model and batches there. At tiny scale (gpu 0) it is
the CPU. A job given a GPU on a machine where torch sees none stops at once, saying why, instead of
running for days on the CPU.
"""

from __future__ import annotations


def job_device(resources):
    """torch.device("cuda") when the job's `gpu` resource is >= 1, else torch.device("cpu"). The job's machine
    (CPU, GPU) and environment are recorded beside its log when it ends (`provenance.record_job`), for its
    paper's claims.json."""
    import torch

    from .provenance import record_job

    gpus = int(getattr(resources, "gpu", 0) or 0)
    if gpus <= 0:
        record_job()
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RuntimeError(
            f"this job was given gpu={gpus} but torch sees no CUDA device "
            f"(torch {torch.__version__}, CUDA build: {torch.version.cuda}); install a CUDA build "
            f"of torch on the GPU nodes, or run the tiny scale, which needs none"
        )
    record_job()
    return torch.device("cuda")
