"""CFDG method pieces against independently computed references."""

import math

import numpy as np
import pytest
import torch
from scipy import optimize, stats

from methods.cfdg.data import generate_dataset, load_d4rl_npz, split_matrix, transitions_matrix
from methods.cfdg.diffusion import NULL, OFFLINE, ONLINE, TransitionDiffusion, cosine_alpha_bar
from methods.cfdg.envs import PendulumVec, pendulum_expert, rollout, scripted_policy
from methods.cfdg.iql import IQLEnsemble, expectile_loss
from methods.cfdg.metrics import paired_t_interval, rbf_mmd2
from methods.cfdg.o2o import sample_rows

DIFF = dict(hidden=[16, 16], time_dim=8, n_steps=6, lr=1e-3, clip_x0=5.0)
IQL = dict(hidden=[8], lr=1e-2, expectile=0.7, beta=3.0, discount=0.99, target_rate=0.005)


def _diffusion(n_members=3, dim=5, seed=0):
    model = TransitionDiffusion(n_members, dim, DIFF, torch.Generator().manual_seed(seed))
    data = [np.random.default_rng(i).normal(size=(50, dim)).astype(np.float32) for i in range(n_members)]
    model.fit(data, [np.zeros(50, int)] * n_members, np.full(n_members, 0.5), 2, 8, np.random.default_rng(0))
    return model


def test_guided_eps_is_the_cfg_combination_and_w0_is_the_conditional_model():
    model = _diffusion()
    z = torch.randn(3, 4, 5)
    t = torch.randint(0, 6, (3, 4))
    lab = torch.full((3, 4), ONLINE)
    cond = model.eps(z, t, lab)
    uncond = model.eps(z, t, torch.full_like(lab, NULL))
    assert not torch.allclose(cond, uncond)
    w = torch.tensor([0.0, 1.0, 3.0])
    g = model.guided_eps(z, t, lab, w)
    assert torch.equal(g[0], cond[0])
    for i in (1, 2):
        torch.testing.assert_close(g[i], (1 + w[i]) * cond[i] - w[i] * uncond[i])


def test_sampler_with_w0_equals_sampling_the_conditional_model():
    model = _diffusion()
    labels = np.array([[ONLINE] * 7, [OFFLINE] * 7, [ONLINE] * 7])
    guided = model.sample(labels, np.zeros(3), noise_gen=torch.Generator().manual_seed(5))
    # Independent ancestral sampler that only ever calls the conditional network.
    gen = torch.Generator().manual_seed(5)
    lab = torch.as_tensor(labels)
    z = torch.randn((3, 7, 5), generator=gen)
    ab = cosine_alpha_bar(6).double()
    torch.set_grad_enabled(False)
    for i in reversed(range(6)):
        e = model.eps(z, torch.full((3, 7), i), lab).double()
        prev = ab[i - 1] if i > 0 else torch.tensor(1.0, dtype=torch.float64)
        beta = 1 - ab[i] / prev
        x0 = ((z.double() - (1 - ab[i]).sqrt() * e) / ab[i].sqrt()).clamp(-5, 5)
        # posterior q(z_{t-1} | z_t, x0) mean (Ho et al. eq. 7)
        mean = (prev.sqrt() * beta / (1 - ab[i])) * x0 + ((1 - beta).sqrt() * (1 - prev) / (1 - ab[i])) * z.double()
        noise = torch.randn(z.shape, generator=gen) if i > 0 else 0
        z = (mean + (beta * (1 - prev) / (1 - ab[i])).sqrt() * noise).float() if i > 0 else mean.float()
    torch.set_grad_enabled(True)
    ref = model.norm.decode(z).numpy()
    ref[..., -1] = ref[..., -1] > 0.5
    np.testing.assert_allclose(guided, ref, rtol=1e-4, atol=1e-4)


def test_label_dropout_one_ignores_labels():
    """p_uncond = 1 (the SynthER-style model): the loss never sees the true label."""
    model = _diffusion(n_members=1)
    x0 = torch.randn(1, 32, 5)
    torch.manual_seed(0)
    g1 = torch.Generator().manual_seed(3)
    model.gen = g1
    a = model.loss(x0, torch.full((1, 32), ONLINE), torch.tensor([1.0]))
    g2 = torch.Generator().manual_seed(3)
    model.gen = g2
    b = model.loss(x0, torch.full((1, 32), OFFLINE), torch.tensor([1.0]))
    assert a.item() == b.item()


def test_expectile_loss_hand_computed():
    u = torch.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    expected = torch.tensor([0.3 * 4, 0.3 * 0.25, 0.0, 0.7 * 1, 0.7 * 9])
    torch.testing.assert_close(expectile_loss(u, 0.7), expected)


def test_expectile_loss_minimiser_is_the_expectile():
    """argmin_v mean L2_tau(x - v) solves tau E[(x - v)+] = (1 - tau) E[(v - x)+] (Newey & Powell)."""
    x = np.random.default_rng(0).exponential(size=400)
    tau = 0.8
    v_loss = optimize.minimize_scalar(
        lambda v: float(expectile_loss(torch.tensor(x - v), tau).mean()),
        bounds=(0, 10),
        method="bounded",
        options={"xatol": 1e-9},
    ).x
    v_root = optimize.brentq(
        lambda v: tau * np.maximum(x - v, 0).mean() - (1 - tau) * np.maximum(v - x, 0).mean(), 0, 10
    )
    assert abs(v_loss - v_root) < 1e-5 and v_root > np.mean(x)


def test_iql_members_are_independent():
    """Member 1's parameters get no gradient from member 0's data: E agents = E separate IQL runs."""
    gen = torch.Generator().manual_seed(0)
    agent = IQLEnsemble(2, 3, 1, IQL, gen)
    before = {k: v.clone() for k, v in agent.v.state_dict().items()}
    batch = {
        "obs": torch.randn(2, 4, 3),
        "act": torch.rand(2, 4, 1) * 2 - 1,
        "rew": torch.randn(2, 4),
        "next_obs": torch.randn(2, 4, 3),
        "done": torch.zeros(2, 4),
    }
    agent.opt.zero_grad()
    s, a = batch["obs"], batch["act"]
    loss = -agent.log_prob(s, a)[0].mean() + agent.v(s)[0].sum()
    loss.backward()
    assert agent.v.net[0].weight.grad[1].abs().sum() == 0 and agent.v.net[0].weight.grad[0].abs().sum() > 0
    agent.opt.zero_grad(set_to_none=True)
    agent.update(batch)
    assert not torch.equal(before["net.0.weight"], agent.v.state_dict()["net.0.weight"])


def test_pendulum_step_hand_computed():
    env = PendulumVec(1, 0)
    env.reset()
    env.th[:], env.thdot[:] = math.pi / 2, 0.0
    obs, r, term, trunc = env.step(np.array([[0.5]]))  # torque 1
    # thdot' = (3 g / 2 l sin th + 3 u / m l^2) dt = (15 + 3) 0.05 = 0.9; th' = pi/2 + 0.045
    np.testing.assert_allclose(obs[0], [math.cos(math.pi / 2 + 0.045), math.sin(math.pi / 2 + 0.045), 0.9])
    assert r[0] == pytest.approx(-((math.pi / 2) ** 2 + 0.001))
    assert not term[0] and not trunc[0]


def test_predict_agrees_with_the_simulator():
    env = PendulumVec(6, 1)
    obs = env.reset()
    act = np.random.default_rng(0).uniform(-1, 1, (6, 1))
    nxt, r, _, _ = env.step(act)
    p_next, p_r = PendulumVec.predict(obs, act)
    np.testing.assert_allclose(p_next, nxt, atol=1e-12)
    np.testing.assert_allclose(p_r, r, atol=1e-12)


def test_rollouts_reproducible_by_seed():
    pol = {"noise": 0.3, "random_prob": 0.2}
    a, ra = generate_dataset("pendulum", pol, 800, 2, seed=4)
    b, rb = generate_dataset("pendulum", pol, 800, 2, seed=4)
    c, _ = generate_dataset("pendulum", pol, 800, 2, seed=5)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    np.testing.assert_array_equal(ra, rb)
    assert not np.array_equal(a["obs"], c["obs"])
    assert len(ra) == 2 * 800 // 2 // 200


def test_expert_beats_random():
    _, r_exp = rollout(PendulumVec(8, 0), pendulum_expert, 400)
    _, r_rand = rollout(
        PendulumVec(8, 0), scripted_policy({"noise": 0, "random_prob": 1}, np.random.default_rng(0)), 400
    )
    assert r_exp.mean() > -300 > -900 > r_rand.mean()


def test_transition_matrix_round_trip():
    d, _ = generate_dataset("pendulum", {"noise": 0.1, "random_prob": 0}, 400, 2, 0)
    back = split_matrix(transitions_matrix(d), 3, 1)
    for k in d:
        np.testing.assert_allclose(back[k].reshape(d[k].shape), d[k], rtol=1e-6, atol=1e-5)


def test_unbiased_mmd_against_loop():
    rng = np.random.default_rng(0)
    x, y, h = rng.normal(size=(6, 2)), rng.normal(1, 1, size=(5, 2)), 0.7
    k = lambda a, b: math.exp(-np.sum((a - b) ** 2) / (2 * h * h))  # noqa: E731
    xx = sum(k(x[i], x[j]) for i in range(6) for j in range(6) if i != j) / 30
    yy = sum(k(y[i], y[j]) for i in range(5) for j in range(5) if i != j) / 20
    xy = sum(k(a, b) for a in x for b in y) / 30
    assert rbf_mmd2(x, y, h) == pytest.approx(xx + yy - 2 * xy, abs=1e-12)


def t_interval(diff: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The hand-written paired interval the pipeline used before scipy's ttest_rel: mean +- t_{n-1} sd / sqrt(n)."""
    n = len(diff)
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * diff.std(ddof=1) / np.sqrt(n))
    return diff.mean() - half, diff.mean() + half


def test_paired_t_interval_matches_the_t_distribution():
    d = np.array([1.0, 3.0, -0.5, 2.0, 4.0])
    mean, lo, hi = paired_t_interval(d, np.zeros(5))
    ref = stats.t.interval(0.95, 4, loc=d.mean(), scale=stats.sem(d))
    assert (lo, hi) == pytest.approx(ref) and mean == pytest.approx(1.9)


def test_paired_t_interval_equals_scipy_ttest_rel():
    """scipy.stats.ttest_rel(a, b).confidence_interval() gives the hand-written paired interval on a fixed case."""
    a = np.array([13.0, 12.0, 14.0, 9.5, 11.0])
    b = np.array([10.0, 12.5, 11.0, 10.0, 9.0])
    mean, lo, hi = paired_t_interval(a, b)
    assert (lo, hi) == pytest.approx(t_interval(a - b), rel=1e-12) and mean == pytest.approx(np.mean(a - b))
    assert all(math.isnan(x) for x in paired_t_interval(a[:1], b[:1])[1:])  # one seed: no interval


def test_batches_mix_synthetic_rows_only_for_augmented_agents():
    x_off = np.zeros((10, 3), np.float32)
    online = np.ones((3, 5, 3), np.float32)
    synthetic = np.full((3, 4, 3), 7.0, np.float32)
    rows = sample_rows(np.random.default_rng(0), x_off, online, 5, synthetic, np.array([0, 2, 3]), 6)
    assert not (rows[0] == 7).any()
    assert (rows[1, :2] == 7).all() and not (rows[1, 2:] == 7).any()
    assert (rows[2, :3] == 7).all() and not (rows[2, 3:] == 7).any()
    # with n_on = 0 the real rows are offline only
    rows = sample_rows(np.random.default_rng(0), x_off, online, 0, None, np.zeros(3, int), 50)
    assert (rows == 0).all()


def test_local_d4rl_npz_loads_and_bad_file_is_named(tmp_path):
    path = tmp_path / "halfcheetah-medium.npz"
    rng = np.random.default_rng(0)
    np.savez(
        path,
        observations=rng.normal(size=(20, 17)),
        actions=rng.normal(size=(20, 6)),
        rewards=rng.normal(size=20),
        next_observations=rng.normal(size=(20, 17)),
        terminals=np.zeros(20),
    )
    d = load_d4rl_npz(path)
    assert transitions_matrix(d).shape == (20, 17 + 6 + 1 + 17 + 1)
    np.savez(tmp_path / "bad.npz", observations=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="lacks arrays"):
        load_d4rl_npz(tmp_path / "bad.npz")
    with pytest.raises(FileNotFoundError, match="cfdg.datasets"):
        load_d4rl_npz(tmp_path / "missing.npz")


def test_standardiser_drops_the_columns_constant_in_the_reference():
    """A column that never varies in the held-out data (Bullet's planar Hopper: lateral velocity, roll) carries
    no distance: standardised by its zero sd, a generator's round-off there would swamp every other column."""
    from methods.cfdg.quality import standardiser

    rng = np.random.default_rng(0)
    ref = np.c_[rng.normal(2.0, 3.0, (50, 2)), np.ones(50), rng.normal(size=50), np.zeros(50)]  # last: done flag
    z, keep = standardiser(ref, 4)
    np.testing.assert_array_equal(keep, [0, 1, 3])
    x = np.c_[rng.normal(size=(7, 2)), 1.0 + 1e-5 * rng.normal(size=7), rng.normal(size=7), np.ones(7)]
    cols = ref[:, [0, 1, 3]]
    np.testing.assert_allclose(z(x), (x[:, [0, 1, 3]] - cols.mean(0)) / cols.std(0))
    z_all, keep_all = standardiser(np.delete(ref, 2, axis=1), 3)  # no constant column: every column, plain z
    assert len(keep_all) == 3
    np.testing.assert_allclose(z_all(np.delete(x, 2, axis=1)), z(x))
