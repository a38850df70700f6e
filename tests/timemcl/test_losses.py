"""TimeMCL losses against brute-force loops and closed forms."""

import math

import pytest
import torch

from methods.timemcl.losses import annealing_temperature, hypothesis_errors, mcl_loss, score_loss, wta_weights

torch.set_num_threads(1)


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_hypothesis_errors_match_loop():
    """The authors' cost: squared error summed over the D dims, averaged over the T steps."""
    pred, target = _rand(3, 4, 5, 2, seed=1), _rand(3, 5, 2, seed=2)
    err = hypothesis_errors(pred, target)
    for b in range(3):
        for k in range(4):
            per_step = [sum((pred[b, k, t, d] - target[b, t, d]) ** 2 for d in range(2)) for t in range(5)]
            assert err[b, k].item() == pytest.approx(sum(per_step).item() / 5)
    # D copies of a one-dim problem cost D times as much (a mean over dims would not change)
    wide = hypothesis_errors(pred[..., :1].expand(-1, -1, -1, 3), target[..., :1].expand(-1, -1, 3))
    assert torch.allclose(wide, 3 * hypothesis_errors(pred[..., :1], target[..., :1]))


def test_wta_loss_is_mean_of_min():
    err = _rand(6, 5, seed=3).abs()
    brute = sum(min(err[b].tolist()) for b in range(6)) / 6
    assert mcl_loss(err, "wta").item() == pytest.approx(brute)
    w = wta_weights(err, "wta")
    for b in range(6):
        expected = [1.0 if k == int(err[b].argmin()) else 0.0 for k in range(5)]
        assert w[b].tolist() == expected


def test_relaxed_weights_and_authors_formula():
    eps, K = 0.05, 4
    err = _rand(7, K, seed=4).abs()
    w = wta_weights(err, "relaxed", eps=eps)
    assert torch.allclose(w.sum(1), torch.ones(7, dtype=w.dtype))
    for b in range(7):
        win = int(err[b].argmin())
        assert w[b, win].item() == pytest.approx(1 - eps)
        assert all(w[b, k].item() == pytest.approx(eps / (K - 1)) for k in range(K) if k != win)
    # authors' way of writing it: (1 - eps K/(K-1)) * winner + eps/(K-1) * sum over all
    authors = ((1 - eps * K / (K - 1)) * err.min(1).values + eps / (K - 1) * err.sum(1)).mean()
    assert mcl_loss(err, "relaxed", eps=eps).item() == pytest.approx(authors.item())


def test_annealed_limits_and_softmax():
    err = _rand(5, 6, seed=5).abs()
    assert torch.equal(wta_weights(err, "annealed", temperature=1e-6), wta_weights(err, "wta"))
    assert torch.equal(wta_weights(err, "annealed", temperature=0.0), wta_weights(err, "wta"))
    # uniform weights 1/K; the authors' annealed branch then averages over K too (a second 1/K)
    K = err.shape[1]
    assert mcl_loss(err, "annealed", temperature=1e9).item() == pytest.approx(err.mean().item() / K, rel=1e-6)
    assert mcl_loss(err, "annealed", temperature=1e9, annealed_mean_over_k=False).item() == pytest.approx(
        err.mean().item(), rel=1e-6
    )
    # at T = 0 (after annealing) it is plain WTA whatever the reduction
    assert mcl_loss(err, "annealed", temperature=0.0).item() == pytest.approx(err.min(1).values.mean().item())
    T = 0.7
    for b in range(5):
        z = [math.exp(-e / T) for e in err[b].tolist()]
        ref = [v / sum(z) for v in z]
        assert wta_weights(err, "annealed", temperature=T)[b].tolist() == pytest.approx(ref)


@pytest.mark.parametrize("kind", ["wta", "relaxed", "annealed"])
def test_weights_are_detached(kind):
    err = _rand(4, 3, seed=6).abs().requires_grad_(True)
    mcl_loss(err, kind, eps=0.1, temperature=0.5).backward()
    # the gradient is exactly w / B (annealed: w / (B K), the authors' mean over K): no derivative
    # flows through the weights
    per_k = 3 if kind == "annealed" else 1
    assert torch.allclose(err.grad, wta_weights(err, kind, eps=0.1, temperature=0.5) / 4 / per_k)


@pytest.mark.parametrize("kind", ["wta", "relaxed", "annealed"])
def test_single_hypothesis(kind):
    err = _rand(5, 1, seed=7).abs()
    assert torch.equal(wta_weights(err, kind, temperature=1.0), torch.ones(5, 1, dtype=err.dtype))
    assert mcl_loss(err, kind, temperature=1.0).item() == pytest.approx(err.mean().item())


def test_unknown_kind_names_argument_and_choices():
    with pytest.raises(ValueError, match=r"kind='soft'.*wta, relaxed, annealed"):
        wta_weights(torch.ones(2, 2), "soft")
    with pytest.raises(ValueError, match="kind"):
        mcl_loss(torch.ones(2, 2), "nope")


def test_score_loss_is_bce_against_winner():
    err, logits = _rand(6, 3, seed=8).abs(), _rand(6, 3, seed=9)
    total = 0.0
    for b in range(6):
        win = int(err[b].argmin())
        for k in range(3):
            p = 1 / (1 + math.exp(-logits[b, k].item()))
            total += -math.log(p) if k == win else -math.log(1 - p)
    assert score_loss(logits, err).item() == pytest.approx(total / 18)


def test_annealing_schedule_is_geometric_then_zero():
    temps = [annealing_temperature(s, 100, 10.0, 5e-4) for s in range(101)]
    assert temps[0] == pytest.approx(10.0)
    assert temps[100] == 0.0 and annealing_temperature(500, 100) == 0.0
    ratios = [temps[s + 1] / temps[s] for s in range(99)]
    assert ratios == pytest.approx([(5e-4 / 10.0) ** 0.01] * 99)
    assert temps[99] > 5e-4  # the last annealed step is still above t_end
    assert annealing_temperature(3, 0) == 0.0  # no annealing phase: pure WTA


def test_wta_minimiser_is_the_two_point_quantizer():
    """Free hypotheses trained by WTA on a two-point law {-1, +3} land on the two atoms;
    K = 1 lands on the mean; relaxed WTA lands on the closed-form biased optimum."""
    data = torch.tensor([-1.0, 3.0]).repeat(32).view(-1, 1, 1)  # (B, H=1, D=1)

    def fit(kind, init, steps=600):
        h = torch.tensor(init).view(1, -1, 1, 1).requires_grad_(True)
        opt = torch.optim.Adam([h], lr=0.05)
        for _ in range(steps):
            loss = mcl_loss(hypothesis_errors(h.expand(len(data), -1, 1, 1), data), kind, eps=0.1)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return sorted(h.detach().view(-1).tolist())

    assert fit("wta", [0.5]) == pytest.approx([1.0], abs=1e-2)
    assert fit("wta", [0.0, 1.0]) == pytest.approx([-1.0, 3.0], abs=1e-2)
    # relaxed: each head minimises 0.9 (x - own atom)^2 + 0.1 (x - other atom)^2
    assert fit("relaxed", [0.0, 1.0]) == pytest.approx([-1 + 0.1 * 4, 3 - 0.1 * 4], abs=1e-2)
