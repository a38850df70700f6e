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


@pytest.mark.parametrize("name,hp", [("dpo", {"beta": 0.5}), ("simpo", {"beta": 2.5, "gamma": 1.4}),
                                     ("orpo", {"lam": 0.3}), ("cpo", {"beta": 1.0})])
def test_compiled_equals_closed_form_other_hyperparameters(name, hp):
    batch = random_batch(500, seed=8)
    assert torch.allclose(compiled_loss(name, batch, hp), closed_form(name, batch, hp), rtol=1e-9, atol=1e-12)


def test_dpo_closed_form_is_the_textbook_one():
    """DPO by hand on one pair, independent of both code paths."""
    batch = {k: torch.tensor([v], dtype=torch.float64) for k, v in
             {"logp_w": -10.0, "logp_l": -12.0, "ref_w": -11.0, "ref_l": -11.5, "len_w": 5.0, "len_l": 6.0}.items()}
    beta = 0.1
    by_hand = np.log1p(np.exp(-beta * ((-10.0 + 11.0) - (-12.0 + 11.5))))
    assert float(compiled_loss("dpo", batch)) == pytest.approx(by_hand, rel=1e-13)
    assert float(compiled_loss("dpo_odds", batch)) == pytest.approx(by_hand, rel=1e-13)


def test_changing_a_structure_breaks_the_match():
    """The check can fail: ORPO's structure is not CPO's loss."""
    batch = random_batch(200, seed=9)
    orpo_on_seq = losses.semantic_loss(losses.STRUCTURES["orpo"],
                                       torch.stack([0.1 * batch["logp_w"], 0.1 * batch["logp_l"]], -1))
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
    expected = {"dpo": False, "cpo_pref": False, "orpo_or": False, "simpo": False, "orpo_lenient": False,
                "cpo": True, "orpo": True, "unlikelihood": True, "sft": True, "dpo_strict": True,
                "orpo_strict": True}
    assert {k: losses.both_false_excluded(k) for k in expected} == expected


@pytest.mark.parametrize("name", losses.known_structure_names())
def test_gradients_finite(name):
    batch = random_batch(64, seed=3)
    batch["logp_w"].requires_grad_(True)
    compiled_loss(name, batch).sum().backward()
    assert torch.isfinite(batch["logp_w"].grad).all()
