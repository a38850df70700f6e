"""The illustrative platform model: bounds, absorbing exit, reproducibility, fixed points, the sweep's coverage."""

import numpy as np
import pytest

from methods.common.claims import evaluate_claims, load_declaration
from methods.common.io import concat_arrays, read_json
from methods.human_data import model as M
from methods.human_data.claims import DECLARATION
from methods.human_data.jobs import run_simulations
from methods.human_data.summary import claims_metrics, frontier_margin, merge_seed_groups

WORLD = dict(
    rounds=30,
    q_llm=0.8,
    llm_cost=0.05,
    enjoyment=1.0,
    outside_option=0.0,
    temperature=0.25,
    exit_temperature=0.05,
    kappa=0.03,
    rho=0.02,
)
POP = dict(n=200, motivation_a=2.0, motivation_b=2.0, skill_low=0.7, skill_high=0.95, cost_low=0.2, cost_high=0.8)
DESIGNS = {
    "piece_rate": dict(pay=1.0, bonus=0.0, audit=0.05, fine=1.0, pressure=1.0, items=10, control=1.0, autonomy=0.0),
    "quality_pay": dict(pay=0.5, bonus=0.8, audit=0.3, fine=1.0, pressure=0.5, items=6, control=0.6, autonomy=0.1),
    "game": dict(pay=0.2, bonus=0.2, audit=0.1, fine=0.5, pressure=0.0, items=4, control=0.2, autonomy=0.8),
    "unpaid": dict(pay=0.0, bonus=0.0, audit=0.0, fine=0.0, pressure=0.0, items=2, control=0.0, autonomy=1.0),
}


def _run(name, seed=0, **world):
    return M.simulate(
        M.Design.from_dict(DESIGNS[name]), M.World.from_dict({**WORLD, **world}), M.Population.from_dict(POP), seed
    )


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_outcomes_are_bounded_and_exit_is_absorbing(name):
    out = _run(name)
    for key in ("human_share", "accuracy", "retention", "motivation"):
        x = out[key][np.isfinite(out[key])]
        assert ((0 <= x) & (x <= 1)).all(), key
    assert (np.diff(out["retention"]) <= 0).all()  # nobody comes back
    # correct human labels never exceed the human labels submitted
    assert (out["correct_human"] <= out["quantity"] * np.nan_to_num(out["human_share"]) + 1e-12).all()


def test_same_seed_same_run_other_seed_other_run():
    a, b, c = _run("game", 3), _run("game", 3), _run("game", 4)
    assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)
    assert not np.array_equal(a["quantity"], c["quantity"])


def test_logit_choices_match_their_closed_forms():
    world = M.World.from_dict(WORLD)
    ug, us = np.array([1.0, 0.2, -3.0]), np.array([0.5, 0.5, 0.5])
    p_leave, p_gen = M.choice_probabilities(ug, us, world)
    t = world.temperature
    assert np.allclose(p_gen, np.exp(ug / t) / (np.exp(ug / t) + np.exp(us / t)))
    stay = t * np.log(np.exp(ug / t) + np.exp(us / t))
    assert np.allclose(p_leave, 1 / (1 + np.exp((stay - world.outside_option) / world.exit_temperature)))


def test_motivation_converges_to_the_crowding_fixed_point():
    """m* solves kappa*c*m = rho*a*(1 - m): m* = rho*a / (kappa*c + rho*a)."""
    world, design = M.World.from_dict(WORLD), M.Design.from_dict(DESIGNS["quality_pay"])
    m = np.array([0.0, 0.5, 1.0])
    for _ in range(3000):
        m = M.update_motivation(m, design, world)
    expected = world.rho * design.autonomy / (world.kappa * design.control + world.rho * design.autonomy)
    assert np.allclose(m, expected, atol=1e-6)


def test_bad_design_value_is_named():
    with pytest.raises(ValueError, match="audit=1.5"):
        M.Design.from_dict({**DESIGNS["game"], "audit": 1.5})
    with pytest.raises(ValueError, match="unknown key 'pay_rate'"):
        M.Design.from_dict({**DESIGNS["game"], "pay_rate": 1.0})


def test_frontier_margin_on_a_hand_made_case():
    # line through (10, 0.1) and (6, 0.5): at quantity 4 it is at 0.7
    assert frontier_margin((4, 0.8), (10, 0.1), (6, 0.5)) == pytest.approx(0.1)
    assert frontier_margin((4, 0.6), (10, 0.1), (6, 0.5)) == pytest.approx(-0.1)


def test_the_sweep_covers_every_stated_value_and_metrics_name_them(tmp_path):
    sweep = {"designs": ["game", "piece_rate"], "values": {"kappa": [0.0, 0.03], "llm_cost": [0.05, 1.0]}}
    run_simulations(
        DESIGNS,
        {**WORLD, "rounds": 10},
        {**POP, "n": 30},
        [0, 1],
        3,
        sweep,
        str(tmp_path / "m.json"),
        str(tmp_path / "c.npz"),
    )
    doc = read_json(tmp_path / "m.json")
    for param, values in sweep["values"].items():
        assert [r["value"] for r in doc["sweep"]["results"][param]] == values
    m = claims_metrics(
        doc,
        {
            "frontier_a": "piece_rate",
            "frontier_b": "quality_pay",
            "above": "game",
            "unpaid": "unpaid",
            "gap_designs": ["game", "piece_rate"],
        },
    )
    for name in ("gap_kappa_0p0", "gap_kappa_0p03", "human_share_late_piece_rate_llm_cost_1p0", "frontier_margin"):
        assert len(m[name]) == 2
    # the frontier claim's null is the line's share at the game's quantity: game share minus its margin
    assert np.add(m["frontier_line_at_game"], m["frontier_margin"]) == pytest.approx(m["human_share_late_game"])
    # every claim (and every headline's null) reads metrics the step measures
    doc_claims = evaluate_claims(load_declaration(DECLARATION), m, "smoke")
    assert all(
        c["kind"] == "check" or (c["nulls"] and c["strongest_null"] in {n["name"] for n in c["nulls"]})
        for c in doc_claims["claims"]
    )
    # the mechanism's ablation: every design rerun with motivation frozen, on the same seeds
    assert all(len(m[f"human_share_late_{d}_static"]) == len(m[f"human_share_late_{d}"]) for d in ("game", "unpaid"))
    with np.load(tmp_path / "c.npz", allow_pickle=False) as z:
        assert z["game/human_share"].shape == (2, 10)


def test_one_job_per_seed_gives_the_outcomes_and_curves_of_one_job_over_all_seeds(tmp_path):
    """Seeds as wildcards: the seed groups merged in seed order are the one-job document and curves."""
    sweep = {"designs": ["game", "piece_rate"], "values": {"kappa": [0.0, 0.03]}}
    args = (DESIGNS, {**WORLD, "rounds": 8}, {**POP, "n": 20})
    run_simulations(*args, [0, 1, 2], 2, sweep, str(tmp_path / "all.json"), str(tmp_path / "all.npz"))
    for s in (0, 1, 2):
        run_simulations(*args, [s], 2, sweep, str(tmp_path / f"seed{s}.json"), str(tmp_path / f"seed{s}.npz"))
    merged = merge_seed_groups([str(tmp_path / f"seed{s}.json") for s in (0, 1, 2)])
    assert merged == read_json(tmp_path / "all.json")
    curves = concat_arrays([str(tmp_path / f"seed{s}.npz") for s in (0, 1, 2)])
    whole = concat_arrays([str(tmp_path / "all.npz")])
    assert sorted(curves) == sorted(whole)
    for k in whole:
        np.testing.assert_array_equal(curves[k], whole[k])


def test_frozen_motivation_keeps_every_contributors_motivation():
    """The static world (kappa = rho = 0) is the mechanism's ablation: motivation never moves under any design."""
    from methods.human_data.model import Design, World, update_motivation

    w = World.from_dict({**WORLD, "kappa": 0.0, "rho": 0.0})
    m = np.linspace(0.1, 0.9, 5)
    for d in DESIGNS.values():
        np.testing.assert_allclose(update_motivation(m, Design.from_dict(d), w), m)
