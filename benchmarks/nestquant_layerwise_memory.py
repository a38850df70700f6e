"""Device check (not collected by pytest): peak GPU memory of NestQuant's all-at-once path (fp32 copy,
every Hessian) against the layer-by-layer path (model dtype, one block's Hessians) on a random
Llama, and each quantized model's logit error against its own unquantized model (bf16 for the layerwise
path, fp32 for the all-at-once path). The two quantized models differ from each other as two equally good
quantizations do (bf16-rounded weights and Hessians flip some lattice decisions; tests/nestquant/
test_layerwise.py checks this on CPU), so the error against the unquantized model is the comparison that
means something. Usage: python this.py [layers] [hidden]"""

import sys
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from methods.common.lm import capture_linear_inputs
from methods.nestquant import pipeline

QUANT = {
    "q": 14,
    "rtn_bits": 4,
    "betas": {
        "weights": [4, 5.5, 7, 18],
        "activations": [3.47, 4.74, 6.9, 18.11],
        "keys": [3.5, 4.58, 6.47, 17.06],
        "values": [3.53, 5.59, 9.62, 29.03],
    },
}
layers, hidden = int(sys.argv[1]), int(sys.argv[2])
cfg = LlamaConfig(
    vocab_size=8192,
    hidden_size=hidden,
    intermediate_size=4 * hidden,
    num_hidden_layers=layers,
    num_attention_heads=hidden // 128,
    num_key_value_heads=max(1, hidden // 512),
    max_position_embeddings=512,
)
torch.manual_seed(0)
base = LlamaForCausalLM(cfg).to(torch.bfloat16)
n_params = sum(p.numel() for p in base.parameters())
g = torch.Generator().manual_seed(1)
calib = torch.randint(0, 8192, (8, 256), generator=g).cuda()
ids = torch.randint(0, 8192, (2, 256), generator=g).cuda()
betas = pipeline._betas(QUANT, QUANT["q"])
print(f"params {n_params / 1e6:.0f} M, bf16 {n_params * 2 / 2**30:.2f} GiB", flush=True)
import copy

with torch.no_grad():
    unquantized = {"layerwise": copy.deepcopy(base).cuda()(input_ids=ids).logits.float().cpu()}
    unquantized["all_at_once"] = copy.deepcopy(base).cuda().float()(input_ids=ids).logits.float().cpu()
for path in ("layerwise", "all_at_once"):
    m = copy.deepcopy(base).cuda()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.time()
    if path == "layerwise":
        q, errs = pipeline.quantize_model_layerwise(
            m, "nestquant_ldlq", "w4", QUANT["q"], betas, 4, 0, 128, calib, skip=("lm_head",)
        )
    else:
        m = m.float()
        h = capture_linear_inputs(m, calib, stats=("hessian",))
        q = pipeline.quantize_model(m, "nestquant_ldlq", "w4", QUANT["q"], betas, 4, 0, 128, h, skip=("lm_head",))
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() / 2**30
    with torch.no_grad():
        logits = q(input_ids=ids).logits.float().cpu()
    err = ((logits - unquantized[path]).norm() / unquantized[path].norm()).item()
    print(
        f"{path}: peak {peak:.2f} GiB, {time.time() - t0:.1f} s, logit error vs its unquantized model {err:.4f}",
        flush=True,
    )
    if path == "layerwise":
        ref = logits
    else:
        rel = ((logits - ref).norm() / ref.norm()).item()
        print(f"relative logit difference layerwise (bf16 blocks) vs all-at-once (fp32): {rel:.4f}")
    del m, q
    torch.cuda.empty_cache()
