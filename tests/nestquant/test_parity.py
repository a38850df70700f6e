"""Golden values from the official NestQuant code, and regression tests for the differences fixed.

Official code: eitanporat/nestquant at commit 6b269f84264afad990a09248d8eeb45d5f6248ff (the `fetch` store
had no snapshot; the indexed files e8.py, coder.py and parallel/quant_utils.py of that commit were run in
a scratch folder on the CPU): `encode_matrix_try_all` / `decode_matrix_try_all` (no dither, as
`quantsim` calls them), `quantsim(X, q=14, betas=[4, 5.5, 7, 18], rot=Sylvester Hadamard / sqrt(n))`
without and with H (LDLQ via `encode_matrix_LDLQ_try_all`, H rotated and + 100 I by `rot_hess`).
Inputs `_inputs()`: W 64 x 128 Student-t (4 dof), 512 calibration tokens with per-channel scales
exp(N(0, 0.25)), seeded generator 0; H = X^T X.

Tolerances: entries of rows away from lattice-boundary ties 1e-5 relative (float32). The official E8
decoder breaks the ties of a point on the boundary of the Voronoi region of qE8 (q = 14 is even, so
lattice points lie there) differently from `methods.kernels` (half down and the half-integer coset on an
exact tie; ours half to even and D8): 16 of the 1024 blocks pick another beta, and the summed squared
errors differ by < 1% (listed in the README).
"""

import math

import pytest
import torch

from methods import kernels
from methods.nestquant.quant import WEIGHT_BETAS, ldlq, nestquant, rotate

Q = 14


def _inputs(seed=0, n=64, k=128, tokens=512):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(n, k, generator=g) / torch.randn(n, k, 4, generator=g).pow(2).mean(-1).sqrt()
    x = torch.randn(tokens, k, generator=g) * torch.exp(0.5 * torch.randn(k, generator=g))
    return w, x


BETAS = torch.tensor(WEIGHT_BETAS) / Q
ONES = torch.ones(128)  # the official rotation: Sylvester Hadamard without random signs


def test_try_all_code_of_pieces():
    w, _ = _inputs()
    codes, idx = kernels.nestquant_encode(w.reshape(-1, 8), Q, BETAS)
    rec = kernels.nestquant_decode(codes, idx, Q, BETAS).reshape(w.shape)
    counts = torch.bincount(idx.long(), minlength=4).tolist()
    official = [463, 305, 187, 69]
    assert sum(abs(a - b) for a, b in zip(counts, official)) <= 8  # boundary ties: 16 of 1024 blocks differ
    assert float(((rec - w) ** 2).sum()) == pytest.approx(338.2121887207031, rel=0.01)
    assert rec[0, :8].tolist() == pytest.approx(
        [
            -1.7678570747375488,
            -0.9821428060531616,
            -0.1964285671710968,
            -0.5892857313156128,
            0.5892857313156128,
            0.9821428060531616,
            -0.1964285671710968,
            -3.3392856121063232,
        ],
        rel=1e-5,
    )


def test_quantsim_without_hessian():
    w, _ = _inputs()
    qs = rotate(nestquant(rotate(w, ONES), Q, BETAS), ONES)
    assert float(((qs - w) ** 2).sum()) == pytest.approx(112.62530517578125, rel=0.01)
    assert qs[0, :4].tolist() == pytest.approx(
        [-1.789706826210022, -0.8135029673576355, -0.40196630358695984, -0.5168132185935974], rel=1e-5
    )


def _ldlq(order):
    w, x = _inputs()
    h = x.T @ x
    wr = rotate(w, ONES)
    hr = rotate(rotate(h, ONES).T.contiguous(), ONES) + 100.0 * torch.eye(128)  # rot_hess
    scale = wr.norm(dim=1, keepdim=True) / math.sqrt(128)
    block_q = lambda b: nestquant(b / scale, Q, BETAS, scale_rows=False) * scale  # noqa: E731
    out = rotate(ldlq(wr, hr, block_q, damp=0.0, order=order), ONES)
    d = (out - w).double()
    return out, float(torch.einsum("nk,kl,nl->", d, h.double(), d))


def test_ldlq_backward_as_the_official():
    out, proxy = _ldlq("backward")
    assert out[0, :4].tolist() == pytest.approx(
        [-1.8471306562423706, -0.9474917054176331, -0.22012439370155334, -0.46896037459373474], rel=1e-5
    )
    assert proxy == pytest.approx(55620.89144187727, rel=0.02)


def test_ldlq_order_regression():
    """The default is the official backward sweep; the forward (GPTQ) sweep gives other weights."""
    back, _ = _ldlq("backward")
    fwd, _ = _ldlq("forward")
    assert not torch.allclose(back[0, :4], fwd[0, :4], rtol=1e-3)
    w, x = _inputs()
    ident = lambda b: b  # noqa: E731  an exact quantizer: both sweeps return W
    h = x.T @ x
    assert torch.allclose(ldlq(w, h, ident), w, atol=1e-5)
    with pytest.raises(ValueError, match="order"):
        ldlq(w, h, ident, order="sideways")


def test_exact_row_scale_by_default():
    w, _ = _inputs()
    exact = nestquant(w, Q, BETAS)
    stored = nestquant(w, Q, BETAS, scale_dtype="float16")
    s = w.norm(dim=1, keepdim=True) / math.sqrt(128)
    assert torch.allclose(exact, nestquant(w / s, Q, BETAS, scale_rows=False) * s, rtol=1e-6, atol=1e-6)
    assert not torch.equal(exact, stored)
    with pytest.raises(ValueError, match="scale_dtype"):
        nestquant(w, Q, BETAS, scale_dtype="bfloat16")
