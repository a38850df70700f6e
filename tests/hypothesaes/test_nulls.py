"""The trivial nulls of the claims (V3): random directions and the untrained SAE, at the SAE's feature count."""

from pathlib import Path

import numpy as np
import yaml

from methods.hypothesaes.features import method_features, random_direction_features, untrained_sae_features

ROOT = Path(__file__).resolve().parents[2]


def _emb(seed=0, n=60, d=12):
    rng = np.random.default_rng(seed)
    return {s: rng.standard_normal((n, d)) + 3.0 for s in ("train", "val", "test")}


def test_random_directions_are_unit_projections_of_the_centred_embeddings():
    emb = _emb()
    f = random_direction_features(emb, 5, seed=1)
    assert all(v.shape == (60, 5) for v in f.values())
    assert np.allclose(f["train"].mean(0), 0.0)
    # unit directions: the projection of a unit vector along a direction has |value| <= 1
    probe = {"train": emb["train"], "x": emb["train"].mean(0) + np.eye(12)}
    assert np.all(np.abs(random_direction_features(probe, 5, seed=1)["x"]) <= 1 + 1e-9)
    assert not np.allclose(f["train"], random_direction_features(emb, 5, seed=2)["train"])


def test_untrained_sae_has_the_saes_neurons_and_sparsity_and_no_training():
    emb = _emb()
    f, infos = untrained_sae_features(emb, [(8, 2)], seed=0)
    assert f["train"].shape == (60, 8) and infos == [{"m_total": 8, "k": 2, "epochs": 0}]
    assert ((f["train"] > 0).sum(1) <= 2).all() and (f["train"] >= 0).all()
    again, _ = method_features("untrained_sae", {"sizes": [[8, 2]]}, emb, [], {}, seed=0)
    assert np.array_equal(again["test"], f["test"])


def test_config_gives_the_nulls_the_saes_feature_count():
    for path in ("config.yaml", "config/full.yaml"):
        m = yaml.safe_load((ROOT / path).read_text())["hypothesaes"]["methods"]
        base = yaml.safe_load((ROOT / "config.yaml").read_text())["hypothesaes"]["methods"]
        sae = m.get("sae", base["sae"])["sizes"]
        assert m.get("untrained_sae", base["untrained_sae"])["sizes"] == sae, path
        assert m.get("random_dirs", base["random_dirs"])["n_directions"] == sum(s[0] for s in sae), path
