"""The job's device follows its `gpu` resource; a GPU job without CUDA stops naming the cause."""

from types import SimpleNamespace

import pytest
import torch

from methods.common.device import job_device


def test_cpu_unless_the_job_was_given_a_gpu():
    assert job_device(SimpleNamespace(gpu=0)).type == "cpu"
    assert job_device(SimpleNamespace()).type == "cpu"  # a rule without a gpu resource


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: the GPU path is taken")
def test_a_gpu_job_without_cuda_stops_saying_why():
    with pytest.raises(RuntimeError, match="gpu=1 but torch sees no CUDA device"):
        job_device(SimpleNamespace(gpu=1))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_gpu_job_gets_cuda():
    assert job_device(SimpleNamespace(gpu=1)).type == "cuda"
