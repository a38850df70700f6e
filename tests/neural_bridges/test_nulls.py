"""The V3 nulls of the claims: the trivial forward-Euler alternative and the declaration's shape."""

import torch

from methods.common.claims import criterion_names, declared_nulls, expand_claims, is_self_tie, load_declaration
from methods.neural_bridges.bridges import increments_per_seed, simulate_forward
from methods.neural_bridges.experiments import linear_setup
from methods.neural_bridges.results import DECLARATION

SPEC = {"gamma": 1.0, "sigma": 1.0, "x0": 0.0, "v": 0.0, "T": 1.0, "n_steps": 50, "activation": "tanh"}


def test_forward_null_is_the_unconditioned_process():
    """Brownian motion with drift gamma: the forward null's marginal at T has mean x0 + gamma T and variance
    sigma^2 T (it ignores the endpoint v = 0), on the bridge's grid."""
    problem, _ = linear_setup("brownian", SPEC, 1e-5)
    dW = increments_per_seed([torch.Generator().manual_seed(0)], 20000, problem)
    x = simulate_forward(problem, dW)[0, :, -1, 0].double()
    assert x.shape == (20000,) and problem.n_steps == 50
    assert abs(float(x.mean()) - 1.0) < 0.03 and abs(float(x.var()) - 1.0) < 0.05


def test_every_headline_claim_has_the_mechanism_ablation_and_self_ties_only_as_ablation():
    claims = expand_claims(load_declaration(DECLARATION)["claims"], {"process": ["brownian", "ou"]})
    for c in claims:
        if c["kind"] != "headline":
            continue
        nulls = declared_nulls(c)
        assert nulls, c["id"]
        for n in nulls:
            assert set(n["sub"]) <= set(criterion_names(c["criterion"])), (c["id"], n["name"])
            assert not is_self_tie(n["sub"], c["criterion"]) or n["kind"] == "ablation", (c["id"], n["name"])
        if c["id"] != "sampling_cost_near_forward":  # a cost claim: pCN is its null (see its note)
            assert any(n["kind"] == "ablation" for n in nulls), c["id"]
        # no premise that only restates a null (V3): a premise never reads a null's metric
        subs = {m for n in nulls for m in n["sub"].values()}
        assert not (set(criterion_names(c.get("testable_if") or "0")) & subs), c["id"]
