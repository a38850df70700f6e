"""The two-worker runner (gloo, two processes) returns the single-process tokens and verdicts."""

import torch

from methods.alspec.engine import SpecConfig, SpecDecoder
from methods.alspec.workers import time_two_workers, two_worker_decode


def test_two_workers_return_the_single_process_tokens(tiny_llama, tiny_llama_dir, ids):
    spec = SpecConfig("alspec", 2, 6, lam=1.0)
    single = SpecDecoder(tiny_llama).run(ids[:, :41], 40, spec, n_generate=7)
    assert 0 < single["hits"].float().mean() < 1, "the check needs both hits and misses"
    two = two_worker_decode(tiny_llama_dir, ids[:, :41], 40, spec, n_generate=7)
    assert torch.equal(two["pred"], single["pred"])
    assert torch.equal(two["hits"], single["hits"])


def test_timing_reports_every_hit_rate(tiny_llama_dir):
    out = time_two_workers(
        tiny_llama_dir, context=32, n_steps=2, repeats=1, hit_rates=[0.0, 1.0], spec=SpecConfig("alspec", 2, 2, 0.1)
    )
    assert [r["hit_rate"] for r in out["by_hit_rate"]] == [0.0, 1.0]
    assert out["sequential_s"] > 0 and all(len(r["alspec_all_s"]) == 2 for r in out["by_hit_rate"])
    assert out["comm_round_trip_s"] > 0
