"""Golden-value parity with the official GAPrompt code.

Repository zhoujiahuan1991/ICML2025-GAPrompt at commit 8a26a2e99e8d9dd49fd7925d14de46569009e27e, run on CPU
in a scratch checkout (its pinned timm==0.4.5) on the seeded inputs and weights defined below; the numbers
are fixtures, no official code is in this project. Its CUDA extensions were replaced by CPU stand-ins written
from their sources: pointnet2_ops' furthest_point_sample (start at index 0, running minimum from 1e10, points
with |p|^2 <= 1e-3 never selected, first maximum) and KNN_CUDA's KNN (k nearest, nearest first). Functions:
  * models/GAPrompt.py PositionalEmbedding(4)                      -> NERF (cloud 1, point 3)
  * models/prompt_MAE.py PointTransformer_pointtokenprompt, eval mode, config of SMALL_ARCH / SMALL_CFG
    (trans_dim 32, depth 2, 2 heads, 64 groups of 8, encoder 128 wide, prompt_depth 1, 10 prompt tokens,
    5 point prompts, perturbation 0.8, 'permutation_after_attention', drop_path_rate 0.1, 4 classes), with
    our weights copied in by name:                                  -> SHIFT_Y (shift_net output, points ::29),
    SHAPE_FEATURE (shape_feature_mlp, first 5), LOGITS_BATCH3 (clouds(3, 128)), LOGITS_CLOUD2_ALONE;
  * the same class at the ScanObjectNN-hardest config with tools/runner_module.py's trainable names
                                                                    -> PAPER_ARCH_*;
  * tools/builder.py add_weight_decay on the small model (prompt_depth 2) -> DECAY_NO_DECAY;
  * timm 0.4.5 CosineLRScheduler with the builder's arguments, stepped per epoch as the runner does
                                                                    -> LR_11_0, LR_300_10;
  * datasets/data_transforms.py PointcloudRotate.M(y axis, 0.7)    -> ROTATE_Y.
Tolerance: 1e-5 relative in fp32, with 2e-6 absolute for values near zero (logits pass two transformer
blocks, a shift prompter and an MLP head).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from methods.gaprompt.geometry import nerf_encoding
from methods.gaprompt.model import AdaptedClassifier, backbone_from_config, count_parameters
from methods.gaprompt.train import axis_rotation, official_epoch_lr, param_groups

torch.set_num_threads(1)

# Seeded inputs and weights (the official code ran on the same ones): `fill_` sets every floating tensor of
# OUR module's state dict from one generator in sorted name order; the official module received the same
# tensors through a name map. Inputs are clouds in the unit sphere, as ScanObjectNN's are.
SMALL_ARCH = dict(dim=32, depth=2, heads=2, n_groups=64, group_size=8, encoder_width=128, drop_path_rate=0.1)
SMALL_CFG = dict(
    prompt_depth=1,
    n_prompt_tokens=10,
    adapter_rank=16,
    n_point_prompts=5,
    perturbation=0.8,
    propagation_k=64,
    head_hidden=256,
    head_dropout=0.5,
    head_dropout_gaprompt=0.6,
    propagation_indexing="official",
)
N_CLASSES = 4


def fill_(module: torch.nn.Module, seed: int) -> None:
    """Deterministic weights: matrices N(0, 1/fan_in), norm scales 1 + 0.1 N(0, 1), running variances
    U(0.5, 1.5), everything else 0.1 N(0, 1)."""
    g = torch.Generator().manual_seed(seed)
    state = module.state_dict()
    with torch.no_grad():
        for name in sorted(state):
            t = state[name]
            if not t.is_floating_point():
                continue
            if name.endswith("running_var"):
                t.copy_(0.5 + torch.rand(t.shape, generator=g))
            elif t.dim() >= 2:
                t.copy_(torch.randn(t.shape, generator=g) / math.sqrt(max(1, t[0].numel())))
            elif name.endswith("weight"):
                t.copy_(1.0 + 0.1 * torch.randn(t.shape, generator=g))
            else:
                t.copy_(0.1 * torch.randn(t.shape, generator=g))


def clouds(batch: int = 3, n: int = 128, seed: int = 0) -> torch.Tensor:
    """(batch, n, 3) Gaussian clouds centred and scaled into the unit sphere."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, n, 3, generator=g)
    x = x - x.mean(1, keepdim=True)
    return x / x.norm(dim=-1).amax(1)[:, None, None]


NERF = [
    0.30532068,
    0.457585782,
    -0.683333635,
    0.300599039,
    0.441783547,
    -0.631381691,
    0.95375061,
    0.897121668,
    0.775472224,
    0.573393047,
    0.79266721,
    -0.979237914,
    0.819280446,
    0.609654605,
    0.202714384,
    0.939539373,
    0.966506422,
    -0.397011191,
    0.342440873,
    -0.25664255,
    -0.917813778,
    0.643473327,
    -0.496093333,
    0.728764713,
    -0.765468478,
    -0.868269205,
    0.684764206,
]
SHIFT_Y = [
    -0.294402689,
    -0.293503284,
    -0.0989722759,
    0.0999766067,
    -0.0630398765,
    0.594403625,
    0.0699956939,
    -0.348188758,
    -0.0507806353,
    -0.314077288,
    -0.0420387648,
    -0.0839720815,
    0.240837038,
    -0.173218265,
    0.473275721,
    0.0586169474,
    0.146642849,
    0.283028275,
    -0.0509309918,
    -0.369819939,
    0.124840006,
    -0.0610463805,
    -0.0548900105,
    0.0227136239,
    0.329859585,
    0.0932109207,
    -0.0804920644,
    0.101657994,
    -0.127427742,
    0.514499247,
    0.122953437,
    0.107865512,
    0.379542172,
    -0.0824640617,
    0.0234236065,
    0.345247954,
    0.574190736,
    -0.172323778,
    0.185723305,
    -0.356280029,
    0.517762661,
    0.119283453,
    -0.145704269,
    0.293876648,
    0.0840368643,
]
SHAPE_FEATURE = [
    0.0826926455,
    -0.190812588,
    0.409311771,
    -0.11120297,
    0.378764868,
    0.0555244237,
    -0.22496134,
    0.464144796,
    -0.0543095022,
    0.414663374,
    0.0492371917,
    -0.243960753,
    0.454998881,
    -0.0625349805,
    0.385954142,
]
LOGITS_BATCH3 = [
    [-0.00981375948, -1.10108852, 0.77722311, 0.439273179],
    [-0.00782326236, -1.14444113, 0.812498927, 0.399350047],
    [0.0215295367, -1.18759263, 0.890517235, 0.312526822],
]
LOGITS_CLOUD2_ALONE = [[0.0160222761, -1.20200229, 0.864320636, 0.374716341]]
PAPER_ARCH_TRAINABLE, PAPER_ARCH_TOTAL = 628147, 22453195
PAPER_ARCH_DEAD_ADAPTER_SCALE, PAPER_ARCH_UNUSED_PROMPTS, PAPER_ARCH_UNUSED_SCALERS = 4620, 23040, 24
DECAY_NO_DECAY = (122541, 3311)
LR_11_0 = [
    0.002,
    0.002,
    0.0019595132271276903,
    0.0018413329060647655,
    0.0016550333035783124,
    0.0014157073054953855,
    0.0011427436808541483,
    0.0008582563191458515,
    0.0005852926945046146,
    0.00034596669642168764,
    0.00015966709393523448,
    4.1486772872309875e-05,
]
LR_300_10_FIRST13_LAST3 = [
    1e-06,
    1e-06,
    5.09e-05,
    0.0001008,
    0.0001507,
    0.0002006,
    0.0002505,
    0.00030040000000000004,
    0.0003503,
    0.0004002,
    0.00045010000000000004,
    0.0004986332128943842,
    0.0004983465050172989,
    1.1231131887499658e-06,
    1.0547194730260478e-06,
    1.0136802433047203e-06,
]
ROTATE_Y = [
    [0.7648421872844884, 0.0, 0.6442176872376911],
    [0.0, 1.0, 0.0],
    [-0.644217687237691, 0.0, 0.7648421872844884],
]


def close(ours, golden):
    return torch.allclose(
        torch.as_tensor(ours, dtype=torch.float32), torch.tensor(golden, dtype=torch.float32), rtol=1e-5, atol=2e-6
    )


@pytest.fixture(scope="module")
def small_model():
    torch.manual_seed(0)
    model = AdaptedClassifier(backbone_from_config(SMALL_ARCH), "gaprompt", N_CLASSES, SMALL_CFG)
    fill_(model, 0)
    return model.eval()


def test_nerf_encoding_matches_official():
    assert close(nerf_encoding(clouds(2, 7, seed=1), 4)[1, 3], NERF)


def test_shift_prompter_matches_official(small_model):
    with torch.no_grad():
        y, g = small_model.shift_net(clouds(3, 128, seed=0))
        assert close(y[:, ::29].reshape(-1), SHIFT_Y)
        assert close(small_model.shape_feature_mlp(g)[:, :5].reshape(-1), SHAPE_FEATURE)


def test_classifier_logits_match_official(small_model):
    """Point prompts, shift, prompt tokens with shape feature, propagation (doubled neighbourhoods, official
    indexing), adapters and head, end to end."""
    pts = clouds(3, 128, seed=0)
    with torch.no_grad():
        assert close(small_model(pts), LOGITS_BATCH3)
        assert close(small_model(pts[2:3]), LOGITS_CLOUD2_ALONE)


def test_official_indexing_makes_a_cloud_depend_on_its_batch(small_model):
    """Regression for the propagation indexing: with the official indexing a cloud's logits change with the
    other clouds of its batch (golden values above); with 'patch' indexing they do not."""
    assert not close(LOGITS_BATCH3[2], LOGITS_CLOUD2_ALONE[0])
    pts = clouds(3, 128, seed=0)
    patch = copy.deepcopy(small_model)
    for p in patch.propagation:
        p.indexing = "patch"
    with torch.no_grad():
        assert torch.allclose(patch(pts)[2], patch(pts[2:3])[0], atol=1e-5)
        assert not close(patch(pts), LOGITS_BATCH3)


def test_parameter_count_is_the_official_live_count():
    """At the paper's architecture our trainable / total counts equal the official model's less its parameters
    that never act: the adapters' unused `scale` layer, prompt embeddings of layers 6-11 (prompt_depth 6) and the
    frozen scaler1 / scaler2 (scaler: False)."""
    arch = dict(dim=384, depth=12, heads=6, n_groups=128, group_size=32, encoder_width=128, drop_path_rate=0.1)
    model = AdaptedClassifier(
        backbone_from_config(arch), "gaprompt", 15, {**SMALL_CFG, "prompt_depth": 6, "head_hidden": 256}
    )
    c = count_parameters(model)
    dead = PAPER_ARCH_DEAD_ADAPTER_SCALE + PAPER_ARCH_UNUSED_PROMPTS
    assert c["trainable"] == PAPER_ARCH_TRAINABLE - dead
    assert c["total"] == PAPER_ARCH_TOTAL - dead - PAPER_ARCH_UNUSED_SCALERS


def test_weight_decay_groups_match_official():
    model = AdaptedClassifier(backbone_from_config(SMALL_ARCH), "gaprompt", N_CLASSES, {**SMALL_CFG, "prompt_depth": 2})
    model.freeze()
    no_decay, decay = param_groups({n: p for n, p in model.named_parameters() if p.requires_grad}, 0.05)
    assert (sum(p.numel() for p in decay["params"]), sum(p.numel() for p in no_decay["params"])) == DECAY_NO_DECAY
    assert no_decay["weight_decay"] == 0.0 and decay["weight_decay"] == 0.05


def test_epoch_learning_rates_match_timm():
    assert close([official_epoch_lr(e, 11, 0, 2e-3) for e in range(12)], LR_11_0)
    lrs = [official_epoch_lr(e, 300, 10, 5e-4) for e in range(301)]
    assert torch.allclose(
        torch.tensor(lrs[:13] + lrs[-3:], dtype=torch.float64),
        torch.tensor(LR_300_10_FIRST13_LAST3, dtype=torch.float64),
        rtol=1e-12,
        atol=0,
    )


def test_rotation_matrix_matches_official():
    assert np.allclose(axis_rotation(1, 0.7), ROTATE_Y, rtol=0, atol=1e-12)
