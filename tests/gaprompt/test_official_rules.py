"""Regression tests for the behaviours taken over from the official GAPrompt code (each was a difference
before): the FPS kernel's near-origin rule, stochastic depth, the training runner's loader, augmentations,
optimiser groups and schedule, what trains, initialisations and head dropout."""

import numpy as np
import pytest
import torch

from methods.gaprompt.geometry import farthest_point_sample
from methods.gaprompt.model import AdaptedClassifier, Block, backbone_from_config, drop_path, drop_path_rates
from methods.gaprompt.train import (
    augment,
    official_epoch_lr,
    param_groups,
    rotate_batch,
    scale_translate_batch,
    shuffle_points,
)

torch.set_num_threads(1)
ARCH = dict(dim=16, depth=2, heads=2, n_groups=8, group_size=4, encoder_width=4, drop_path_rate=0.1)
AD = dict(
    prompt_depth=1,
    n_prompt_tokens=3,
    adapter_rank=4,
    n_point_prompts=5,
    perturbation=0.8,
    propagation_k=64,
    head_hidden=8,
    head_dropout=0.5,
    head_dropout_gaprompt=0.6,
    propagation_indexing="official",
)


def kernel_fps(p: np.ndarray, m: int) -> list[int]:
    """pointnet2_ops' furthest_point_sampling_kernel written out: start at 0, temp = 1e10, skip |p|^2 <= 1e-3."""
    temp, out, old = np.full(len(p), 1e10), [0], 0
    for _ in range(m - 1):
        best, besti = -1.0, 0
        for k in range(len(p)):
            if (p[k] ** 2).sum() <= 1e-3:
                continue
            temp[k] = min(((p[k] - p[old]) ** 2).sum(), temp[k])
            if temp[k] > best:
                best, besti = temp[k], k
        old = besti
        out.append(old)
    return out


def test_fps_follows_the_kernel_and_never_picks_points_at_the_origin():
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(2, 50, 3)) * 0.5
    pts[:, 7] = [0.01, 0.0, 0.02]  # |p|^2 = 5e-4: inside the kernel's excluded ball
    pts[:, 9] = [0.0, 0.0, 0.0]
    idx = farthest_point_sample(torch.tensor(pts, dtype=torch.float32), 50)
    for b in range(2):
        assert idx[b].tolist() == kernel_fps(pts[b].astype(np.float32), 50)
        assert 7 not in idx[b, 1:].tolist() and 9 not in idx[b, 1:].tolist()
    textbook = farthest_point_sample(torch.tensor(pts, dtype=torch.float32), 50, skip_near_origin=False)
    assert 7 in textbook[0].tolist()


def test_drop_path_is_per_sample_and_unbiased():
    x = torch.ones(4000, 3, 2)
    y = drop_path(x, 0.25, training=True)
    kept = y[:, 0, 0] > 0
    assert torch.all((y[kept] == 1 / 0.75)) and torch.all(y[~kept] == 0)
    assert abs(kept.float().mean().item() - 0.75) < 0.03
    assert torch.equal(drop_path(x, 0.25, training=False), x)
    assert drop_path_rates(0.1, 3) == pytest.approx([0.0, 0.05, 0.1])


def test_block_applies_stochastic_depth_only_in_training():
    torch.manual_seed(0)
    blk = Block(8, 2, drop_path=0.5)
    x = torch.randn(64, 5, 8)
    blk.eval()
    assert not torch.allclose(blk(x), x)
    blk.train()
    skipped = (blk(x) == x).flatten(1).all(1)  # both residual branches dropped: the block is the identity
    assert 0.1 < skipped.float().mean() < 0.4  # p^2 = 0.25


def test_points_are_shuffled_per_cloud():
    rng = np.random.default_rng(0)
    pts = np.arange(2 * 10 * 3, dtype=np.float32).reshape(2, 10, 3)
    out = shuffle_points(pts, rng)
    for b in range(2):
        assert sorted(map(tuple, out[b])) == sorted(map(tuple, pts[b]))
    assert not np.array_equal(out, pts)
    assert not np.array_equal(np.argsort(out[0, :, 0]), np.argsort(out[1, :, 0] - 30))


def test_rotation_is_one_matrix_per_batch_about_the_up_axis():
    rng = np.random.default_rng(1)
    pts = rng.normal(size=(3, 20, 3)).astype(np.float32)
    pts[1] = pts[0]
    out = rotate_batch(pts, rng, axis=1)
    assert np.allclose(out[0], out[1])
    assert np.allclose(out[..., 1], pts[..., 1])  # the up coordinate is untouched
    assert np.allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(pts, axis=-1), atol=1e-5)


def test_scale_and_translate_ranges():
    rng = np.random.default_rng(2)
    pts = np.ones((500, 1, 3), dtype=np.float32)
    out = scale_translate_batch(np.zeros_like(pts), rng)
    assert np.all(np.abs(out) <= 0.2)
    out = scale_translate_batch(pts, np.random.default_rng(3)) - scale_translate_batch(
        0 * pts, np.random.default_rng(3)
    )
    assert np.all((out >= 2 / 3 - 1e-6) & (out <= 1.5 + 1e-6))
    with pytest.raises(ValueError, match="augment"):
        augment(pts, "flip", rng, 2)


def test_no_weight_decay_on_biases_norms_and_tokens():
    params = {
        "backbone.cls_token": torch.nn.Parameter(torch.zeros(1, 1, 4)),
        "head.0.weight": torch.nn.Parameter(torch.zeros(3, 4)),
        "head.0.bias": torch.nn.Parameter(torch.zeros(3)),
        "head.1.weight": torch.nn.Parameter(torch.zeros(3)),
        "prompt_cor": torch.nn.Parameter(torch.zeros(2, 3)),
    }
    no_decay, decay = param_groups(params, 0.05)
    assert {id(p) for p in no_decay["params"]} == {
        id(params[k]) for k in ("backbone.cls_token", "head.0.bias", "head.1.weight")
    }
    assert {id(p) for p in decay["params"]} == {id(params[k]) for k in ("head.0.weight", "prompt_cor")}


def test_warmup_starts_at_1e6_and_lasts_warmup_plus_one_epochs():
    lrs = [official_epoch_lr(e, 20, 2, 1e-3) for e in range(21)]
    assert lrs[0] == lrs[1] == 1e-6
    assert lrs[2] == pytest.approx(1e-6 + (1e-3 - 1e-6) / 2)
    assert max(lrs) <= 1e-3 and lrs[-1] < 1e-4


@pytest.mark.parametrize(
    "method,cls_trains", [("linear", False), ("vpt", True), ("adapter", True), ("gaprompt", True), ("full", True)]
)
def test_cls_token_trains_for_the_runner_methods(method, cls_trains):
    model = AdaptedClassifier(backbone_from_config(ARCH), method, 3, AD)
    assert ("backbone.cls_token" in model.trainable_parameters()) == cls_trains


def test_cls_token_is_drawn_anew_for_every_adaptation_run():
    bb = backbone_from_config(ARCH)
    with torch.no_grad():
        bb.cls_token.fill_(5.0)
    torch.manual_seed(0)
    a = AdaptedClassifier(bb, "vpt", 3, AD).backbone.cls_token.detach().clone()
    torch.manual_seed(1)
    b = AdaptedClassifier(bb, "vpt", 3, AD).backbone.cls_token.detach().clone()
    assert a.abs().max() < 0.1 and not torch.equal(a, b)


def test_head_dropout_per_method():
    g = AdaptedClassifier(backbone_from_config(ARCH), "gaprompt", 3, AD)
    f = AdaptedClassifier(backbone_from_config(ARCH), "full", 3, AD)
    assert [m.p for m in g.head if isinstance(m, torch.nn.Dropout)] == [0.6, 0.6]
    assert [m.p for m in f.head if isinstance(m, torch.nn.Dropout)] == [0.5, 0.5]


def test_shape_feature_enters_the_adapters_only_in_prompted_layers():
    """Official Block: adapter(x + 0.5 g) where layer_id < 6 and the shape feature was passed (prompted layers)."""
    torch.manual_seed(0)
    model = AdaptedClassifier(
        backbone_from_config({**ARCH, "depth": 3}), "gaprompt", 3, {**AD, "prompt_depth": 2}
    ).eval()
    seen = []
    for a in model.adapters:
        a.register_forward_hook(lambda m, i, o: seen.append(i[0].detach().clone()))
    pts = torch.randn(2, 32, 3)
    model(pts)
    with_shape = list(seen)
    seen.clear()
    model.shape_feature_mlp[-1].weight.data.zero_()
    model.shape_feature_mlp[-1].bias.data.zero_()
    model(pts)
    changed = [not torch.allclose(a, b) for a, b in zip(with_shape, seen)]
    assert changed[:2] == [True, True]


def test_variant_override_names_a_bad_key():
    from methods.common.config import apply_override

    cfg = {"adapt": {"propagation_indexing": "official", "epochs": 11}}
    apply_override(cfg, "adapt.propagation_indexing=patch", "gaprompt")
    apply_override(cfg, "adapt.epochs=3", "gaprompt")
    assert cfg["adapt"] == {"propagation_indexing": "patch", "epochs": 3}
    with pytest.raises(KeyError, match="no key 'indexing'"):
        apply_override(cfg, "adapt.indexing=patch", "gaprompt")


def test_pretraining_initialisation_and_mask_count_follow_pointmae():
    from methods.gaprompt.model import MaskedAutoencoder

    torch.manual_seed(0)
    mae = MaskedAutoencoder(backbone_from_config({**ARCH, "dim": 64, "n_groups": 10}), 1, 2, 0.75)
    qkv = mae.backbone.blocks.blocks[0].attn.qkv.weight
    assert abs(qkv.std().item() - 0.02) < 0.003 and mae.mask_token.abs().max() > 0
    fc1 = mae.decoder[0].mlp.fc1.weight  # Xavier uniform: bound sqrt(6 / (fan_in + fan_out))
    assert fc1.abs().max() <= (6 / (64 + 256)) ** 0.5 and fc1.abs().max() > 0.1
    assert torch.all(mae.backbone.pos_embed[0].bias == 0)
    seen = []
    mae.predict.register_forward_hook(lambda m, i, o: seen.append(o.shape[-1]))
    mae(torch.randn(2, 40, 3), torch.Generator().manual_seed(0))
    assert seen == [7]  # int(7.5) masked groups, where round() gives 8
