"""SLiM-Quant: the clip search finds the minimum of its error integral; the integral is the real MSE."""

import pytest
import torch

from methods.slim.quant import (
    absmax_alpha,
    expected_error,
    magnitude_histogram,
    qmax,
    quantize_groups_rtn,
    quantize_input_per_token,
    quantize_matrix,
    quantize_symmetric,
    slim_quant_alpha,
)


def _weights(kind, n=256, k=512, seed=0):
    g = torch.Generator().manual_seed(seed)
    if kind == "gauss":
        return torch.randn(n, k, generator=g)
    if kind == "laplace":
        return torch.distributions.Laplace(0.0, 1.0).sample((n, k))
    w = torch.randn(n, k, generator=g)  # heavy tail: a few large outliers, as LLM weights have
    w.view(-1)[torch.randperm(n * k, generator=g)[:50]] *= 20
    return w


@pytest.mark.parametrize("kind", ["gauss", "laplace", "outliers"])
@pytest.mark.parametrize("bits", [3, 4, 8])
def test_clip_is_brute_force_optimum(kind, bits):
    torch.manual_seed(1)
    w = _weights(kind)
    n_bins = 1024
    alpha = slim_quant_alpha(w, bits, n_bins=n_bins, clip_search="rounding")
    density, centres, dx = magnitude_histogram(w, n_bins)
    grid = expected_error(density, centres, dx, centres, bits)  # every bin centre
    chosen = expected_error(density, centres, dx, torch.tensor([alpha], dtype=torch.float64), bits)
    assert float(chosen) <= float(grid.min()) * (1 + 1e-9)
    assert alpha in centres.tolist()


@pytest.mark.parametrize("kind", ["gauss", "outliers"])
def test_error_integral_matches_real_mse_and_beats_absmax(kind):
    w = _weights(kind)
    bits = 4
    alpha = slim_quant_alpha(w, bits, clip_search="rounding")
    density, centres, dx = magnitude_histogram(w, 2048)
    m = qmax(bits)
    for a in (alpha, absmax_alpha(w)):
        # E(alpha) models magnitudes, i.e. the symmetric clamp [-m, m]; the extra level -m-1 of the
        # quantizer (as in the official code) can only lower the real error below it
        sym = torch.clamp(torch.round(w / (a / m)), -m, m) * (a / m)
        real_sym = float(((sym - w) ** 2).mean())
        real = float(((quantize_symmetric(w, a, bits).dequantize() - w) ** 2).mean())
        predicted = float(expected_error(density, centres, dx, torch.tensor([a], dtype=torch.float64), bits))
        assert predicted == pytest.approx(real_sym, rel=0.05)
        assert real <= real_sym * (1 + 1e-9)
    mse = lambda a: float(((quantize_symmetric(w, a, bits).dequantize() - w) ** 2).mean())  # noqa: E731
    assert mse(alpha) < mse(absmax_alpha(w))
    assert alpha < absmax_alpha(w)


def test_symmetric_levels_and_single_scale():
    w = _weights("gauss")
    q = quantize_matrix(w, "slim", 4)
    assert int(q.qint.min()) >= -qmax(4) - 1 == -8
    assert int(q.qint.max()) <= qmax(4) == 7
    assert torch.unique(q.scale).numel() == 1
    # values inside the clip round to the nearest level: error at most half a step
    step = float(q.scale[0, 0])
    inside = w.abs() <= step * 7
    assert float((q.dequantize() - w)[inside].abs().max()) <= step / 2 + 1e-6


def test_group_rtn_scales_per_group():
    w = _weights("outliers", n=8, k=256)
    q = quantize_groups_rtn(w, 4, 128)
    assert q.scale.shape == (8, 2)
    groups = w.reshape(8, 2, 128)
    assert torch.allclose(q.scale, groups.abs().amax(dim=2) / 7)
    assert float((q.dequantize() - w).abs().max()) <= float(q.scale.max()) / 2 + 1e-6


def test_input_quantization_per_token():
    x = torch.randn(3, 5, 64)
    xq = quantize_input_per_token(x, 8)
    step = x.abs().amax(dim=-1, keepdim=True) / 127
    assert torch.all((xq - x).abs() <= step / 2 + 1e-6)
    assert torch.allclose(xq.abs().amax(dim=-1), x.abs().amax(dim=-1))


def test_bad_inputs_named():
    with pytest.raises(ValueError, match="no nonzero"):
        slim_quant_alpha(torch.zeros(4, 4))
    with pytest.raises(ValueError, match="unknown weight quantizer"):
        quantize_matrix(torch.ones(4, 4), "gptq", 4)
