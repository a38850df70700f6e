"""The compressed linear layer: y = x W_hat^T + (x R^T) L^T (+ b) with W_hat 2:4 sparse and quantized.

backend 'kernel' stores the base packed for the compiled op (`methods.kernels.pack_sparse24_int4`: int4
values of the kept entries + 2-bit positions) and calls `sparse24_int4_linear`, which runs the
compiled CPU/CUDA kernel where it is built and the PyTorch reference otherwise. backend 'dense' keeps
the dequantized base as a float matrix (same numbers; the fast path for quality evaluation and the
path PEFT trains through). Optional per-token input quantization (Section 3.4) is applied first.
"""

from __future__ import annotations

import torch
from torch import nn

from .lora import CompressedWeight
from .quant import quantize_input_per_token

BACKENDS = ("dense", "kernel")


class SlimLinear(nn.Module):
    """A linear layer compressed by a SLiM recipe; the adapters L, R are parameters (trainable by PEFT)."""

    def __init__(
        self,
        cw: CompressedWeight,
        bias: torch.Tensor | None = None,
        input_bits: int | None = None,
        backend: str = "dense",
    ):
        super().__init__()
        if backend not in BACKENDS:
            raise ValueError(f"SlimLinear: unknown backend {backend!r}; use one of {BACKENDS}")
        self.out_features, self.in_features = cw.base.qint.shape
        self.backend, self.input_bits, self.bits = backend, input_bits, cw.base.bits
        self.mask_density = float(cw.mask.float().mean())
        if backend == "kernel":
            if cw.base.bits > 4:
                raise ValueError(f"SlimLinear backend 'kernel' stores int4; this weight has {cw.base.bits} bits")
            from methods.kernels import pack_sparse24_int4

            self.packed = pack_sparse24_int4(cw.base.qint, cw.base.scale, group_size=cw.base.group_size, mask=cw.mask)
        else:
            self.register_buffer("base", cw.base.dequantize())
        self.lora_l = None if cw.lora_l is None else nn.Parameter(cw.lora_l.float().clone(), requires_grad=False)
        self.lora_r = None if cw.lora_r is None else nn.Parameter(cw.lora_r.float().clone(), requires_grad=False)
        self.register_buffer("bias", None if bias is None else bias.float())

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (..., K) -> (..., N)
        dtype = x.dtype
        x = x.float()
        if self.input_bits is not None:
            x = quantize_input_per_token(x, self.input_bits)
        if self.backend == "kernel":
            from methods.kernels import sparse24_int4_linear

            trainable = self.lora_l is not None and self.lora_l.requires_grad
            if trainable:  # the op has no backward: base through the kernel, adapters through autograd
                y = sparse24_int4_linear(x, self.packed) + (x @ self.lora_r.T) @ self.lora_l.T
            else:
                y = sparse24_int4_linear(x, self.packed, self.lora_l, self.lora_r)
        else:
            y = x @ self.base.T
            if self.lora_l is not None:
                y = y + (x @ self.lora_r.T) @ self.lora_l.T
        if self.bias is not None:
            y = y + self.bias
        return y.to(dtype)

    @torch.no_grad()
    def effective_weight(self) -> torch.Tensor:
        """W_hat = deq(base) + L R, the (N, K) matrix this layer applies (before input quantization)."""
        base = self.packed.dequantize() if self.backend == "kernel" else self.base
        if self.lora_l is None:
            return base.clone()
        return base + self.lora_l.detach() @ self.lora_r.detach()

    def extra_repr(self) -> str:
        rank = 0 if self.lora_l is None else self.lora_l.shape[1]
        return (
            f"in={self.in_features}, out={self.out_features}, bits={self.bits}, "
            f"density={self.mask_density:.2f}, rank={rank}, backend={self.backend}"
        )
