"""Models against step-by-step reference loops; configs, scaling, sampling, training, evaluation, checkpoints."""

import math

import numpy as np
import pytest
import torch

from methods.timemcl.evaluate import evaluate_forecaster, predict, score_weights
from methods.timemcl.losses import hypothesis_errors
from methods.timemcl.metrics import winners
from methods.timemcl.model import (
    DeepARGaussian,
    ModelConfig,
    TimeMCL,
    TimeMCLOneShot,
    context_scale,
    count_parameters,
    lagged_inputs,
    mean_scale,
    mean_sigmoid_logit,
    seasonal_naive,
)
from methods.timemcl.train import (
    MODEL_CLASSES,
    TrainConfig,
    load_checkpoint,
    make_checkpoint,
    temperature_at,
    train_deepar,
    train_timemcl,
)

torch.set_num_threads(1)

SIZES = [
    dict(dim=1, context_length=1, horizon=1, n_hypotheses=1),
    dict(dim=3, context_length=5, horizon=2, n_hypotheses=4, hidden=7, layers=1, lags=(1, 7)),
    dict(dim=2, context_length=9, horizon=4, n_hypotheses=1, layers=3, lags=[1, 2, 3]),
    dict(dim=1, context_length=3, horizon=1, n_hypotheses=5, hidden=6, lags=(1, 7)),
]


def _windows(n, cfg, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.rand(n, cfg.history_length, cfg.dim, generator=g) + 0.5,
        torch.rand(n, cfg.horizon, cfg.dim, generator=g) + 0.5,
    )


def _model(cls, cfg, seed=0):
    torch.manual_seed(seed)
    return cls(cfg).double().eval()


@pytest.mark.parametrize("size", SIZES)
def test_shapes(size):
    cfg = ModelConfig.from_dict(size)
    assert cfg.history_length == cfg.context_length + max(size.get("lags", [1]))
    ctx, tgt = _windows(3, cfg)
    K, C, H, D = cfg.n_hypotheses, cfg.context_length, cfg.horizon, cfg.dim
    for cls, T in ((TimeMCL, C + H), (TimeMCLOneShot, H)):
        model = cls(cfg)
        hyps, logits = model(ctx)
        assert hyps.shape == (3, K, H, D) and logits.shape == (3, K), cls.__name__
        th, tl, ty = model.training_forward(ctx, tgt)
        assert th.shape == (3, K, T, D) and tl.shape == (3, K) and ty.shape == (3, T, D), cls.__name__
        assert torch.isfinite(hypothesis_errors(th, ty)).all()
    deepar = DeepARGaussian(cfg)
    assert deepar.sample(ctx, 5, torch.Generator().manual_seed(0)).shape == (3, 5, H, D)
    assert torch.isfinite(deepar.nll(ctx, tgt))
    with pytest.raises(AssertionError, match="context_length \\+ max\\(lags\\)"):
        TimeMCL(cfg)(ctx[:, 1:])  # a context without the lag history is refused


def test_config_validation():
    with pytest.raises(ValueError, match=r"unknown key 'hiden'.*allowed keys: dim, context_length"):
        ModelConfig.from_dict(dict(dim=1, context_length=2, horizon=1, hiden=3))
    with pytest.raises(ValueError, match=r"unknown key 'step'.*steps"):
        TrainConfig.from_dict({"step": 3})
    with pytest.raises(ValueError, match=r"loss='soft'.*wta, relaxed, annealed"):
        TrainConfig.from_dict({"loss": "soft"})
    for bad in ((2, 3), (1, 7, 7), (1, 7, 3), ()):
        with pytest.raises(AssertionError, match="lags must be strictly increasing"):
            ModelConfig(dim=1, context_length=2, horizon=1, lags=bad)
    cfg = ModelConfig.from_dict(dict(dim=1, context_length=4, horizon=1, lags=[1, 24]))
    assert cfg.lags == (1, 24) and cfg.history_length == 28  # lists from YAML become tuples


def test_default_annealing_ends_like_the_authors():
    """T = 10 * 0.95**epoch drops below 5e-4 at epoch 194 of 200: anneal 97% of the steps, then WTA."""
    cfg = TrainConfig(steps=200, loss="annealed")
    first_wta = next(s for s in range(200) if temperature_at(s, cfg) == 0.0)
    authors = next(e for e in range(200) if 10 * 0.95**e < 5e-4)
    assert first_wta == authors == 194


def test_scale_is_over_the_unrolled_context():
    ctx = torch.tensor([[[1.0, 0.0, -2.0], [3.0, 0.0, 2.0]]])  # (1, C=2, D=3)
    assert mean_scale(ctx).tolist() == [[[2.0, 1.0, 2.0]]]  # all-zero dim falls back to 1
    assert mean_scale(ctx, enabled=False).tolist() == [[[1.0, 1.0, 1.0]]]
    cfg = ModelConfig(dim=3, context_length=2, horizon=1, lags=(1, 3))
    with_history = torch.cat([torch.full((1, 3, 3), 100.0), ctx], dim=1)  # the 3 lag-only steps are ignored
    assert context_scale(with_history, cfg).tolist() == [[[2.0, 1.0, 2.0]]]
    model = TimeMCLOneShot(ModelConfig(dim=3, context_length=2, horizon=2, n_hypotheses=2)).eval()
    with torch.no_grad():
        hyps, _ = model(with_history[:, -3:])
        scaled, _, scale = model.forward_scaled(with_history[:, -3:])
    assert torch.allclose(hyps, scaled * scale.unsqueeze(1))


def test_lagged_inputs_by_hand():
    series = torch.arange(10.0).view(1, 10, 1)  # x_t = t
    scale = torch.full((1, 1, 1), math.e)
    got = lagged_inputs(series, 7, 3, (1, 3), scale)  # steps 7, 8, 9
    expected = [[6.0, 4.0, 1.0], [7.0, 5.0, 1.0], [8.0, 6.0, 1.0]]  # x_{t-1}, x_{t-3}, log scale
    assert torch.allclose(got[0], torch.tensor(expected))
    with pytest.raises(AssertionError, match="lags up to 3"):
        lagged_inputs(series, 2, 1, (1, 3), scale)


def test_mean_sigmoid_logit():
    s = torch.tensor([[-1.0, 0.5, 2.0], [100.0, 100.0, 100.0], [-100.0, 100.0, 0.0]], dtype=torch.float64)
    p = torch.sigmoid(s).mean(-1)
    got = mean_sigmoid_logit(s)
    assert got[0].item() == pytest.approx(math.log(p[0] / (1 - p[0])))
    assert got[1].item() == pytest.approx(100.0)  # finite where log(p / (1 - p)) would be inf
    assert got[2].item() == pytest.approx(0.0, abs=1e-12)  # mean probability exactly 1/2
    assert torch.allclose(torch.sigmoid(got), p)


def _step_by_step(model, context, series_rows, n_steps, head):
    """Reference recursion, one LSTM call per step: inputs x_{t-l}/scale for l in lags, log scale.

    `series_rows(t, preds)` gives the scaled value of step t (true or fed back). Returns the head's
    predictions (n_steps, D) and per-step sigmoid scores (n_steps,) after the context steps.
    """
    cfg = model.cfg
    L, C = cfg.max_lag, cfg.context_length
    scale = context_scale(context[None], cfg)[0, 0]  # (D,)
    rows = slice(head * cfg.dim, (head + 1) * cfg.dim)  # head k owns rows [kD, (k+1)D) of the stacked heads
    w, b = model.hyp_heads.weight[rows], model.hyp_heads.bias[rows]
    ws, bs = model.score_heads.weight[head], model.score_heads.bias[head]
    state, preds, scores = None, [], []
    for t in range(L, L + C + n_steps):
        x = torch.cat([series_rows(t - lag, preds) for lag in cfg.lags] + [scale.log()])
        out, state = model.backbone.rnn(x.view(1, 1, -1), state)
        if t >= L + C:
            preds.append(w @ out[0, 0] + b)
            scores.append(torch.sigmoid(ws @ out[0, 0] + bs))
    return torch.stack(preds), torch.stack(scores)


def test_teacher_forced_errors_match_a_loop_over_steps():
    # heads directly on the LSTM and log(scale) as input (the non-official options; test_parity.py
    # covers the official structure against the authors' network)
    cfg = ModelConfig(
        dim=2,
        context_length=4,
        horizon=3,
        n_hypotheses=3,
        hidden=6,
        lags=(1, 3),
        conditioning_length=0,
        scale_feature=True,
    )
    model = _model(TimeMCL, cfg)
    ctx, tgt = (t.double() for t in _windows(2, cfg, seed=1))
    with torch.no_grad():
        hyps, logits, y = model.training_forward(ctx, tgt)
        err = hypothesis_errors(hyps, y)
    L, T = cfg.max_lag, cfg.context_length + cfg.horizon
    for b in range(2):
        series = torch.cat([ctx[b], tgt[b]])  # (L + C + H, D) data units
        for k in range(3):
            scale_b = context_scale(ctx[b : b + 1], cfg)[0, 0]
            total, probs, state = 0.0, [], None
            for t in range(L, L + T):  # every unrolled step reads the true lags and predicts x_t
                x = torch.cat([series[t - lag] / scale_b for lag in cfg.lags] + [scale_b.log()])
                out, state = model.backbone.rnn(x.view(1, 1, -1), state)
                h = out[0, 0]
                pred = model.hyp_heads.weight[2 * k : 2 * k + 2] @ h + model.hyp_heads.bias[2 * k : 2 * k + 2]
                total += ((pred - series[t] / scale_b) ** 2).sum().item()  # sum over dims
                probs.append(torch.sigmoid(model.score_heads.weight[k] @ h + model.score_heads.bias[k]).item())
            assert err[b, k].item() == pytest.approx(total / T, rel=1e-9)  # then mean over steps
            assert torch.sigmoid(logits[b, k]).item() == pytest.approx(np.mean(probs), rel=1e-9)


def test_rollout_matches_a_loop_that_feeds_back_each_hypothesis():
    """Hypothesis k = head k unrolled on its own predictions from the post-context state (reset per k)."""
    cfg = ModelConfig(
        dim=2,
        context_length=3,
        horizon=4,
        n_hypotheses=3,
        hidden=5,
        lags=(1, 2),
        conditioning_length=0,
        scale_feature=True,
    )
    model = _model(TimeMCL, cfg, seed=2)
    ctx, _ = (t.double() for t in _windows(2, cfg, seed=3))
    with torch.no_grad():
        hyps, logits = model(ctx)
        for b in range(2):
            scale = context_scale(ctx[b : b + 1], cfg)[0, 0]
            n_ctx = cfg.history_length

            def value(t, preds):  # true context value, else this hypothesis' own earlier prediction
                return ctx[b, t] / scale if t < n_ctx else preds[t - n_ctx]

            for k in range(3):
                preds, scores = _step_by_step(model, ctx[b], value, cfg.horizon, k)
                assert torch.allclose(hyps[b, k], preds * scale, rtol=1e-10, atol=1e-12)
                assert torch.sigmoid(logits[b, k]).item() == pytest.approx(scores.mean().item(), rel=1e-9)


def test_rollout_feeds_back_its_own_prediction_only():
    """Shifting head 1's bias moves step 0 of hypothesis 1 by exactly that shift; later steps change
    through the fed-back value (all dims); the other hypotheses do not move at all."""
    cfg = ModelConfig(dim=2, context_length=4, horizon=3, n_hypotheses=3, hidden=6, layers=1, scaling=False)
    model = _model(TimeMCL, cfg, seed=4)
    ctx, _ = (t.double() for t in _windows(2, cfg))
    with torch.no_grad():
        before, _ = model(ctx)
        model.hyp_heads.bias[2 * 1 + 0] += 0.5  # head 1, dim 0
        after, _ = model(ctx)
    diff = after - before  # (B, K, H, D)
    assert torch.equal(diff[:, [0, 2]], torch.zeros_like(diff[:, [0, 2]]))
    assert torch.allclose(diff[:, 1, 0], torch.tensor([0.5, 0.0], dtype=diff.dtype).expand(2, 2))
    later = diff[:, 1, 1:] - torch.tensor([0.5, 0.0], dtype=diff.dtype)  # beyond the bias itself
    assert (later.abs() > 1e-6).all()


def test_first_rollout_step_equals_teacher_forcing():
    """Given the true context, step C of the teacher-forced pass is the first step of every rollout."""
    cfg = ModelConfig(dim=3, context_length=5, horizon=2, n_hypotheses=4, hidden=8, lags=(1, 3))
    ctx, tgt = (t.double() for t in _windows(3, cfg, seed=5))
    model = _model(TimeMCL, cfg)
    deepar = _model(DeepARGaussian, cfg)
    with torch.no_grad():
        hyps, _ = model(ctx)
        tf, _, _ = model.training_forward(ctx, tgt)
        scale = context_scale(ctx, cfg)
        assert torch.allclose(hyps[:, :, 0], tf[:, :, cfg.context_length] * scale, rtol=1e-10)
        series = torch.cat([ctx, tgt], 1) / scale
        mu_tf, std_tf = deepar.gaussian(deepar.backbone.teacher_forced(series, scale))
        state = deepar.backbone.encode(ctx / scale, scale)
        mu_ro, std_ro = deepar.gaussian(deepar.backbone.step(ctx / scale, scale, state)[0])
    assert torch.allclose(mu_tf[:, cfg.context_length], mu_ro) and torch.allclose(std_tf[:, cfg.context_length], std_ro)


def test_deepar_sampling_matches_its_likelihood():
    """With H = 1 the samples must follow N(mu, std) of the one-step Gaussian the NLL scores."""
    cfg = ModelConfig(dim=2, context_length=6, horizon=1, hidden=8, layers=1, lags=(1, 2))
    model = DeepARGaussian(cfg).eval()
    ctx, tgt = _windows(1, cfg)
    s = model.sample(ctx, 20000, torch.Generator().manual_seed(0))[0, :, 0]  # (S, D)
    with torch.no_grad():
        scale = context_scale(ctx, cfg)
        out = model.backbone.teacher_forced(torch.cat([ctx, tgt], 1) / scale, scale)
        mu, std = model.gaussian(out[:, -1])  # the horizon step
    assert torch.allclose(s.mean(0), (mu * scale)[0, 0], atol=4 * (std * scale).max().item() / 141)
    assert torch.allclose(s.std(0), (std * scale)[0, 0], rtol=0.03)
    assert torch.equal(s, model.sample(ctx, 20000, torch.Generator().manual_seed(0))[0, :, 0])


def test_timemcl_oneshot_heads_are_independent_linear_maps():
    """Perturbing head k's output weights changes hypothesis k only."""
    cfg = ModelConfig(dim=2, context_length=4, horizon=3, n_hypotheses=3)
    model = TimeMCLOneShot(cfg).eval()
    ctx, _ = _windows(2, cfg)
    with torch.no_grad():
        before, _ = model(ctx)
        model.hyp_heads.bias[1 * 3 * 2 : 2 * 3 * 2] += 1.0  # head 1 owns rows [H*D, 2*H*D)
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
    cfg = ModelConfig(
        dim=2,
        context_length=5,
        horizon=3,
        hidden=4,
        layers=2,
        n_hypotheses=3,
        lags=(1, 7),
        conditioning_length=0,
        scale_feature=True,
    )
    lstm = 4 * 4 * (3 * 2 + 4 + 2) + 4 * 4 * (4 + 4 + 2)  # 4 gates x hidden x (inputs + hidden + 2 biases)
    assert count_parameters(TimeMCL(cfg)) == lstm + (4 + 1) * 3 * 2 + (4 + 1) * 3  # K heads (hidden -> D), K scores
    assert count_parameters(DeepARGaussian(cfg)) == lstm + (4 + 1) * 4
    # the official structure: lags only (2 dims x 2 lags), a shared Linear(4 -> 100), heads on it
    official = ModelConfig(dim=2, context_length=5, horizon=3, hidden=4, layers=2, n_hypotheses=3, lags=(1, 7))
    lstm_off = 4 * 4 * (2 * 2 + 4 + 2) + 4 * 4 * (4 + 4 + 2)
    assert count_parameters(TimeMCL(official)) == lstm_off + (4 + 1) * 100 + (100 + 1) * 3 * 2 + (100 + 1) * 3
    oneshot_lstm = 4 * 4 * (2 * 2 + 4 + 2) + 4 * 4 * (4 + 4 + 2)
    assert count_parameters(TimeMCLOneShot(cfg)) == oneshot_lstm + (4 + 1) * 3 * 3 * 2 + (4 + 1) * 3


def test_training_is_deterministic_given_seed():
    cfg = ModelConfig(dim=2, context_length=4, horizon=2, hidden=8, n_hypotheses=3, lags=(1, 2))
    ctx, tgt = _windows(50, cfg)
    runs = [
        train_timemcl(ctx, tgt, cfg, TrainConfig(steps=5, batch_size=8, loss="annealed", seed=s), show_progress=False)[
            1
        ]["loss"]
        for s in (0, 0, 1)
    ]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    d = [
        train_deepar(ctx, tgt, cfg, TrainConfig(steps=4, batch_size=8, seed=3), show_progress=False)[1]["loss"]
        for _ in range(2)
    ]
    assert d[0] == d[1]
    with pytest.raises(ValueError, match="kind='deepar'.*timemcl, timemcl_oneshot"):
        train_timemcl(ctx, tgt, cfg, TrainConfig(steps=1), show_progress=False, kind="deepar")


def _ar1(n=3000, T=8, a=0.8, sd=0.3, seed=0):
    """Stationary AR(1) paths x_t = a x_{t-1} + sd * noise, shape (n, T, 1)."""
    g = torch.Generator().manual_seed(seed)
    x = [torch.randn(n, generator=g) * sd / math.sqrt(1 - a * a)]
    for _ in range(T - 1):
        x.append(a * x[-1] + sd * torch.randn(n, generator=g))
    return torch.stack(x, 1)[..., None]


def test_timemcl_k1_rollout_is_the_conditional_mean_of_an_ar1():
    """K = 1 learns E[x_t | x_{t-1}] = a x_{t-1} by teacher forcing; rolled out on its own predictions
    it gives E[x_{C+h} | past] = a^(h+1) x_last, which neither persistence nor the marginal mean 0 is."""
    a, C, H = 0.6, 4, 3
    paths = _ar1(a=a, T=1 + C + H)
    cfg = ModelConfig(
        dim=1, context_length=C, horizon=H, n_hypotheses=1, hidden=16, layers=1, scaling=False, conditioning_length=0
    )  # heads on the LSTM: this learning budget was set for them
    model, _ = train_timemcl(
        paths[:, : 1 + C], paths[:, 1 + C :], cfg, TrainConfig(steps=800, lr=1e-2, batch_size=256), show_progress=False
    )
    last = torch.tensor([-0.8, -0.3, 0.2, 0.7])
    probe = _ar1(n=4, T=1 + C, a=a, seed=1)
    probe[:, -1, 0] = last
    with torch.no_grad():
        hyps = model(probe)[0][:, 0, :, 0]  # (4, H)
    expected = last[:, None] * a ** torch.arange(1, H + 1)
    assert (hyps - expected).abs().max() < 0.1
    assert (expected - last[:, None]).abs().max() > 0.5 and expected.abs().max() > 0.4  # what the alternatives miss by


def _bimodal(n=2000, C=4, H=2, b=0.5):
    """Context: constant level a ~ U(1, 2); future: a + b or a - b with probability 1/2 each."""
    g = torch.Generator().manual_seed(0)
    a = 1 + torch.rand(n, generator=g)
    sign = torch.randint(0, 2, (n,), generator=g).float() * 2 - 1
    return a[:, None, None].expand(n, C, 1).clone(), (a + sign * b)[:, None, None].expand(n, H, 1).clone()


LEVELS = torch.tensor([1.2, 1.5, 1.8])


def _two_modes_error(model, C):
    """Max distance of the sorted K = 2 hypotheses to the modes a - 0.5 and a + 0.5, and the score weights."""
    with torch.no_grad():
        hyps, logits = model(LEVELS[:, None, None].expand(3, C + 1, 1))
    hyps = hyps[..., 0].sort(dim=1).values  # (3, K, H)
    modes = torch.stack([LEVELS - 0.5, LEVELS + 0.5], 1)[:, :, None]  # (3, 2, 1)
    return (hyps - modes).abs().max().item(), score_weights(logits)


def test_oneshot_k1_gives_the_conditional_mean_and_k2_the_two_modes():
    C, H = 3, 2
    ctx, tgt = _bimodal(C=C + 1, H=H)  # lag 1: one step of history before the C unrolled ones
    cfg = dict(dim=1, context_length=C, horizon=H, hidden=16, layers=1, scaling=False)
    m1, _ = train_timemcl(
        ctx,
        tgt,
        ModelConfig(n_hypotheses=1, **cfg),
        TrainConfig(steps=300, lr=1e-2, batch_size=256),
        show_progress=False,
        kind="timemcl_oneshot",
    )
    with torch.no_grad():
        h1 = m1(LEVELS[:, None, None].expand(3, C + 1, 1))[0][:, 0, :, 0]  # (3, H)
    assert (h1 - LEVELS[:, None]).abs().max() < 0.1  # the mean a, not one of the modes a +- 0.5
    m2, _ = train_timemcl(
        ctx,
        tgt,
        ModelConfig(n_hypotheses=2, **cfg),
        TrainConfig(steps=300, lr=1e-2, batch_size=64),
        show_progress=False,
        kind="timemcl_oneshot",
    )
    err, weights = _two_modes_error(m2, C)
    assert err < 0.1
    assert torch.allclose(weights, torch.full((3, 2), 0.5), atol=0.05)  # equally likely modes


def test_timemcl_k2_rollouts_are_the_two_modes():
    """The autoregressive model, teacher forced with annealed WTA, rolls out one mode per head.

    No check on the score weights: the authors' inference score averages the per-step sigmoid over
    the rollout steps only, while training fits the average over context + horizon steps, so the
    per-step scores are not calibrated one by one and the weights need not be 1/2 here."""
    C, H = 3, 2
    ctx, tgt = _bimodal(C=C + 1, H=H)
    cfg = ModelConfig(
        dim=1, context_length=C, horizon=H, hidden=16, layers=1, scaling=False, n_hypotheses=2, conditioning_length=0
    )  # heads on the LSTM: this learning budget was set for them
    model, _ = train_timemcl(
        ctx, tgt, cfg, TrainConfig(steps=800, lr=1e-2, batch_size=128, loss="annealed"), show_progress=False
    )
    assert _two_modes_error(model, C)[0] < 0.1


def test_predict_and_evaluate():
    cfg = ModelConfig(dim=2, context_length=6, horizon=3, hidden=8, layers=2, n_hypotheses=4, lags=(1, 3))
    ctx, tgt = _windows(20, cfg)
    for cls in (TimeMCL, TimeMCLOneShot):
        model = cls(cfg)  # left in train mode: predict must switch dropout off
        hyps, w = predict("timemcl", model, ctx)
        assert hyps.shape == (20, 4, 3, 2) and np.allclose(w.sum(1), 1)
        assert np.array_equal(hyps, predict("timemcl", model, ctx)[0])
        res = evaluate_forecaster("timemcl", model, ctx, tgt)
        wins = winners(hyps, tgt.numpy())
        assert res["collapsed_heads"] == 4 - len(set(wins.tolist()))
        assert sum(res["win_counts"]) == 20 and res["n_parameters"] == count_parameters(model)
        for key in ("distortion", "crps_sum", "mixture_rmse", "inference_seconds"):
            assert np.isfinite(res[key])
    hd, wd = predict("deepar", DeepARGaussian(cfg), ctx, n_samples=5)
    assert hd.shape == (20, 5, 3, 2) and np.allclose(wd, 0.2)
    with pytest.raises(TypeError, match="kind='timemcl' needs a TimeMCL or TimeMCLOneShot, got DeepARGaussian"):
        predict("timemcl", DeepARGaussian(cfg), ctx)
    sn = evaluate_forecaster("seasonal_naive", None, ctx, tgt, season=2)
    assert sn["n_hypotheses"] == 1 and sn["n_parameters"] == 0 and "collapsed_heads" not in sn
    h_sn, _ = predict("seasonal_naive", cfg, ctx, season=2)  # horizon taken from the ModelConfig
    assert np.array_equal(h_sn[:, 0], torch.cat([ctx[:, -2:], ctx[:, -2:-1]], 1).numpy())
    with pytest.raises(ValueError, match="needs season and horizon"):
        predict("seasonal_naive", None, ctx, season=2)
    with pytest.raises(ValueError, match="kind='arima'"):
        predict("arima", None, ctx)


@pytest.mark.parametrize("kind", sorted(MODEL_CLASSES))
def test_checkpoint_round_trip(kind):
    cfg = ModelConfig(dim=2, context_length=3, horizon=2, hidden=5, n_hypotheses=2, lags=(1, 2))
    ctx, tgt = _windows(10, cfg)
    tc = TrainConfig(steps=2, batch_size=4)
    if kind == "deepar":
        model, hist = train_deepar(ctx, tgt, cfg, tc, show_progress=False)
    else:
        model, hist = train_timemcl(ctx, tgt, cfg, tc, show_progress=False, kind=kind)
    ckpt = make_checkpoint(kind, model, cfg, tc, hist)
    ckpt["model_config"]["lags"] = list(ckpt["model_config"]["lags"])  # as a JSON/YAML round trip would leave it
    back_kind, back = load_checkpoint(ckpt)
    assert back_kind == kind and type(back) is MODEL_CLASSES[kind] and back.cfg == cfg and not back.training
    with torch.no_grad():
        if kind == "deepar":
            same = torch.equal(
                back.sample(ctx, 3, torch.Generator().manual_seed(1)),
                model.sample(ctx, 3, torch.Generator().manual_seed(1)),
            )
        else:
            same = torch.equal(back(ctx)[0], model(ctx)[0]) and torch.equal(back(ctx)[1], model(ctx)[1])
    assert same
    other = "deepar" if kind != "deepar" else "timemcl"
    with pytest.raises(ValueError, match=f"kind='{other}' does not name the class of {type(model).__name__}"):
        make_checkpoint(other, model, cfg, tc, hist)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (full-scale training device)")
def test_training_on_the_gpu_matches_the_cpu_run():
    """Full scale trains on the GPU: same loss curve as the CPU run up to float noise, model returned on the CPU."""
    cfg = ModelConfig(dim=2, context_length=4, horizon=2, hidden=8, n_hypotheses=3, lags=(1, 2), dropout=0.0)
    ctx, tgt = _windows(50, cfg)
    tc = TrainConfig(steps=5, batch_size=8, loss="relaxed", seed=0)
    cpu = train_timemcl(ctx, tgt, cfg, tc, show_progress=False, device=torch.device("cpu"))
    gpu = train_timemcl(ctx, tgt, cfg, tc, show_progress=False, device=torch.device("cuda"))
    assert next(gpu[0].parameters()).device.type == "cpu"
    np.testing.assert_allclose(gpu[1]["loss"], cpu[1]["loss"], rtol=1e-3)
