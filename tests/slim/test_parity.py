"""Golden values from the official SLiM code, and regression tests for the differences fixed.

Golden values: Paramathic/slim at commit d5ae86762db4f75d2f1fb83c9f23849ce489811a, run on the CPU (its
triton kernels stubbed, `.cuda()` a no-op, bfloat16 replaced by float32 so that the numbers are the
algorithm's, not bf16 rounding) on the inputs of `_inputs()`: W 256 x 512 Student-t (4 dof, scale 0.02),
16 calibration sequences x 128 tokens with per-channel scales exp(N(0, 0.25)), seeded generator 0.
Functions: `WrappedGPT.add_batch` (scaler_row = 128 * mean x^2 here), `utils.shift_zeros`,
`utils.prune_nm(|W| sqrt(scaler_row), 2, 4)`, `quantization.find_optimal_quantiztion_cap(W, bits, bins)`,
`prune.prune_wanda`'s no-adapter branch (quantize_first True / False) with `Quantizer('weight', 4,
slim_quant=True)`, `lora.add_lora(rank_ratio=0.1, separate_lora=True, quantize_first=..., lora_tile_size=
None / 128)` on the shifted statistics, `quantization.utils.compute_quantization_params_torch(.., 1, 128)`.
Masks, counts and clip values are exact; layer errors and entries agree to 1e-4 relative (the official
SVD runs in float32, ours in float64; the measured gap is <= 3e-5).
"""

import pytest
import torch

from methods.slim.lora import adapter_rank, compress_weight, low_rank_factors, output_error, saliency, saliency_weights
from methods.slim.prune import mask_2_4, shift_zeros, wanda_score
from methods.slim.quant import fake_quantize_adapter, slim_quant_alpha

REL = 1e-4


def _inputs(n=256, k=512, n_seq=16, seq=128, df=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, k, generator=g)
    v = torch.randn(n, k, df, generator=g).pow(2).mean(-1)
    w = 0.02 * z / v.sqrt()
    scales = torch.exp(0.5 * torch.randn(k, generator=g))
    x = torch.randn(n_seq, seq, k, generator=g) * scales
    return w, x.reshape(-1, k)


@pytest.fixture(scope="module")
def case():
    w, x = _inputs()
    mean_sq = x.pow(2).mean(0)
    hessian = x.double().T @ x.double() / x.shape[0]
    return w, mean_sq, hessian


def _pruned(w, mean_sq):
    return ~mask_2_4(wanda_score(w, mean_sq))  # True where pruned, as the official W_mask


def test_calibration_energy_and_shift(case):
    w, mean_sq, _ = case
    assert float(mean_sq.sum() * 128) == pytest.approx(116353.9375, rel=1e-5)
    assert (mean_sq[:4] * 128).tolist() == pytest.approx(
        [285.2176513671875, 238.2236328125, 301.3482360839844, 193.70068359375], rel=1e-5
    )
    assert float((shift_zeros(mean_sq) - mean_sq)[0] * 128) == pytest.approx(4.604736328125, rel=1e-5)


def test_wanda_masks_with_and_without_shift(case):
    w, mean_sq, _ = case
    plain, shifted = _pruned(w, mean_sq), _pruned(w, shift_zeros(mean_sq))
    idx = torch.arange(w.numel()).reshape(w.shape)
    assert int((plain != shifted).sum()) == 846
    assert int(idx[shifted].sum()) == 4294932936
    assert int(idx[plain].sum()) == 4294932847


@pytest.mark.parametrize(
    "bits, n_bins, alpha",
    [
        (4, None, 0.13091778755187988),
        (4, 1000, 0.13034966588020325),
        (4, 2000, 0.12849460542201996),
        (3, None, 0.08840584009885788),
        (8, None, 0.37053054571151733),
    ],
)
def test_clip_search_dense(case, bits, n_bins, alpha):
    assert slim_quant_alpha(case[0], bits, n_bins=n_bins) == pytest.approx(alpha, rel=1e-6)


def test_clip_search_counts_pruned_zeros(case):
    w, mean_sq, _ = case
    wm = w.clone()
    wm[_pruned(w, shift_zeros(mean_sq))] = 0
    assert slim_quant_alpha(wm, 4) == pytest.approx(0.15603825449943542, rel=1e-6)


@pytest.mark.parametrize(
    "order, err, norm",
    [
        ("quantize_first", 0.10024347759391053, 9.43757718919061),
        ("prune_first", 0.10374113496248762, 9.585492243778749),
    ],
)
def test_no_adapter_branch(case, order, err, norm):
    w, mean_sq, h = case
    cw = compress_weight(w, pruner="wanda", quantizer="slim", bits=4, mean_sq=mean_sq, order=order)
    assert output_error(w, cw.dense(), h) == pytest.approx(err, rel=REL)
    assert float(cw.dense().double().norm()) == pytest.approx(norm, rel=REL)


GOLDEN_LORA = {  # (adapter, padded, order): rank, relative output error, ||base||_F, nonzeros of base, W_hat[0, :4]
    ("slim", False, "quantize_first"): (
        25,
        0.05870662718615946,
        9.503490225707065,
        59042,
        [-0.009554559364914894, -0.01610223576426506, -0.01383119821548462, 0.0012542330659925938],
    ),
    ("slim", False, "prune_first"): (
        25,
        0.06353505148848872,
        9.418134494880698,
        57549,
        [-0.006217449903488159, -0.01806633733212948, -0.016644012182950974, -0.0013891846174374223],
    ),
    ("slim", True, "quantize_first"): (
        128,
        0.01659246592346833,
        9.140414299993697,
        59474,
        [-0.012599070556461811, -0.020160259678959846, -0.01582416705787182, -0.007227350026369095],
    ),
    ("slim", True, "prune_first"): (
        128,
        0.024044855785450684,
        9.216888012706473,
        56805,
        [-0.014539139345288277, -0.0196994598954916, -0.014399340376257896, -0.007976233027875423],
    ),
    ("naive", False, "quantize_first"): (
        25,
        0.06913900315423609,
        9.591376298499455,
        58596,
        [-0.0053087263368070126, -0.02284950390458107, -0.01860458217561245, -0.002752357628196478],
    ),
    ("naive", True, "quantize_first"): (
        128,
        0.024863059825683112,
        9.142501073671419,
        59702,
        [-0.012636736035346985, -0.013219770044088364, -0.013550657778978348, -0.007256565615534782],
    ),
}


@pytest.mark.parametrize("key", sorted(GOLDEN_LORA))
def test_add_lora(case, key):
    adapter, padded, order = key
    rank, err, base_norm, nnz, row = GOLDEN_LORA[key]
    w, mean_sq, h = case
    cw = compress_weight(
        w,
        pruner="wanda",
        quantizer="slim",
        bits=4,
        adapter=adapter,
        rank_ratio=0.1,
        mean_sq=mean_sq,
        order=order,
        pad_rank=padded,
    )
    base = cw.base.dequantize()
    assert cw.lora_l.shape[1] == rank
    assert int((base != 0).sum()) == nnz
    assert output_error(w, cw.dense(), h) == pytest.approx(err, rel=REL)
    assert float(base.double().norm()) == pytest.approx(base_norm, rel=REL)
    assert cw.dense()[0, :4].tolist() == pytest.approx(row, rel=REL, abs=1e-8)


def test_adapter_quantization_groups(case):
    """compute_quantization_params_torch(lora_left (K, r), 1, 128) and (lora_right (r, N), 1, 128): one
    scale per 128 consecutive entries of a column of our R (r, K) and of our L (N, r)."""
    w, mean_sq, _ = case
    cw = compress_weight(
        w, pruner="wanda", quantizer="slim", bits=4, adapter="slim", rank_ratio=0.1, mean_sq=mean_sq, pad_rank=True
    )
    left_scales = cw.lora_r.T.abs().reshape(512, 1, 128).amax(-1)  # official lora_left = R^T
    right_scales = cw.lora_l.T.abs().reshape(128, 2, 128).amax(-1)  # official lora_right = L^T
    assert left_scales.flatten()[:4].tolist() == pytest.approx(
        [0.043071433901786804, 0.04034924879670143, 0.035313334316015244, 0.03127811849117279], rel=REL
    )
    assert right_scales.flatten()[:2].tolist() == pytest.approx([0.18133853375911713, 0.9454583525657654], rel=REL)
    q = fake_quantize_adapter(cw.lora_r, 4, 128)
    for col in (0, 7):  # every column of R holds at most 15 levels of its own absmax / 7 step
        step = float(cw.lora_r[:, col].abs().max()) / 7
        levels = q[:, col] / step
        assert torch.allclose(levels, levels.round(), atol=1e-4)


# Regression tests of the fixed differences, on a small case -------------------------------------------


def _small(seed=3):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(16, 32, generator=g) / torch.randn(16, 32, 4, generator=g).pow(2).mean(-1).sqrt()
    x = torch.randn(256, 32, generator=g) * torch.exp(torch.randn(32, generator=g))
    return w, x.pow(2).mean(0)


def test_order_quantize_first_masks_the_dense_quantization():
    w, ms = _small()
    qf = compress_weight(w, pruner="wanda", quantizer="slim", bits=4, mean_sq=ms)
    pf = compress_weight(w, pruner="wanda", quantizer="slim", bits=4, mean_sq=ms, order="prune_first")
    dense_step = slim_quant_alpha(w, 4) / 7
    assert float(qf.base.scale.flatten()[0]) == pytest.approx(dense_step, rel=1e-6)
    assert float(pf.base.scale.flatten()[0]) == pytest.approx(slim_quant_alpha(w * pf.mask, 4) / 7, rel=1e-6)
    assert float(qf.base.scale.flatten()[0]) != pytest.approx(float(pf.base.scale.flatten()[0]), rel=1e-3)
    assert torch.equal(qf.mask, pf.mask)
    assert bool((qf.base.qint[~qf.mask] == 0).all())
    with pytest.raises(ValueError, match="order"):
        compress_weight(w, pruner="wanda", quantizer="slim", bits=4, mean_sq=ms, order="mask_last")
    with pytest.raises(ValueError, match="prune_first"):
        compress_weight(w, pruner="sparsegpt", quantizer="slim", bits=4, hessian=torch.eye(32))


def test_rank_padding_to_the_tile():
    assert adapter_rank((256, 512), 0.1) == 25
    assert adapter_rank((256, 512), 0.1, multiple=128) == 128
    assert adapter_rank((4096, 4096), 0.1, multiple=128) == 512
    assert adapter_rank((64, 128), 0.1, multiple=128) == 64  # capped at min(N, K)
    w, ms = _small()
    kw = dict(
        pruner="wanda", quantizer="slim", bits=4, adapter="slim", rank_ratio=0.1, mean_sq=ms, adapter_group_size=8
    )
    assert compress_weight(w, **kw).lora_l.shape[1] == 1
    assert compress_weight(w, adapter_bits=4, **kw).lora_l.shape[1] == 8  # quantized adapters: padded
    assert compress_weight(w, adapter_bits=4, pad_rank=False, **kw).lora_l.shape[1] == 1


def test_shift_changes_the_wanda_mask_and_the_saliency():
    w, ms = _small()
    ms = ms.double().clone()
    ms[5] = 0.0  # an unexcited channel: the shift makes its energy the smallest positive one
    shifted = shift_zeros(ms)
    assert float(shifted.min()) == pytest.approx(float(ms[ms > 0].min()), rel=1e-6)
    assert torch.allclose(shifted - ms, torch.full_like(ms, float(shifted[5])), rtol=1e-5)
    on = compress_weight(w, pruner="wanda", quantizer="slim", bits=4, mean_sq=ms)
    off = compress_weight(w, pruner="wanda", quantizer="slim", bits=4, mean_sq=ms, shift_zero_metrics=False)
    assert torch.equal(on.mask, mask_2_4(wanda_score(w, shifted)))
    assert torch.equal(off.mask, mask_2_4(wanda_score(w, ms)))
    assert not torch.equal(on.mask, off.mask)


def test_adapter_quantization_after_base_by_default():
    w, ms = _small()
    kw = dict(
        pruner="wanda",
        quantizer="slim",
        bits=4,
        adapter="slim",
        rank_ratio=0.25,
        mean_sq=ms,
        adapter_bits=4,
        adapter_group_size=8,
    )
    after = compress_weight(w, **kw)
    plain = compress_weight(w, **{**kw, "adapter_bits": None}, pad_rank=True)
    assert torch.equal(after.base.qint, plain.base.qint)  # the base saw the unquantized adapters
    assert torch.allclose(after.lora_l, fake_quantize_adapter(plain.lora_l.float(), 4, 8))
    before = compress_weight(w, adapter_quant_order="before_base", **kw)
    assert not torch.equal(before.base.qint, plain.base.qint)


def test_factor_split_puts_singular_values_on_the_right():
    e = torch.randn(12, 20, generator=torch.Generator().manual_seed(0)).double()
    l, r = low_rank_factors(e, 4)
    assert torch.allclose(l.T @ l, torch.eye(4, dtype=l.dtype), atol=1e-10)
    d = saliency_weights(torch.rand(20, generator=torch.Generator().manual_seed(1)) + 0.1)
    l2, _ = low_rank_factors(saliency(e, d), 3)
    assert torch.allclose(l2.T @ l2, torch.eye(3, dtype=l2.dtype), atol=1e-10)
