"""Model shapes, configs, scaling, sampling, training behaviour and the evaluation wrapper."""
import numpy as np
import pytest
import torch

from methods.timemcl.evaluate import evaluate_forecaster, predict, score_weights
from methods.timemcl.metrics import winners
from methods.timemcl.model import (DeepARGaussian, ModelConfig, TimeMCL, count_parameters, mean_scale,
                                   seasonal_naive)
from methods.timemcl.train import TrainConfig, load_checkpoint, make_checkpoint, train_deepar, train_timemcl

torch.set_num_threads(1)

SIZES = [dict(dim=1, context_length=1, horizon=1, n_hypotheses=1),
         dict(dim=3, context_length=5, horizon=2, n_hypotheses=4, hidden=7, layers=1),
         dict(dim=2, context_length=9, horizon=4, n_hypotheses=1, layers=3, linear_skip=False)]


def _windows(n, cfg, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, cfg.context_length, cfg.dim, generator=g) + 0.5,
            torch.rand(n, cfg.horizon, cfg.dim, generator=g) + 0.5)


@pytest.mark.parametrize("size", SIZES)
def test_shapes(size):
    cfg = ModelConfig.from_dict(size)
    ctx, _ = _windows(3, cfg)
    hyps, logits = TimeMCL(cfg)(ctx)
    assert hyps.shape == (3, cfg.n_hypotheses, cfg.horizon, cfg.dim) and logits.shape == (3, cfg.n_hypotheses)
    assert DeepARGaussian(cfg).sample(ctx, 5, torch.Generator().manual_seed(0)).shape == (3, 5, cfg.horizon, cfg.dim)
    assert torch.isfinite(DeepARGaussian(cfg).nll(*_windows(3, cfg)))


def test_config_rejects_unknown_keys():
    with pytest.raises(ValueError, match=r"unknown key 'hiden'.*allowed keys: dim, context_length"):
        ModelConfig.from_dict(dict(dim=1, context_length=2, horizon=1, hiden=3))
    with pytest.raises(ValueError, match=r"unknown key 'step'.*steps"):
        TrainConfig.from_dict({"step": 3})
    with pytest.raises(ValueError, match=r"loss='soft'.*wta, relaxed, annealed"):
        TrainConfig.from_dict({"loss": "soft"})


def test_mean_scale_and_unscaling():
    ctx = torch.tensor([[[1.0, 0.0, -2.0], [3.0, 0.0, 2.0]]])  # (1, C=2, D=3)
    assert mean_scale(ctx).tolist() == [[[2.0, 1.0, 2.0]]]  # all-zero dim falls back to 1
    assert mean_scale(ctx, enabled=False).tolist() == [[[1.0, 1.0, 1.0]]]
    model = TimeMCL(ModelConfig(dim=3, context_length=2, horizon=2, n_hypotheses=2))
    with torch.no_grad():
        model.skip.weight.normal_()  # make the skip path non-trivial
        hyps, _ = model(ctx)
        scaled, _, scale = model.forward_scaled(ctx)
    assert torch.allclose(hyps, scaled * scale.unsqueeze(1))


def test_timemcl_heads_are_independent_linear_maps():
    """Perturbing head k's output weights changes hypothesis k only."""
    cfg = ModelConfig(dim=2, context_length=4, horizon=3, n_hypotheses=3)
    model = TimeMCL(cfg)
    ctx, _ = _windows(2, cfg)
    with torch.no_grad():
        before, _ = model(ctx)
        rows = slice(1 * 3 * 2, 2 * 3 * 2)  # head 1 owns rows [H*D, 2*H*D)
        model.hyp_heads.bias[rows] += 1.0
        after, _ = model(ctx)
    changed = (after - before).abs().amax(dim=(0, 2, 3))
    assert changed[1] > 0 and changed[0] == 0 and changed[2] == 0


def test_seasonal_naive_values():
    ctx = torch.arange(6.0).view(1, 6, 1)
    assert seasonal_naive(ctx, 5, 2).view(-1).tolist() == [4.0, 5.0, 4.0, 5.0, 4.0]
    assert seasonal_naive(ctx, 2, 6).view(-1).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="season=7"):
        seasonal_naive(ctx, 2, 7)


def test_count_parameters_by_hand():
    cfg = ModelConfig(dim=2, context_length=5, horizon=3, hidden=4, layers=2, n_hypotheses=3)
    lstm = 4 * (4 * 4 + 4 * 4 + 8) + 4 * (4 * 4 + 4 * 4 + 8)  # inputs 2D=4, then hidden; two biases per layer
    heads = (4 + 1) * 3 * 3 * 2 + (4 + 1) * 3
    skip = (5 + 1) * 3 * 3
    assert count_parameters(TimeMCL(cfg)) == lstm + heads + skip
    assert count_parameters(DeepARGaussian(cfg)) == lstm + (4 + 1) * 4


def test_deepar_sampling_matches_its_likelihood():
    """With H = 1 the samples must follow N(mu, std) of the one-step Gaussian the NLL scores."""
    cfg = ModelConfig(dim=2, context_length=6, horizon=1, hidden=8, layers=1)
    model = DeepARGaussian(cfg)
    ctx, _ = _windows(1, cfg)
    s = model.sample(ctx, 20000, torch.Generator().manual_seed(0))[0, :, 0]  # (S, D)
    with torch.no_grad():
        scale = mean_scale(ctx)
        out, _ = model.rnn(torch.cat([ctx / scale, scale.log().expand_as(ctx)], -1))
        mu, std = model.gaussian(out[:, -1:])
    assert torch.allclose(s.mean(0), (mu * scale)[0, 0], atol=4 * (std * scale).max().item() / 141)
    assert torch.allclose(s.std(0), (std * scale)[0, 0], rtol=0.03)
    again = model.sample(ctx, 20000, torch.Generator().manual_seed(0))[0, :, 0]
    assert torch.equal(s, again)


def test_training_is_deterministic_given_seed():
    cfg = ModelConfig(dim=2, context_length=4, horizon=2, hidden=8, layers=1, n_hypotheses=3)
    ctx, tgt = _windows(50, cfg)
    runs = [train_timemcl(ctx, tgt, cfg, TrainConfig(steps=5, batch_size=8, loss="annealed", seed=s),
                          show_progress=False)[1]["loss"] for s in (0, 0, 1)]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    d = [train_deepar(ctx, tgt, cfg, TrainConfig(steps=4, batch_size=8, seed=3), show_progress=False)[1]["loss"]
         for _ in range(2)]
    assert d[0] == d[1]


def _bimodal(n=2000, C=4, H=2, b=0.5):
    """Context: constant level a ~ U(1, 2); future: a + b or a - b with probability 1/2 each."""
    g = torch.Generator().manual_seed(0)
    a = 1 + torch.rand(n, generator=g)
    sign = torch.randint(0, 2, (n,), generator=g).float() * 2 - 1
    return a[:, None, None].expand(n, C, 1).clone(), (a + sign * b)[:, None, None].expand(n, H, 1).clone()


def test_training_k1_gives_conditional_mean_and_k2_the_two_modes():
    ctx, tgt = _bimodal()
    levels = torch.tensor([1.2, 1.5, 1.8])
    probe = levels[:, None, None].expand(3, 4, 1)
    cfg = dict(dim=1, context_length=4, horizon=2, hidden=16, layers=1, scaling=False)
    tc = TrainConfig(steps=300, lr=1e-2, batch_size=512)
    m1, _ = train_timemcl(ctx, tgt, ModelConfig(n_hypotheses=1, **cfg), tc, show_progress=False)
    with torch.no_grad():
        h1 = m1(probe)[0][:, 0, :, 0]  # (3, H)
    assert (h1 - levels[:, None]).abs().max() < 0.06  # the mean a, not one of the modes a +- 0.5
    m2, _ = train_timemcl(ctx, tgt, ModelConfig(n_hypotheses=2, **cfg), TrainConfig(steps=300, lr=1e-2, batch_size=64),
                          show_progress=False)
    with torch.no_grad():
        h2, logits = m2(probe)
    h2 = h2[..., 0].sort(dim=1).values  # (3, K, H)
    assert (h2[:, 0] - (levels[:, None] - 0.5)).abs().max() < 0.06
    assert (h2[:, 1] - (levels[:, None] + 0.5)).abs().max() < 0.06
    assert torch.allclose(score_weights(logits), torch.full((3, 2), 0.5), atol=0.05)  # equally likely modes


def test_predict_and_evaluate():
    cfg = ModelConfig(dim=2, context_length=6, horizon=3, hidden=8, layers=1, n_hypotheses=4)
    ctx, tgt = _windows(20, cfg)
    model = TimeMCL(cfg)
    hyps, w = predict("timemcl", model, ctx)
    assert hyps.shape == (20, 4, 3, 2) and np.allclose(w.sum(1), 1)
    res = evaluate_forecaster("timemcl", model, ctx, tgt)
    wins = winners(hyps, tgt.numpy())
    assert res["collapsed_heads"] == 4 - len(set(wins.tolist()))
    assert sum(res["win_counts"]) == 20 and res["n_parameters"] == count_parameters(model)
    for key in ("distortion", "crps_sum", "mixture_rmse", "inference_seconds"):
        assert np.isfinite(res[key])
    hd, wd = predict("deepar", DeepARGaussian(cfg), ctx, n_samples=5)
    assert hd.shape == (20, 5, 3, 2) and np.allclose(wd, 0.2)
    sn = evaluate_forecaster("seasonal_naive", None, ctx, tgt, season=2)
    assert sn["n_hypotheses"] == 1 and sn["n_parameters"] == 0 and "collapsed_heads" not in sn
    h_sn, _ = predict("seasonal_naive", cfg, ctx, season=2)  # horizon taken from the ModelConfig
    assert np.array_equal(h_sn[:, 0], torch.cat([ctx[:, -2:], ctx[:, -2:-1]], 1).numpy())
    with pytest.raises(ValueError, match="needs season and horizon"):
        predict("seasonal_naive", None, ctx, season=2)
    with pytest.raises(ValueError, match="kind='arima'"):
        predict("arima", None, ctx)


def test_checkpoint_round_trip():
    cfg = ModelConfig(dim=1, context_length=3, horizon=2, hidden=5, layers=1, n_hypotheses=2)
    ctx, tgt = _windows(10, cfg)
    model, hist = train_timemcl(ctx, tgt, cfg, TrainConfig(steps=2, batch_size=4), show_progress=False)
    kind, back = load_checkpoint(make_checkpoint("timemcl", model, cfg, TrainConfig(steps=2, batch_size=4), hist))
    assert kind == "timemcl"
    with torch.no_grad():
        assert torch.equal(back(ctx)[0], model(ctx)[0])
