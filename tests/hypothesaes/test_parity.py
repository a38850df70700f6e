"""Golden-value parity with the official code: rmovva/HypotheSAEs at commit
706d8979c71befe8e3151f51a8d4dbf87d4d7e41 (v2.0.1), run in a scratch environment (torch 2.13.0 CPU,
scikit-learn 1.9.1, statsmodels 0.15.0) on the seeded inputs built below; only the numbers are kept.

- `SparseAutoencoder` (sae.py): 16-dim inputs, M = 12, K = 3, a fixed unit-column decoder (encoder = its
  transpose, input bias = training median, installed in place of `initialize_weights_`):
  `compute_loss` with no dead neuron (the aux-K term rebuilds the residual from zeros and still counts),
  with five planted dead neurons on 2 rows, and `fit` with one training batch of 64 rows (so the
  DataLoader's shuffle does not matter), 150 validation rows in 3 batches, lr 5e-3, 40 epochs at most,
  patience 3, a dead window of 5 forward calls: the per-epoch losses, the epoch of the early stop, the
  last epoch's weights and activations.
- `select_neurons_lasso` (regression and L1-logistic), `select_neurons_correlation` (select_neurons.py),
  `sample_percentile_bins` asked for more examples than exist, so that it returns the whole top-decile and
  zero bins (interpret_neurons.py), and `compute_ols_metrics` / `score_hypotheses` (evaluation.py, OLS and
  Logit through statsmodels) on seeded activations and binary annotations.

Tolerance: 1e-5 relative on float32 SAE quantities (1e-4 after 38 epochs of training, where the order of
float additions differs), 1e-6 on float64 fits (1e-2 on the L1-logistic coefficients: see that test).
"""

import numpy as np
import pytest
import torch

from methods.hypothesaes.interpret import activation_bins
from methods.hypothesaes.sae import SAETrainConfig, TopKSAE, fit_sae, sae_loss
from methods.hypothesaes.select import select_correlation, select_lasso
from methods.hypothesaes.validate import logit_pvalues, ols_pvalues, significant_hypotheses

torch.set_num_threads(1)

SAE_GOLDEN = {
    "loss_no_dead": 0.821512758731842,
    "main_no_dead": 0.7873563170433044,
    "loss_dead": 1.310162901878357,
    "main_dead": 1.2569782733917236,
    "dead_after_forward": 3,
    "epochs": 38,
    "val_loss_first": [0.8405141631762186, 0.8290387392044067, 0.8174449602762858],
    "val_loss_last": [0.7196240226427714, 0.7194876074790955, 0.7188790639241537],
    "best_val_loss": 0.7186172405878702,
    "train_loss_first": [0.821512758731842, 0.805274486541748],
    "train_loss_last": 0.5482242107391357,
    "final_decoder_row0": [
        0.0558900386095047,
        0.656626284122467,
        0.15101391077041626,
        -0.19862018525600433,
        0.204839825630188,
        -0.25014784932136536,
    ],
    "final_input_bias": [0.07598202675580978, -0.40748530626296997, 0.21863801777362823, 0.16593563556671143],
    "final_val_acts_rowsum": [
        5.185765266418457,
        6.802649021148682,
        4.490642547607422,
        3.6341278553009033,
        3.8201045989990234,
    ],
}


def _sae_inputs():
    rng = np.random.default_rng(20261205)
    x_train = rng.standard_normal((64, 16)).astype(np.float32)
    x_val = rng.standard_normal((150, 16)).astype(np.float32)
    w = rng.standard_normal((16, 12)).astype(np.float32)
    w /= np.linalg.norm(w, axis=0, keepdims=True)
    return torch.tensor(x_train), torch.tensor(x_val), torch.tensor(w)


def _sae(xt, w):
    sae = TopKSAE(16, 12, 3, b_pre=xt.median(0).values)
    with torch.no_grad():
        sae.W_dec.copy_(w)
        sae.W_enc.copy_(w.t())
    return sae


def test_sae_loss_without_dead_neurons_matches_the_official_value():
    xt, _, w = _sae_inputs()
    with torch.no_grad():
        total, recon, _ = sae_loss(_sae(xt, w), xt, SAETrainConfig())
    assert float(recon) == pytest.approx(SAE_GOLDEN["main_no_dead"], rel=1e-5)
    assert float(total) == pytest.approx(SAE_GOLDEN["loss_no_dead"], rel=1e-5)


def test_sae_loss_with_planted_dead_neurons_matches_the_official_value():
    xt, _, w = _sae_inputs()
    sae = _sae(xt, w)
    sae.steps_since_active[[0, 5, 7, 9, 11]] = 1000
    with torch.no_grad():
        total, recon, _ = sae_loss(sae, xt[:2], SAETrainConfig())
    assert int(sae.dead_mask(256).sum()) == SAE_GOLDEN["dead_after_forward"]
    assert float(recon) == pytest.approx(SAE_GOLDEN["main_dead"], rel=1e-5)
    assert float(total) == pytest.approx(SAE_GOLDEN["loss_dead"], rel=1e-5)


def test_sae_training_matches_the_official_fit_and_keeps_the_last_epoch():
    xt, xv, w = _sae_inputs()
    sae = _sae(xt, w)
    cfg = SAETrainConfig(lr=5e-3, batch_size=64, max_epochs=40, patience=3, dead_window=5)
    hist = fit_sae(sae, xt, xv, cfg, torch.Generator().manual_seed(0))
    assert len(hist["val_loss"]) == SAE_GOLDEN["epochs"]
    assert hist["val_loss"][:3] == pytest.approx(SAE_GOLDEN["val_loss_first"], rel=1e-5)
    assert hist["val_loss"][-3:] == pytest.approx(SAE_GOLDEN["val_loss_last"], rel=1e-4)
    assert min(hist["val_loss"]) == pytest.approx(SAE_GOLDEN["best_val_loss"], rel=1e-4)
    assert hist["train_loss"][:2] == pytest.approx(SAE_GOLDEN["train_loss_first"], rel=1e-5)
    assert hist["train_loss"][-1] == pytest.approx(SAE_GOLDEN["train_loss_last"], rel=1e-4)
    # the weights are the last epoch's, not the best one's
    assert sae.W_dec[0, :6].tolist() == pytest.approx(SAE_GOLDEN["final_decoder_row0"], rel=1e-4, abs=1e-6)
    assert sae.b_pre[:4].tolist() == pytest.approx(SAE_GOLDEN["final_input_bias"], rel=1e-4, abs=1e-6)
    assert sae.encode(xv[:5]).sum(1).tolist() == pytest.approx(SAE_GOLDEN["final_val_acts_rowsum"], rel=1e-4)


def _selection_inputs():
    rng = np.random.default_rng(7)
    acts = np.maximum(rng.standard_normal((300, 40)) - 1.0, 0.0)
    y = 1.5 * acts[:, 3] - 1.0 * acts[:, 17] + 0.8 * acts[:, 25] + rng.standard_normal(300)
    return rng, acts, y


def test_lasso_selection_matches_the_official_alpha_search():
    _, acts, y = _selection_inputs()
    idx, coef = select_lasso(acts, y, 5)
    assert idx.tolist() == [3, 17, 25, 24, 9]
    assert coef.tolist() == pytest.approx(
        [0.1454697396935266, -0.1449023339825336, 0.08054437469392502, 0.027354548600718363, -0.0007119058049820177],
        rel=1e-6,
    )


def test_l1_logistic_selection_matches_the_official_alpha_search():
    _, acts, y = _selection_inputs()
    idx, coef = select_lasso(acts, (y > np.median(y)).astype(int), 4, classification=True)
    assert idx.tolist() == [25, 17, 3, 6]
    # liblinear shuffles the data with numpy's global RNG in the official code (random_state unset), so its
    # coefficients move by ~1e-3 relative from run to run there; ours fixes random_state
    assert coef.tolist() == pytest.approx(
        [0.20384133368762192, -0.1292993944835542, 0.06559616901556975, 0.0006976608678357667], rel=1e-2, abs=1e-5
    )


def test_correlation_selection_matches_the_official_ranking():
    _, acts, y = _selection_inputs()
    idx, corr = select_correlation(acts, y, 5)
    assert idx.tolist() == [17, 3, 25, 24, 7]
    assert corr.tolist() == pytest.approx(
        [-0.21060711612576385, 0.207000394620101, 0.165369425569401, 0.11903886004216689, -0.09985453381854516],
        rel=1e-6,
    )


def test_activation_bins_equal_the_official_percentile_bins():
    _, acts, _ = _selection_inputs()
    high, low = activation_bins(acts[:, 3], 0.0, 0.9)
    assert sorted(high.tolist()) == [41, 55, 80, 169, 174, 250]
    assert len(low) == 245


def _annotations():
    rng, *_ = _selection_inputs()  # continues the golden script's stream
    ann = (rng.random((200, 5)) < 0.4).astype(float)
    y = ann @ np.array([0.9, 0.0, -0.6, 0.3, 0.0]) + rng.standard_normal(200)
    y_bin = (ann @ np.array([1.5, 0.0, -1.0, 0.5, 0.0]) + rng.logistic(size=200) > 0.3).astype(int)
    return ann, y, y_bin


def test_joint_ols_matches_statsmodels_in_the_official_evaluation():
    ann, y, _ = _annotations()
    coef, p, r2 = ols_pvalues(ann, y)
    assert coef[1:].tolist() == pytest.approx(
        [0.6699317907305975, -0.004370934537719119, -0.5035404854132339, 0.23753871739142068, -0.16792408060890843],
        rel=1e-6,
    )
    assert p[1:].tolist() == pytest.approx(
        [1.0277530744781322e-05, 0.9763505258580968, 0.0007855221372381818, 0.10833455135976144, 0.2657918172513036],
        rel=1e-6,
    )
    assert r2 == pytest.approx(0.1635406009150453, rel=1e-6)
    two = significant_hypotheses(ann[:, [0, 2]], y, alpha=0.1, n_hypotheses=2)
    assert two["n_significant"] == 2  # official Significant (2, 2, 0.05)


def test_joint_logit_matches_statsmodels_in_the_official_evaluation():
    ann, _, y_bin = _annotations()
    coef, p, r2 = logit_pvalues(ann, y_bin)
    assert coef[1:].tolist() == pytest.approx(
        [1.6644147044506183, -0.06676286276055451, -0.3741095554901389, 1.0311548825904306, 0.04386078251004152],
        rel=1e-6,
    )
    assert p[1:].tolist() == pytest.approx(
        [5.159541966837846e-07, 0.8353275393698397, 0.24622748370876713, 0.0015270392363196453, 0.8942986125554069],
        rel=1e-5,
    )
    assert r2 == pytest.approx(0.1423674331209941, rel=1e-6)
