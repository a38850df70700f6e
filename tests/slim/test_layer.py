"""The compressed layer computes x W_hat^T + (x R^T) L^T through the compiled op, equal to the reference."""

import pytest
import torch

from methods.kernels import reference
from methods.slim.layer import SlimLinear
from methods.slim.lora import compress_weight
from methods.slim.speed import CompiledInt4Linear, TorchInt4Linear, memory_bytes, model_in_format


def _cw(adapter="slim", n=24, k=64, quantizer="slim"):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(n, k, generator=g)
    ms = torch.rand(k, generator=g) + 0.1
    return w, compress_weight(
        w, pruner="wanda", quantizer=quantizer, bits=4, adapter=adapter, rank_ratio=0.25, mean_sq=ms, group_size=32
    )


def _kernel_close(got, ref):
    """The compiled kernels' documented accuracy: on AVX-512 VNNI CPUs activations are rounded per (row,
    scale group) to int16 (methods.kernels), so agreement is 1e-4 relative to the output's scale."""
    return (got - ref).abs().max().item() <= 1e-4 * (1 + ref.abs().max().item())


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
    assert _kernel_close(kern(x), ref)
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
    bound = x.abs() @ (step.repeat_interleave(128, dim=1) / 2).T
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
    assert _kernel_close(layer(x), x @ layer.effective_weight().T)
    assert torch.allclose(layer.effective_weight(), cw.dense(), atol=1e-5)


def test_compiled_int4_layer_applies_its_dequantized_weight():
    """Our int4 layer computes x Ŵᵀ + b with Ŵ its own symmetric RTN weight (within the kernel's activation
    rounding on the VNNI path), and Ŵ is within half a quantization step of W."""
    g = torch.Generator().manual_seed(0)
    w, b = torch.randn(24, 300, generator=g), torch.randn(24, generator=g)
    lin = CompiledInt4Linear(w, b)
    w_hat = lin.w.dequantize()
    x = torch.randn(3, 300, generator=g)
    torch.testing.assert_close(lin(x), x @ w_hat.T + b, rtol=1e-4, atol=1e-3)
    step = lin.w.scales.repeat_interleave(128, dim=1)[:, :300]
    assert torch.all((w_hat - w).abs() <= step / 2 + 1e-6)


def test_decode_formats_keep_the_model_close():
    """Every end-to-end decode format is the same small Llama up to its compression error: logits stay
    correlated with the dense model's, and the 2:4 base without adapters is further off than with them."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=64,
            hidden_size=128,
            intermediate_size=256,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
        )
    ).eval()
    ids = torch.randint(0, 64, (2, 8))
    with torch.no_grad():
        ref = model(input_ids=ids).logits
        err = {}
        for fmt in ("torch_int4", "compiled_int4", "slim_2_4_int4", "slim"):
            out = model_in_format(model, fmt, 0.1)(input_ids=ids).logits.float()
            err[fmt] = ((out - ref).norm() / ref.norm()).item()
    assert err["compiled_int4"] < 0.2 and err["torch_int4"] < 0.2
    assert err["slim"] < err["slim_2_4_int4"] < 1.0
