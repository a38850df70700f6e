"""Cost model: the critical-path formulas on hand-made kernel times, and the measured pieces."""

import numpy as np
import pytest

from methods.alspec import costmodel

K = {
    "t_qkv": 1.0,
    "t_rest": 4.0,
    "t_head": 0.5,
    "n_layers": 2,
    "contexts": [1000, 2000, 4000],
    "t_attn": [1.0, 2.0, 4.0],
    "t_spec": [0.1, 0.1, 0.1],
}  # t_attn = T / 1000 exactly


def test_attention_fit_is_exact_on_linear_times():
    a, b = costmodel.fit_attention(K)
    assert a == pytest.approx(0, abs=1e-9) and b == pytest.approx(1e-3)


def test_sequential_and_alspec_latency_by_hand():
    # T = 2000: t_attn = 2 < t_spec + t_rest + t_qkv = 5.1, so at h = 1 the attention is hidden
    assert costmodel.step_latency(K, 2000, 1.0, 0.0, "sequential") == pytest.approx(2 * (1 + 2 + 4) + 0.5)
    assert costmodel.step_latency(K, 2000, 1.0, 0.0, "alspec") == pytest.approx(1 + 2 * 5.1 + 0.5)
    # h = 0: the rest of the layer and the next projection are redone after o arrives
    assert costmodel.step_latency(K, 2000, 0.0, 0.0, "alspec") == pytest.approx(1 + 2 * (5.1 + 5) + 0.5)
    # long context: attention dominates, overlap hides only the non-attention work
    T = 100_000
    seq = costmodel.step_latency(K, T, 1.0, 0.2, "sequential")
    spec = costmodel.step_latency(K, T, 1.0, 0.2, "alspec")
    assert seq - spec == pytest.approx(2 * (1 + 100 + 4) + 0.5 - (1 + 2 * 100.2 + 0.5))
    over = costmodel.attention_overhead(K, np.array([2000, T]), 1.0, 0.0, "alspec")
    assert over[0] == pytest.approx(1 + 2 * 5.1 - 2 * 5)


def test_unknown_mode_is_named():
    with pytest.raises(ValueError, match="parallel"):
        costmodel.step_latency(K, 1000, 1.0, 0.0, "parallel")


def test_measured_kernel_times_grow_with_context(tiny_llama):
    k = costmodel.measure_kernels(tiny_llama, [64, 4096], sink=2, window=2, repeats=3)
    assert k["n_layers"] == 3 and len(k["t_attn"]) == 2
    assert k["t_attn"][1] > k["t_attn"][0] and k["t_spec"][1] < k["t_attn"][1]
