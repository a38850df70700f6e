"""Encoders and the sweep: hidden states per depth, best-validation checkpoint, correlation bookkeeping."""

import numpy as np
import pytest
import torch

from methods.mm_alignment.encoders import MLPEncoder, TrainSpec, stratified_split, train_encoder, zscore
from methods.mm_alignment.experiments import correlations, load_two_views


def test_hidden_states_are_the_leaky_relu_outputs():
    torch.manual_seed(0)
    m = MLPEncoder(12, 12, 3, 4)
    x = torch.randn(5, 12)
    logits, hidden = m(x, return_hidden=True)
    assert logits.shape == (5, 4) and len(hidden) == 3
    assert torch.allclose(hidden[0], torch.nn.functional.leaky_relu(m.fc1(x), 0.1))
    assert torch.allclose(hidden[1], torch.nn.functional.leaky_relu(m.inner[0](hidden[0]), 0.1))
    assert torch.allclose(logits, m.head(hidden[-1]))  # the head reads the last LeakyReLU directly
    with pytest.raises(ValueError):
        MLPEncoder(12, 12, 0, 4)


@pytest.mark.parametrize("depth", [1, 2, 5])
def test_layer_list_is_the_official_custom_mlp(depth):
    """Regression: the encoder had a Linear(width, width) after its last LeakyReLU. The official
    CustomMLP(num_hidden=L) is fc1, [LeakyReLU, fc] x (L - 1), LeakyReLU; the head follows."""
    m = MLPEncoder(12, 12, depth, 4)
    expected = ["fc1"] + [n for i in range(1, depth) for n in (f"leaky_relu{i}", f"fc{i + 1}")] + [f"leaky_relu{depth}"]
    assert m.layer_names() == expected
    linears = [mod for mod in m.modules() if isinstance(mod, torch.nn.Linear)]
    assert len(linears) == depth + 1  # fc1..fc_L and the head
    assert sum(p.numel() for p in m.parameters()) == 12 * 12 + 12 + (depth - 1) * (12 * 12 + 12) + 12 * 4 + 4


def test_gradient_norm_is_clipped():
    """The official training clips the gradient L2 norm at 8 before every AdamW step."""
    torch.manual_seed(0)
    m = MLPEncoder(4, 8, 2, 2)
    seen = []
    orig = torch.nn.utils.clip_grad_norm_

    def spy(params, max_norm, *a, **k):
        seen.append(max_norm)
        return orig(params, max_norm, *a, **k)

    torch.nn.utils.clip_grad_norm_ = spy
    try:
        g = torch.Generator().manual_seed(0)
        x, y = torch.randn(64, 4, generator=g), torch.randint(0, 2, (64,), generator=g)
        train_encoder(m, x, y, x, y, TrainSpec(1, 32, 1e-2, 0.0), g)
        assert seen == [8.0, 8.0]
        seen.clear()
        train_encoder(m, x, y, x, y, TrainSpec(1, 32, 1e-2, 0.0, grad_clip=0.0), g)
        assert seen == []
    finally:
        torch.nn.utils.clip_grad_norm_ = orig


def test_training_keeps_best_validation_and_learns():
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(600, 4, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    torch.manual_seed(0)
    m = MLPEncoder(4, 8, 1, 2)
    info = train_encoder(m, x[:400], y[:400], x[400:], y[400:], TrainSpec(10, 64, 2e-2, 0.0), g)
    acc = float((m(x[400:]).argmax(1) == y[400:]).float().mean())
    assert acc == pytest.approx(info["best_val_acc"]) and acc > 0.9


def test_split_is_stratified_and_zscore_uses_train():
    y = np.repeat(np.arange(4), 100)
    tr, va, te = stratified_split(y, (0.7, 0.15, 0.15), np.random.default_rng(0))
    assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(va) + len(te) == 400
    assert np.all(np.bincount(y[tr]) == 70)
    x = np.random.default_rng(1).normal(3, 2, size=(400, 3))
    z = zscore(x, tr)
    assert np.allclose(z[tr].mean(0), 0) and np.allclose(z[tr].std(0), 1)


def test_correlations_scale_invariance_and_keys():
    varied = [{"capacity": float(c)} for c in (1, 2, 3, 4)]
    rows = [
        {
            "test_acc": a,
            "align_mutual_knn": m,
            "align_unbiased_cka": c,
            "align_untrained_mutual_knn": u,
            "align_untrained_unbiased_cka": u,
        }
        for a, m, c, u in [(0.5, 0.1, 0.4, 0.3), (0.6, 0.2, 0.3, 0.1), (0.7, 0.3, 0.2, 0.4), (0.8, 0.4, 0.1, 0.2)]
    ]
    out = correlations(rows, varied)
    assert out["align_perf_mutual_knn_pearson"] == pytest.approx(1.0)
    assert out["align_perf_mutual_knn_spearman_loo_min"] == pytest.approx(1.0)
    assert out["align_perf_unbiased_cka_pearson"] == pytest.approx(-1.0)
    assert out["align_perf_untrained_mutual_knn_spearman"] == pytest.approx(0.0)  # ranks 3,1,4,2
    assert out["perf_capacity_pearson"] == pytest.approx(1.0) and out["max_align_mutual_knn"] == 0.4
    assert out["max_align_untrained_unbiased_cka"] == 0.4


def test_two_views_of_digits_and_bad_source(tmp_path):
    left, right, y, c = load_two_views({"kind": "digits"})
    assert left.shape == right.shape == (1797, 32) and c == 10
    np.savez(tmp_path / "d.npz", images=np.zeros((6, 4, 4)), labels=np.array([3, 3, 5, 5, 7, 7]))
    l2, r2, y2, c2 = load_two_views({"kind": "npz", "path": str(tmp_path / "d.npz")})
    assert l2.shape == (6, 8) and c2 == 3 and list(y2) == [0, 0, 1, 1, 2, 2]
    with pytest.raises(FileNotFoundError, match="mm_alignment.real.source.path"):
        load_two_views({"kind": "npz", "path": str(tmp_path / "missing.npz")})


def test_hf_loader_on_a_local_stand_in(tmp_path):
    """The full-scale path (datasets.load_dataset on an image set) on a parquet file built here."""
    datasets = pytest.importorskip("datasets")
    from PIL import Image

    rng = np.random.default_rng(0)
    imgs = [Image.fromarray(rng.integers(0, 256, size=(6, 6), dtype=np.uint8)) for _ in range(8)]
    ds = datasets.Dataset.from_dict(
        {"image": imgs, "label": [0, 1] * 4},
        features=datasets.Features({"image": datasets.Image(), "label": datasets.Value("int64")}),
    )
    ds.to_parquet(str(tmp_path / "train.parquet"))
    src = {
        "kind": "hf",
        "path": "parquet",
        "data_files": str(tmp_path / "train.parquet"),
        "split": "train",
        "max_samples": 6,
    }
    left, right, y, c = load_two_views(src)
    assert left.shape == right.shape == (6, 18) and c == 2
    assert np.allclose(left[0], np.asarray(imgs[0], dtype=float)[:, :3].ravel())
    with pytest.raises(ValueError, match="image_column"):
        load_two_views({**src, "image_column": "pixels"})
    # the submit host's fetch (rule mm_alignment_download) fills the cache the real-data job reads
    from methods.common.io import read_json
    from methods.mm_alignment.experiments import fetch_hf

    fetch_hf(src, str(tmp_path / "hf"), str(tmp_path / "hf.json"))
    assert read_json(tmp_path / "hf.json")["rows"] == 8 and any((tmp_path / "hf").iterdir())
    cached = load_two_views(src, str(tmp_path / "hf"))
    assert all(np.array_equal(a, b) for a, b in zip(cached, (left, right, y, c)))


def test_official_gradient_clipping_does_not_bind_at_the_tiny_setting():
    """The README states that clipping at norm 8 leaves the tiny runs unchanged: on the tiny setting (U = 0,
    D = 1, n = 16,384, 15 epochs at lr 5e-3, batch 512) the gradient norm of a depth-6 encoder stays below 8."""
    from methods.mm_alignment.generator import (
        GeneratorSpec,
        apply_transform,
        build_distribution,
        heterogeneity_transforms,
        sample,
    )

    torch.set_num_threads(1)
    x1, x2, y = sample(build_distribution(0, GeneratorSpec()), 16384, np.random.default_rng(0))
    x2 = apply_transform(heterogeneity_transforms(12, 10, 0)[1], x2)
    tr, _, _ = stratified_split(y, (0.7, 0.15, 0.15), np.random.default_rng(0))
    x, yt = torch.as_tensor(zscore(x2, tr)[tr], dtype=torch.float32), torch.as_tensor(y[tr])
    torch.manual_seed(6)
    m = MLPEncoder(12, 12, 6, 4)
    opt = torch.optim.AdamW(m.parameters(), lr=5e-3, weight_decay=0.01)
    g, norms = torch.Generator().manual_seed(0), []
    for _ in range(15):
        perm = torch.randperm(len(x), generator=g)
        for i in range(0, len(x), 512):
            idx = perm[i : i + 512]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(m(x[idx]), yt[idx]).backward()
            norms.append(float(torch.nn.utils.clip_grad_norm_(m.parameters(), float("inf"))))
            opt.step()
    assert 0 < max(norms) < 8.0
