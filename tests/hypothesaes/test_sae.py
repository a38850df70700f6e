"""TopK SAE (official sae.py): TopK before ReLU, median pre-bias, normalised MSE, decoder constraint,
auxiliary-K revival of dead neurons."""

import numpy as np
import pytest
import torch

from methods.hypothesaes.sae import (
    SAETrainConfig,
    TopKSAE,
    aux_k_loss,
    fit_sae,
    normalised_mse,
    sae_loss,
    train_sae,
    validation_loss,
)

torch.set_num_threads(1)


def test_topk_keeps_exactly_k_of_positive_preactivations():
    torch.manual_seed(0)
    sae = TopKSAE(8, 32, 5)
    pre = torch.rand(50, 32) + 0.1  # all positive: exactly K survive the ReLU
    z = sae.topk_relu(pre, 5)
    assert ((z > 0).sum(1) == 5).all()
    # the survivors are the K largest entries of each row, unchanged
    top = pre.topk(5, dim=1)
    assert torch.equal(z.gather(1, top.indices), top.values)


def test_topk_is_taken_before_the_relu():
    pre = torch.tensor([[3.0, -1.0, -2.0, -0.5, -4.0]])
    z = TopKSAE(4, 5, 3).topk_relu(pre, 3)
    # TopK picks 3.0, -0.5, -1.0; the ReLU then zeroes the negatives. ReLU-then-TopK would instead keep
    # three entries including zeros of other neurons: the output must be the single positive value.
    assert torch.equal(z, torch.tensor([[3.0, 0.0, 0.0, 0.0, 0.0]]))


def test_forward_matches_the_definition():
    torch.manual_seed(1)
    x = torch.randn(7, 6)
    sae = TopKSAE(6, 10, 3, b_pre=x.median(0).values)
    x_hat, z, pre = sae(x)
    ref_pre = (x - sae.b_pre) @ sae.W_enc.t() + sae.b_enc
    assert torch.allclose(pre, ref_pre)
    assert torch.allclose(x_hat, z @ sae.W_dec.t() + sae.b_pre)
    assert torch.allclose(sae.W_dec.norm(dim=0), torch.ones(10), atol=1e-6)
    assert torch.allclose(sae.W_enc, sae.W_dec.t())


def test_normalised_mse_is_one_for_the_batch_mean_and_zero_for_identity():
    x = torch.randn(20, 4)
    assert float(normalised_mse(x.mean(0, keepdim=True).expand_as(x), x)) == pytest.approx(1.0)
    assert float(normalised_mse(x, x)) == 0.0


def test_training_keeps_unit_decoder_columns_median_bias_init_and_lowers_loss():
    rng = np.random.default_rng(0)
    atoms = rng.normal(size=(12, 16))
    codes = rng.random((400, 12)) * (rng.random((400, 12)) < 0.2)
    x = (codes @ atoms).astype(np.float32)
    cfg = SAETrainConfig(batch_size=64, max_epochs=15, patience=15)
    sae, info = train_sae(x[:300], x[300:], 24, 3, cfg, seed=0)
    assert torch.allclose(sae.W_dec.norm(dim=0), torch.ones(24), atol=1e-5)
    assert info["train_normalised_mse"] < 0.9


def test_pre_bias_starts_at_the_training_median():
    x = np.random.default_rng(3).normal(size=(301, 4)).astype(np.float32)  # odd count: a unique median
    cfg = SAETrainConfig(max_epochs=1, patience=1, lr=1e-12)
    sae, _ = train_sae(x, x[:50], 8, 2, cfg, seed=0)
    assert np.allclose(sae.b_pre.detach().numpy(), np.median(x, axis=0), atol=1e-6)


def test_decoder_gradient_projection_is_orthogonal_to_columns():
    torch.manual_seed(2)
    sae = TopKSAE(5, 7, 2)
    sae.W_dec.grad = torch.randn(5, 7)
    sae.project_decoder_grad()
    assert torch.allclose((sae.W_dec.grad * sae.W_dec).sum(0), torch.zeros(7), atol=1e-6)


def _planted_dead_run(aux_coef):
    """Neuron 7 starts with an encoder row that never wins the top-1 (it is dead); count its firings later."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    centres = torch.nn.functional.normalize(torch.randn(8, 10, generator=gen), dim=1)
    x = centres[torch.randint(0, 8, (512,), generator=gen)] + 0.05 * torch.randn(512, 10, generator=gen)
    sae = TopKSAE(10, 8, 1, b_pre=x.median(0).values)
    with torch.no_grad():
        sae.W_enc[7] *= 0.01  # tiny pre-activations: never in the top-1
    cfg = SAETrainConfig(aux_coef=aux_coef, dead_window=5, lr=5e-3)
    opt = torch.optim.Adam(sae.parameters(), lr=cfg.lr)
    enc7_before = sae.W_enc[7].detach().clone()
    for step in range(300):
        batch = x[torch.randint(0, 512, (64,), generator=gen)]
        loss, _, _ = sae_loss(sae, batch, cfg)
        opt.zero_grad()
        loss.backward()
        sae.project_decoder_grad()
        opt.step()
        sae.renormalise_decoder()
    fired = int((sae.encode(x)[:, 7] > 0).sum())
    moved = float((sae.W_enc[7].detach() - enc7_before).norm())
    return fired, moved


def test_aux_loss_revives_a_planted_dead_neuron():
    fired_off, moved_off = _planted_dead_run(aux_coef=0.0)
    fired_on, moved_on = _planted_dead_run(aux_coef=1.0 / 32)
    assert fired_off == 0 and moved_off == 0.0  # no gradient ever reaches a dead neuron without aux
    assert moved_on > 0 and fired_on > 0  # the auxiliary loss brings it back into the top-K


def _small_fit(restore_best):
    rng = np.random.default_rng(5)
    xt = torch.tensor(rng.standard_normal((64, 8)).astype(np.float32))
    xv = torch.tensor(rng.standard_normal((100, 8)).astype(np.float32))
    torch.manual_seed(0)
    sae = TopKSAE(8, 10, 2, b_pre=xt.median(0).values)
    cfg = SAETrainConfig(lr=1e-2, batch_size=32, max_epochs=60, patience=3, restore_best=restore_best)
    return sae, xv, cfg, fit_sae(sae, xt, xv, cfg, torch.Generator().manual_seed(0))


def test_last_epoch_is_kept_by_default_and_the_best_one_with_restore_best():
    """Official fit keeps the weights of the epoch that triggered the early stop; restore_best: true (an
    option) reloads the best validation epoch's weights (and dead-neuron counters)."""
    sae, xv, cfg, hist = _small_fit(restore_best=False)
    assert len(hist["val_loss"]) < 60 and hist["val_loss"][-1] > min(hist["val_loss"])  # stopped after a rise
    last = validation_loss(sae, xv, cfg)
    sae_b, xv, cfg_b, hist_b = _small_fit(restore_best=True)
    assert hist_b["val_loss"] == hist["val_loss"]  # same run, only the kept weights differ
    assert validation_loss(sae_b, xv, cfg_b) == pytest.approx(min(hist["val_loss"]), rel=1e-6)
    assert last != pytest.approx(min(hist["val_loss"]), rel=1e-6)


def test_defaults_are_the_official_train_sae_defaults():
    cfg = SAETrainConfig()
    assert (cfg.patience, cfg.restore_best, cfg.aux_coef, cfg.dead_window, cfg.aux_k_multiplier, cfg.lr) == (
        3,
        False,
        1 / 32,
        256,
        2,
        5e-4,
    )


def test_aux_term_counts_without_dead_neurons_but_gives_no_gradient():
    """Official compute_loss: with no dead neuron the aux-K rebuild is 0, its loss is the normalised MSE of
    predicting 0 for the residual (> 0) and no parameter receives a gradient from it."""
    torch.manual_seed(4)
    x = torch.randn(40, 6)
    sae = TopKSAE(6, 9, 2, b_pre=x.median(0).values)
    x_hat, _, pre = sae(x)
    aux = aux_k_loss(sae, x, x_hat, pre, SAETrainConfig())
    residual = (x - x_hat).detach()
    assert float(aux.detach()) == pytest.approx(
        float(residual.pow(2).mean() / (residual - residual.mean(0)).pow(2).mean())
    )
    grads = torch.autograd.grad(aux, [sae.W_dec, sae.W_enc, sae.b_enc, sae.b_pre], allow_unused=True)
    assert all(g is None or float(g.abs().max()) == 0.0 for g in grads)
