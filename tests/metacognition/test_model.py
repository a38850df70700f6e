"""The illustrative learner: bounds and monotone competence, reproducibility, world invariants, tuning protocol."""

import numpy as np
import pytest

from methods.common.claims import evaluate_claims, load_declaration
from methods.common.io import concat_arrays, read_json
from methods.metacognition import model as M
from methods.metacognition.claims import DECLARATION
from methods.metacognition.jobs import candidates, evaluate_agents, tune_agents
from methods.metacognition.summary import claims_metrics, merge_seed_groups

ENV = dict(
    steps=120,
    n_families=3,
    n_strategies=3,
    rate_low=0.01,
    rate_high=0.04,
    weak_effect=0.15,
    obs_noise=0.02,
    distractor_noise=0.2,
    distractor=True,
    switch_at=60,
    new_family_at=80,
)
AGENT = dict(epsilon=0.1, step_size=0.2, monitor_rate=0.05, surprise_gain=1.0, decay=0.02, optimism=0.05)


@pytest.mark.parametrize("kind", M.AGENTS)
def test_competence_is_bounded_and_never_falls_without_forgetting(kind):
    r = M.run(kind, M.Environment.from_dict(ENV), M.Agent.from_dict(AGENT), [0, 1, 2])
    c = r["competence"]
    assert ((0 <= c) & (c <= 1)).all()
    # competence only rises; the mean drops only when the new (untrained) family joins the average
    d = np.diff(c, axis=1)
    d[:, ENV["new_family_at"] - 1] = 0
    assert (d >= -1e-12).all()
    assert set(np.unique(r["on_distractor"])) <= {0.0, 1.0}


def test_same_seeds_same_runs_and_every_agent_meets_the_same_worlds():
    env, agent = M.Environment.from_dict(ENV), M.Agent.from_dict(AGENT)
    a, b = M.run("metacognitive", env, agent, [5, 6]), M.run("metacognitive", env, agent, [5, 6])
    assert all(np.array_equal(a[k], b[k]) for k in a)
    # the world depends on the seed only: the round robin sees the same rates whatever runs before it
    w1 = M.draw_world(env, np.random.default_rng([5, 0]), 1)
    w2 = M.draw_world(env, np.random.default_rng([5, 0]), 1)
    assert all(np.array_equal(x, y) for x, y in zip(w1, w2))


def test_world_invariants():
    env = M.Environment.from_dict(ENV)
    rate, before, after = M.draw_world(env, np.random.default_rng(0), 500)
    assert (rate[:, -1] == 0).all() and (rate[:, :-1] >= ENV["rate_low"]).all()
    assert (before != after).all()  # every family's best strategy changes at the switch
    assert not M.available(env, 0)[ENV["n_families"] - 1] and M.available(env, ENV["new_family_at"]).all()


def test_competence_follows_its_closed_form_under_round_robin():
    """Practising k every K steps with a fixed strategy: c after n practices = 1 - (1 - rate*eff)^n."""
    env = M.Environment.from_dict(
        {**ENV, "distractor": False, "switch_at": None, "new_family_at": None, "n_families": 2, "steps": 40}
    )
    r = M.run("round_robin", env, M.Agent.from_dict(AGENT), [3], fixed_strategy=1)
    rate, best, _ = M.draw_world(env, np.random.default_rng([3, 0]), 1)
    eff = np.where(best[0] == 1, 1.0, env.weak_effect)
    expected = np.mean([1 - (1 - rate[0, k] * eff[k]) ** 20 for k in range(2)])
    assert r["competence"][0, -1] == pytest.approx(expected)


def test_bad_environment_is_named():
    with pytest.raises(ValueError, match="switch_at=500"):
        M.Environment.from_dict({**ENV, "switch_at": 500})
    with pytest.raises(ValueError, match="agent 'oracle'"):
        M.run("oracle", M.Environment.from_dict(ENV), M.Agent.from_dict(AGENT), [0])


def test_every_agent_is_tuned_over_its_grid_and_tuning_seeds_are_held_out(tmp_path):
    grid = {"epsilon": [0.05, 0.1], "surprise_gain": [0.0, 1.0]}
    assert len(candidates("metacognitive", AGENT, grid, 3)) == 4
    assert len(candidates("no_evaluation", AGENT, grid, 3)) == 2
    assert [s for _, s in candidates("weakest", AGENT, grid, 3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="disjoint"):
        tune_agents(ENV, AGENT, grid, [0, 1], [1, 2], str(tmp_path / "t.json"))
    tune_agents(ENV, AGENT, grid, [10], [0, 1], str(tmp_path / "t.json"))
    with pytest.raises(ValueError, match="disjoint"):
        evaluate_agents(ENV, str(tmp_path / "t.json"), [10], str(tmp_path / "m.json"), str(tmp_path / "c.npz"))
    evaluate_agents(ENV, str(tmp_path / "t.json"), [0, 1], str(tmp_path / "m.json"), str(tmp_path / "c.npz"))
    m = claims_metrics(read_json(tmp_path / "m.json"))
    for kind in M.AGENTS:
        assert len(m[f"auc_{kind}"]) == 2 and len(m[f"post_switch_auc_{kind}"]) == 2
    assert len(m["stationary_best_fixed_auc"]) == 2
    # every claim (and every headline's null) reads metrics the step measures
    doc = evaluate_claims(load_declaration(DECLARATION), m, "smoke")
    assert {c["id"] for c in doc["claims"] if c["kind"] == "headline"} == {
        "intrinsic_beats_fixed_loops",
        "recovers_after_the_switch",
        "avoids_the_unlearnable_distractor",
        "every_component_contributes",
    }


def test_one_job_per_test_seed_gives_the_outcomes_and_curves_of_one_job_over_all_seeds(tmp_path):
    """Seeds as wildcards: the test seed groups, merged in seed order, are the one-job document and curves
    (the agents run vectorised over seeds, each seed with its own world and streams)."""
    grid = {"epsilon": [0.1], "surprise_gain": [1.0]}
    tune_agents(ENV, AGENT, grid, [10], [0, 1, 2], str(tmp_path / "t.json"))
    evaluate_agents(ENV, str(tmp_path / "t.json"), [0, 1, 2], str(tmp_path / "all.json"), str(tmp_path / "all.npz"))
    for s in (0, 1, 2):
        evaluate_agents(ENV, str(tmp_path / "t.json"), [s], str(tmp_path / f"s{s}.json"), str(tmp_path / f"s{s}.npz"))
    merged = claims_metrics(merge_seed_groups([str(tmp_path / f"s{s}.json") for s in (0, 1, 2)]))
    whole = claims_metrics(merge_seed_groups([str(tmp_path / "all.json")]))
    assert sorted(merged) == sorted(whole)
    for k in whole:
        np.testing.assert_allclose(merged[k], whole[k], rtol=1e-12, atol=0)
    curves = concat_arrays([str(tmp_path / f"s{s}.npz") for s in (0, 1, 2)])
    for k, v in concat_arrays([str(tmp_path / "all.npz")]).items():
        np.testing.assert_allclose(curves[k], v, rtol=1e-12, atol=0)


def test_random_play_is_untuned_and_meets_the_same_worlds_for_the_same_steps():
    """Random play (the trivial null): nothing to tune, the same worlds and steps as every other agent, and its
    practice spread over the available families (no family gets more than half of the steps)."""
    from methods.metacognition.jobs import candidates
    from methods.metacognition.model import Agent, Environment, run

    env, agent = Environment.from_dict(ENV), Agent.from_dict(AGENT)
    out = run("random", env, agent, [0, 1, 2])
    assert out["competence"].shape == run("metacognitive", env, agent, [0, 1, 2])["competence"].shape
    assert out["on_distractor"].mean() < 0.5
    assert candidates("random", AGENT, {"epsilon": [0.1, 0.2], "surprise_gain": [0, 1]}, env.n_strategies) == [
        (AGENT, 0)
    ]
