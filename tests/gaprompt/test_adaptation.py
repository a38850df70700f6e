"""Parameter counts, frozen parameters after adaptation, prompt bookkeeping, checkpoint and data loading."""

import numpy as np
import pytest
import torch

from methods.gaprompt.model import (
    AdaptedClassifier,
    Adapter,
    MaskedAutoencoder,
    ShiftNet,
    backbone_from_config,
    count_parameters,
    load_pointmae_checkpoint,
)
from methods.gaprompt.train import adapt

torch.set_num_threads(1)
ARCH = dict(dim=16, depth=2, heads=2, n_groups=8, group_size=4, encoder_width=4)
AD = dict(
    prompt_depth=1,
    n_prompt_tokens=3,
    adapter_rank=4,
    n_point_prompts=5,
    perturbation=0.8,
    propagation_k=64,
    head_hidden=8,
    head_dropout=0.5,
    epochs=1,
    batch=4,
    lr=1e-2,
    weight_decay=0.05,
    warmup_epochs=1,
    clip_norm=10.0,
    shuffle_points=True,
    augment="rotate",
    augment_full="scale_translate",
    up_axis=2,
    head_dropout_gaprompt=0.6,
    propagation_indexing="official",
)


def _data(n=8, pts=32, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, pts, 3)).astype(np.float32), rng.integers(0, classes, n)


def _n(module):
    return sum(p.numel() for p in module.parameters())


def test_parameter_count_by_hand():
    """GAPrompt's trainable parameters, counted module by module from their definitions."""
    D, L, P, r, C, H = 16, 2, 3, 4, 2, 8
    model = AdaptedClassifier(backbone_from_config(ARCH), "gaprompt", C, AD)
    adapter = 2 * D + (D * r + r) + (r * D + D)  # LayerNorm, down, up
    head = (3 * D * H + H) + 2 * H + (H * H + H) + 2 * H + (H * C + C)
    shift = _n(ShiftNet(8, 4))
    shape_mlp = (shift_dim := (8 // 2) * 8) * 16 + 16 + 16 * D + D
    expected = 5 * 3 + shift + shape_mlp + 1 * P * D + P * 3 + L * adapter + L * 2 * D + head + 2 * D
    assert shift_dim == model.shift_net.shape_dim
    counts = count_parameters(model)
    assert counts["trainable"] == expected
    assert counts["total"] == _n(model.backbone) + expected - 2 * D  # cls token/pos belong to the backbone
    full = AdaptedClassifier(backbone_from_config(ARCH), "full", C, AD)
    assert count_parameters(full)["fraction"] == 1.0


@pytest.mark.parametrize("method", ["linear", "vpt", "adapter", "gaprompt"])
def test_frozen_parameters_bit_identical_after_adaptation(method):
    torch.manual_seed(0)
    model = AdaptedClassifier(backbone_from_config(ARCH), method, 2, AD)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    trainable = set(model.trainable_parameters())
    x, y = _data()
    adapt(model, (x, y), (x, y), AD, 0, lambda *_: None)
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and changed <= trainable
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters() if n not in trainable)


def test_prompts_are_reinserted_per_layer_and_removed():
    """Each prompted layer sees exactly P prompt tokens; the token count is restored after it."""
    torch.manual_seed(0)
    model = AdaptedClassifier(backbone_from_config({**ARCH, "depth": 3}), "vpt", 2, {**AD, "prompt_depth": 2}).eval()
    seen = []
    for blk in model.backbone.blocks.blocks:
        blk.register_forward_hook(lambda m, i, o: seen.append(o.shape[1]))
    model(torch.randn(2, 32, 3))
    assert seen == [1 + 8 + 3, 1 + 8 + 3, 1 + 8]


def test_zero_adapter_leaves_the_backbone_unchanged():
    """Adapters whose up-projection is zero add nothing: same logits as the plain backbone with that head."""
    torch.manual_seed(0)
    bb = backbone_from_config(ARCH)
    lin = AdaptedClassifier(bb, "linear", 2, AD).eval()
    ada = AdaptedClassifier(bb, "adapter", 2, AD).eval()
    for a in ada.adapters:
        torch.nn.init.zeros_(a.ln2.weight)
        torch.nn.init.zeros_(a.ln2.bias)
    ada.head = lin.head
    x = torch.randn(3, 32, 3)
    assert torch.allclose(lin(x), ada(x), atol=1e-6)


def test_adapter_scale():
    a = Adapter(8, 2, dropout=0.0).eval()
    x = torch.randn(4, 8)
    h = a.ln1(torch.nn.functional.layer_norm(x, (8,), a.layer_norm.weight, a.layer_norm.bias))
    ref = a.ln2(h * torch.sigmoid(1.702 * h))
    assert torch.allclose(a(x), 0.7 * ref)


def test_mae_loss_decreases_on_one_batch():
    torch.manual_seed(0)
    mae = MaskedAutoencoder(backbone_from_config(ARCH), 1, 2, 0.5)
    x = torch.from_numpy(_data(4)[0])
    opt = torch.optim.Adam(mae.parameters(), 1e-2)
    gen = torch.Generator().manual_seed(0)
    first = mae(x, gen).item()
    for _ in range(30):
        loss = mae(x, torch.Generator().manual_seed(0))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.7 * first


def test_pointmae_checkpoint_roundtrip(tmp_path):
    """A stand-in of Point-MAE's pretrain.pth (keys under module.MAE_encoder.) loads into the backbone."""
    src = backbone_from_config(ARCH)
    state = {f"module.MAE_encoder.{k}": v for k, v in src.state_dict().items() if not k.startswith("cls_")}
    state["module.MAE_decoder.norm.weight"] = torch.ones(3)
    torch.save({"base_model": state, "epoch": 300}, tmp_path / "pretrain.pth")
    dst = backbone_from_config(ARCH)
    info = load_pointmae_checkpoint(dst, str(tmp_path / "pretrain.pth"))
    assert "MAE_decoder.norm.weight" in info["ignored"]
    for k, v in src.state_dict().items():
        if not k.startswith("cls_"):
            assert torch.equal(dst.state_dict()[k], v)
    torch.save({"optimizer": {}}, tmp_path / "bad.pth")
    with pytest.raises(ValueError, match="not a Point-MAE checkpoint"):
        load_pointmae_checkpoint(dst, str(tmp_path / "bad.pth"))


def test_paper_architecture_fraction_near_table1():
    """The modules at Point-MAE ViT-S size: about 0.6 M trainable of about 22 M (Table 1: 2.71 %)."""
    arch = dict(dim=384, depth=12, heads=6, n_groups=128, group_size=32, encoder_width=128)
    bb = backbone_from_config(arch)
    assert 21.5e6 < _n(bb) < 22.5e6  # Point-MAE's encoder without the head (22.1 M with it)
    model = AdaptedClassifier(
        bb, "gaprompt", 15, {**AD, "prompt_depth": 6, "n_prompt_tokens": 10, "adapter_rank": 16, "head_hidden": 256}
    )
    c = count_parameters(model)
    assert 0.5e6 < c["trainable"] < 0.7e6
