"""Weighted model counting, the compile map, the lattice and the entailment order, against
independent computations (plain-Python products, sympy's model enumeration, exact rational functions)."""

import itertools

import numpy as np
import pytest
import sympy
import torch
from sympy.logic.inference import satisfiable

from methods.dpa_logic import logic
from methods.dpa_logic.logic import FALSE, TRUE, Implies, Not, Var, Xor

W, L, Z = Var("w"), Var("l"), Var("z")


def _sympy_expr(f, syms):
    """The same formula built as a sympy Boolean expression (independent evaluator)."""
    if isinstance(f, logic.Var):
        return syms[f.name]
    if isinstance(f, logic.Const):
        return sympy.true if f.value else sympy.false
    if isinstance(f, logic.Not):
        return sympy.Not(_sympy_expr(f.a, syms))
    op = {logic.And: sympy.And, logic.Or: sympy.Or, logic.Xor: sympy.Xor}[type(f)]
    return op(_sympy_expr(f.a, syms), _sympy_expr(f.b, syms))


def _sympy_wmc(expr, syms, p):
    """WMC from sympy's enumeration of the models (partial models expanded over free variables)."""
    total = 0.0
    for model in satisfiable(expr, all_models=True):
        if model is False:
            return 0.0
        fixed = {str(k): bool(v) for k, v in model.items()}
        free = [n for n in syms if n not in fixed]
        for values in itertools.product([False, True], repeat=len(free)):
            world = {**fixed, **dict(zip(free, values))}
            w = 1.0
            for n, pn in p.items():
                w *= pn if world[n] else 1.0 - pn
            total += w
    return total


FORMULAS = [
    W,
    L,
    W & L,
    W | L,
    Xor(W, L),
    Implies(W, L),
    W & Not(L),
    Not(W) & Not(L),
    TRUE,
    (W & Z) | L,
    Implies(L, W & Z),
    Xor(W, Z) & L,
]


@pytest.mark.parametrize("formula", FORMULAS, ids=str)
def test_wmc_matches_sympy_and_bruteforce(formula):
    names = ("w", "l", "z")
    syms = {n: sympy.Symbol(n) for n in names}
    rng = np.random.default_rng(1)
    for _ in range(5):
        p = dict(zip(names, rng.uniform(0.01, 0.99, 3)))
        mask = formula.mask(names)
        ref = _sympy_wmc(_sympy_expr(formula, syms), syms, p)
        brute = logic.wmc_bruteforce([p[n] for n in names], mask)
        enum = float(
            torch.exp(logic.log_wmc(torch.log(torch.tensor([p[n] for n in names], dtype=torch.float64)), mask))
        )
        assert brute == pytest.approx(ref, rel=1e-12, abs=1e-15)
        assert enum == pytest.approx(ref, rel=1e-12, abs=1e-15)


def test_wmc_of_true_is_one_and_tiny_probabilities_stay_finite():
    log_p = torch.tensor([[-200.0, -1e-12], [-1e-3, -50.0]], dtype=torch.float64)
    total = logic.log_wmc(log_p, TRUE.mask(("w", "l")))
    assert torch.allclose(total, torch.zeros(2, dtype=torch.float64), atol=1e-12)
    # p(w & ~l) with p_w = e^-200: log = -200 + log(1 - e^-1e-12), finite
    v = logic.log_wmc(log_p, (W & Not(L)).mask(("w", "l")))
    assert torch.isfinite(v).all()
    assert float(v[0]) == pytest.approx(-200.0 + np.log(-np.expm1(-1e-12)), rel=1e-12)


def test_conditional_semantic_loss_is_minus_log_conditional_probability():
    """P_A = false: loss = -log p(P | P_C), computed here by hand for 'w & ~l given exactly one'."""
    pw, pl = 0.7, 0.2
    s = logic.compile_structure(("w", "l"), core=W, cond=Xor(W, L))
    loss = logic.semantic_loss(s, torch.log(torch.tensor([pw, pl], dtype=torch.float64)))
    by_hand = -np.log(pw * (1 - pl) / (pw * (1 - pl) + (1 - pw) * pl))
    assert float(loss) == pytest.approx(by_hand, rel=1e-13)
    # = -log sigma(logit p_w - logit p_l): the odds-ratio identity behind ORPO
    logit = lambda q: np.log(q / (1 - q))  # noqa: E731
    assert float(loss) == pytest.approx(np.log1p(np.exp(-(logit(pw) - logit(pl)))), rel=1e-13)


def test_compile_and_decompile_round_trip():
    for s in logic.all_structures(("w", "l")):
        p, c, a = s.decompile()
        n, d = logic.compile_masks(p, c, a, 2)
        assert (n, d) == (s.n_mask, s.d_mask)


@pytest.mark.parametrize("n,expected", [(1, 16), (2, 256)])
def test_compile_map_is_onto_all_pairs(n, expected):
    assert logic.compile_image_size(n) == expected == logic.structure_count(n)


def test_compile_without_extra_constraint_reaches_only_disjoint_pairs():
    """Without P_A (plain conditioning) N and D are disjoint: 3 roles per world, 3^4 = 81 structures."""
    n_sets = 16
    seen = set()
    for p in range(n_sets):
        for c in range(n_sets):
            seen.add(logic.compile_masks(p, c, 0, 2))
    assert len(seen) == 81


def _exact_distinct_functions():
    pw, pl = sympy.symbols("pw pl", positive=True)
    weights = [(1 - pw) * (1 - pl), pw * (1 - pl), (1 - pw) * pl, pw * pl]
    total = lambda m: sum(w for k, w in enumerate(weights) if (m >> k) & 1)  # noqa: E731
    keys = set()
    for nm in range(16):
        for dm in range(16):
            num, den = total(nm), total(dm)
            if num == 0:
                keys.add("inf")
            elif den == 0:
                keys.add("zero")
            else:
                keys.add(sympy.factor(sympy.cancel(num / den)))
    return len(keys)


def test_distinct_loss_functions_match_exact_rational_functions():
    assert logic.distinct_loss_functions(2) == _exact_distinct_functions()


def test_entailment_is_a_partial_order_and_the_checker_can_fail():
    structures = logic.all_structures(("w", "l"))
    n = np.array([s.n_mask for s in structures])
    d = np.array([s.d_mask for s in structures])
    rel = logic.entailment_matrix(n, d)
    assert logic.is_partial_order(rel) == {"reflexive": True, "antisymmetric": True, "transitive": True}
    # vectorised matrix agrees with the scalar definition
    idx = np.random.default_rng(0).integers(0, len(structures), size=(500, 2))
    for i, j in idx:
        assert rel[i, j] == logic.entails(structures[i], structures[j])
    # "shares an accepted world" is symmetric and not transitive: the checker must say so
    bad = (n[:, None] & n[None, :]) != 0
    verdict = logic.is_partial_order(bad)
    assert not verdict["antisymmetric"] and not verdict["transitive"]


def test_entailment_orders_loss_values():
    rng = np.random.default_rng(3)
    structures = logic.all_structures(("w", "l"))
    log_p = torch.log(torch.tensor(rng.uniform(0.02, 0.98, size=(50, 2)), dtype=torch.float64))
    for _ in range(300):
        a, b = rng.choice(len(structures), 2)
        s1, s2 = structures[a], structures[b]
        if logic.entails(s1, s2) and s1.n_mask and s2.n_mask:
            assert torch.all(logic.semantic_loss(s1, log_p) >= logic.semantic_loss(s2, log_p) - 1e-12)
    # a strict instance: moving the both-false world into D raises the loss
    cpo = logic.compile_structure(("w", "l"), core=W, cond=W | L, extra=W & L)
    strict = logic.compile_structure(("w", "l"), core=W, cond=TRUE, extra=W & L)
    assert logic.entails(strict, cpo) and not logic.entails(cpo, strict)
    assert torch.all(logic.semantic_loss(strict, log_p) > logic.semantic_loss(cpo, log_p))


def test_reference_variants():
    s = logic.compile_structure(("w", "l"), core=W, cond=Xor(W, L))
    lp = torch.log(torch.tensor([[0.3, 0.1]], dtype=torch.float64))
    ref = torch.log(torch.tensor([[0.2, 0.2]], dtype=torch.float64))
    odds = logic.semantic_loss(s, lp, ref, "odds")
    # odds variant: p_hat / (1 - p_hat) = pi / pi_ref, so rho = log(0.3/0.2) - log(0.1/0.2)
    assert float(odds) == pytest.approx(np.log1p(np.exp(-(np.log(1.5) - np.log(0.5)))), rel=1e-12)
    with pytest.raises(ValueError, match="reference variant"):
        logic.semantic_loss(s, lp, ref, "bogus")
    assert FALSE.mask(("w", "l")) == 0
