"""The compressed layer computes x W_hat^T + (x R^T) L^T through the K1 op, equal to the reference."""
import pytest
import torch

from methods.kernels import reference
from methods.slim.layer import SlimLinear
from methods.slim.lora import compress_weight
from methods.slim.speed import TorchInt4Linear, memory_bytes


def _cw(adapter="slim", n=24, k=64, quantizer="slim"):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(n, k, generator=g)
    ms = torch.rand(k, generator=g) + 0.1
    return w, compress_weight(w, pruner="wanda", quantizer=quantizer, bits=4, adapter=adapter, rank_ratio=0.25,
                              mean_sq=ms, group_size=32)


@pytest.mark.parametrize("adapter", ["none", "slim"])
@pytest.mark.parametrize("quantizer", ["slim", "group"])
def test_kernel_layer_equals_reference(adapter, quantizer):
    w, cw = _cw(adapter, quantizer=quantizer)
    bias = torch.randn(24)
    x = torch.randn(2, 5, 64)
    kern = SlimLinear(cw, bias, backend="kernel")
    dense = SlimLinear(cw, bias, backend="dense")
    # independent computation from the compressed pieces
    ref = x @ cw.base.dequantize().T + bias
    if cw.lora_l is not None:
        ref = ref + (x @ cw.lora_r.T) @ cw.lora_l.T
    assert torch.allclose(kern(x), ref, atol=1e-4)
    assert torch.allclose(dense(x), ref, atol=1e-4)
    # the packed base holds exactly the quantized 2:4 matrix
    assert torch.equal(kern.packed.dequantize(), cw.base.dequantize())
    n, k = w.shape  # int4 values of the 2 kept per 4, 2-bit positions, fp32 scales
    assert kern.packed.nbytes == n * k // 4 + n * k // 8 + 4 * cw.base.scale.numel()


def test_kernel_layer_trains_adapters():
    _, cw = _cw("slim")
    layer = SlimLinear(cw, backend="kernel")
    layer.lora_l.requires_grad_(True)
    layer.lora_r.requires_grad_(True)
    layer(torch.randn(3, 64)).pow(2).sum().backward()
    assert layer.lora_l.grad is not None and layer.lora_r.grad.abs().sum() > 0


def test_input_quantization_changes_only_inputs():
    _, cw = _cw("slim")
    x = torch.randn(4, 64)
    q = SlimLinear(cw, input_bits=8)
    plain = SlimLinear(cw)
    from methods.slim.quant import quantize_input_per_token
    assert torch.allclose(q(x), plain(quantize_input_per_token(x, 8)), atol=1e-5)


def test_torch_int4_layer_matches_its_dequantized_weight():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(32, 256, generator=g)
    lin = TorchInt4Linear(w)
    x = torch.randn(3, 256, generator=g)
    # int4 per-group asymmetric RTN: every weight within half a step of its group's grid
    y = lin(x)
    wg = w.reshape(32, 2, 128)
    step = (wg.amax(-1) - wg.amin(-1)) / 15
    bound = (x.abs() @ (step.repeat_interleave(128, dim=1) / 2).T)
    assert torch.all((y - x @ w.T).abs() <= bound * 1.05 + 0.05 * (x @ w.T).abs() + 0.05)


def test_memory_ratio_counts_the_format():
    # one 4096 x 4096 layer, no adapters: int4 half values + 2-bit positions = 3/16 of fp16 + scales
    m = memory_bytes([(4096, 4096)], 0.0, None, 128, 0)
    assert m["ratio"] == pytest.approx(3 / 16 + 4 * 4096 / (2 * 4096 * 4096))
    assert reference is not None


@pytest.mark.parametrize("backend", ["dense", "kernel"])
def test_effective_weight_is_what_the_layer_applies(backend):
    _, cw = _cw("slim")
    layer = SlimLinear(cw, backend=backend)
    x = torch.randn(5, 64)
    assert torch.allclose(layer(x), x @ layer.effective_weight().T, atol=1e-4)
    assert torch.allclose(layer.effective_weight(), cw.dense(), atol=1e-5)
