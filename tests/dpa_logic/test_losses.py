"""Each decompiled loss against its closed form; the losses without a structure; gradients."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from methods.dpa_logic import losses
from methods.dpa_logic.losses import LOSSES, closed_form, compiled_loss, random_batch


@pytest.mark.parametrize("name", losses.known_structure_names())
def test_compiled_equals_closed_form(name):
    batch = random_batch(2000, seed=7)
    c, f = compiled_loss(name, batch), closed_form(name, batch)
    assert torch.allclose(c, f, rtol=1e-9, atol=1e-12), float((c - f).abs().max())


@pytest.mark.parametrize(
    "name,hp",
    [("dpo", {"beta": 0.5}), ("simpo", {"beta": 2.5, "gamma": 1.4}), ("orpo", {"lam": 0.3}), ("cpo", {"beta": 1.0})],
)
def test_compiled_equals_closed_form_other_hyperparameters(name, hp):
    batch = random_batch(500, seed=8)
    assert torch.allclose(compiled_loss(name, batch, hp), closed_form(name, batch, hp), rtol=1e-9, atol=1e-12)


def test_dpo_closed_form_is_the_textbook_one():
    """DPO by hand on one pair, independent of both code paths."""
    batch = {
        k: torch.tensor([v], dtype=torch.float64)
        for k, v in {
            "logp_w": -10.0,
            "logp_l": -12.0,
            "ref_w": -11.0,
            "ref_l": -11.5,
            "len_w": 5.0,
            "len_l": 6.0,
        }.items()
    }
    beta = 0.1
    by_hand = np.log1p(np.exp(-beta * ((-10.0 + 11.0) - (-12.0 + 11.5))))
    assert float(compiled_loss("dpo", batch)) == pytest.approx(by_hand, rel=1e-13)
    assert float(compiled_loss("dpo_odds", batch)) == pytest.approx(by_hand, rel=1e-13)


def test_changing_a_structure_breaks_the_match():
    """The check can fail: ORPO's structure is not CPO's loss."""
    batch = random_batch(200, seed=9)
    orpo_on_seq = losses.semantic_loss(
        losses.STRUCTURES["orpo"], torch.stack([0.1 * batch["logp_w"], 0.1 * batch["logp_l"]], -1)
    )
    assert not torch.allclose(orpo_on_seq, closed_form("cpo_pref", batch), rtol=1e-6)


def test_no_structure_losses():
    batch = random_batch(10, seed=1)
    for name in ("ipo", "slic"):
        with pytest.raises(ValueError, match="no exact preference structure"):
            compiled_loss(name, batch)
        assert LOSSES[name].reason
    rho = torch.linspace(-3, 12, 100, dtype=torch.float64)
    semantic = F.softplus(-rho)
    assert torch.all(semantic[1:] < semantic[:-1]) and torch.all(semantic > 0)
    ipo = (rho - 1 / (2 * LOSSES["ipo"].hparams["tau"])) ** 2
    assert torch.any(ipo[1:] > ipo[:-1])


def test_simpo_margin_must_be_nonnegative():
    with pytest.raises(ValueError, match="gamma"):
        compiled_loss("simpo", random_batch(3, 0), {"gamma": -0.1})


def test_both_false_roles():
    expected = {
        "dpo": False,
        "cpo_pref": False,
        "orpo_or": False,
        "simpo": False,
        "orpo_lenient": False,
        "cpo": True,
        "orpo": True,
        "unlikelihood": True,
        "sft": True,
        "dpo_strict": True,
        "orpo_strict": True,
    }
    assert {k: losses.both_false_excluded(k) for k in expected} == expected


@pytest.mark.parametrize("name", losses.known_structure_names())
def test_gradients_finite(name):
    batch = random_batch(64, seed=3)
    batch["logp_w"].requires_grad_(True)
    compiled_loss(name, batch).sum().backward()
    assert torch.isfinite(batch["logp_w"].grad).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_log1mexp_has_finite_gradients_as_log_p_goes_to_zero(dtype):
    """log(1 - e^x) near x = 0: torch.where used to evaluate log1p(-exp(x)) on the discarded branch, which
    is -inf once exp(x) rounds to 1 (x > -6e-8 in float32, x > -1.1e-16 in float64) and turned the
    gradient into 0 * inf = NaN. Values and gradients -e^x / (1 - e^x) against 50-digit mpmath."""
    import mpmath

    from methods.dpa_logic.logic import log1mexp

    mpmath.mp.dps = 50

    xs = [-1e-20, -1e-12, -1e-9, -5e-8, -1e-7, -1e-3, -0.5, -0.69, -0.7, -3.0, -40.0, -200.0]
    x = torch.tensor(xs, dtype=dtype, requires_grad=True)
    y = log1mexp(x)
    y.sum().backward()
    assert torch.isfinite(y).all() and torch.isfinite(x.grad).all()
    xr = x.detach().double().tolist()  # the values as rounded to dtype
    ref = [float(mpmath.log(1 - mpmath.exp(v))) for v in xr]
    dref = [float(-mpmath.exp(v) / (1 - mpmath.exp(v))) for v in xr]
    rtol = 1e-6 if dtype == torch.float32 else 1e-12
    assert y.detach().double().tolist() == pytest.approx(ref, rel=rtol, abs=1e-30)
    assert x.grad.double().tolist() == pytest.approx(dref, rel=rtol * 10, abs=1e-30)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "name, batch",
    [
        # DPO (p = pi^beta) with the winner almost certain: log pi(y_w) = -1e-7
        ("dpo", {"logp_w": -1e-7, "logp_l": -5.0, "ref_w": -1.0, "ref_l": -4.0}),
        # DPO through the odds reference with the policy 170 nats above the reference at beta = 0.1:
        # log sigma(17) ~ -4e-8, whose log(1 - p) underflowed the discarded branch
        ("dpo_odds", {"logp_w": -10.0, "logp_l": -20.0, "ref_w": -180.0, "ref_l": -21.0}),
        ("unlikelihood", {"logp_w": -2.0, "logp_l": -1e-9, "ref_w": -2.0, "ref_l": -1.0}),
    ],
)
def test_compiled_losses_train_with_finite_gradients_at_extreme_probabilities(dtype, name, batch):
    b = {k: torch.tensor([v], dtype=dtype, requires_grad=k.startswith("logp")) for k, v in batch.items()}
    b.update(len_w=torch.tensor([3.0], dtype=dtype), len_l=torch.tensor([4.0], dtype=dtype))
    loss = compiled_loss(name, b)
    loss.sum().backward()
    assert torch.isfinite(loss).all()
    assert torch.isfinite(b["logp_w"].grad).all() and torch.isfinite(b["logp_l"].grad).all()
    # and the gradient equals the closed form's (its own formula, no logic involved)
    c = {k: v.detach().double().requires_grad_(k.startswith("logp")) for k, v in b.items()}
    closed_form(name, c).sum().backward()
    tol = 1e-3 if dtype == torch.float32 else 1e-9
    assert float(b["logp_w"].grad) == pytest.approx(float(c["logp_w"].grad), rel=tol, abs=1e-12)
    assert float(b["logp_l"].grad) == pytest.approx(float(c["logp_l"].grad), rel=tol, abs=1e-12)
