"""Known DPA losses in closed form, their decompiled preference structures, and new losses
derived from the lattice.

A loss is a weighted sum of semantic-loss terms. Each term is a compiled structure over the
propositions ("w" = M(x, y_w), "l" = M(x, y_l), and for SimPO a constant margin proposition "z"), a
weight map that turns sequence log-probabilities into the propositions' log-probabilities, and a
reference variant (logic.semantic_loss). The structures below are OUR decompilation from the
original losses' formulas (the paper's tables could not be read); each is checked numerically
against the closed form in `closed_form` (tests and the decompile step).

Weight maps (log p of a proposition from a response's summed log-probability s and length L):
  seq:  log p = beta * s            (p = pi^beta: beta becomes a temperature on the weights)
  avg:  log p = beta * s / L        (length-normalised, SimPO / ORPO)

Closed forms (written directly from the original papers, independent of the logic code):
  DPO   (Rafailov et al. 2023)  -log sig(beta [(s_w - r_w) - (s_l - r_l)])
  CPO   (Xu et al. 2024)        -log sig(beta (s_w - s_l)) - s_w
  ORPO  (Hong et al. 2024)      -s_w/L_w - lam log sig(log odds_w - log odds_l),  odds = P/(1-P),
                                P = exp(s/L)
  SimPO (Meng et al. 2024)      -log sig(beta s_w/L_w - beta s_l/L_l - gamma)
  IPO   (Azar et al. 2024)      ((s_w - r_w) - (s_l - r_l) - 1/(2 tau))^2
  SLiC-HF (Zhao et al. 2023)    max(0, delta - s_w + s_l) - lam s_w
  unlikelihood (Welleck et al. 2020, pairwise form)  -s_w - log(1 - exp(s_l))
  SFT / NLL                     -s_w
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from .logic import TRUE, Not, Structure, Var, Xor, compile_structure, log1mexp, semantic_loss

W, L, Z = Var("w"), Var("l"), Var("z")
NAMES2 = ("w", "l")
NAMES3 = ("w", "l", "z")

# The decompiled structures (P, P_C, P_A) -- ours, see module docstring.
STRUCTURES = {
    # CPO / DPO: rho = log p_w - log p_l. N = w, D = l overlap in the world w & l: a tie (P_A).
    "cpo": compile_structure(NAMES2, core=W, cond=W | L, extra=W & L),
    # ORPO: rho = logit p_w - logit p_l: "winner, not loser, given exactly one holds".
    "orpo": compile_structure(NAMES2, core=W, cond=Xor(W, L)),
    # SFT / NLL on the winner: -log p_w.
    "sft": compile_structure(NAMES2, core=W),
    # Pairwise unlikelihood: -log p(w & ~l), unconditioned.
    "unlikelihood": compile_structure(NAMES2, core=W & Not(L)),
    # SimPO: rho = log p_w + log p_z - log p_l with p_z = exp(-gamma): the margin is a proposition.
    "simpo": compile_structure(NAMES3, core=W & Z, cond=(W & Z) | L, extra=W & Z & L),
    # Derived 1 (ours): CPO/DPO with the both-false world moved from ignored to rejected:
    # N = w, D = w -> l (no conditioning). loss = -log p_w + log(1 + p_w p_l).
    "cpo_strict": compile_structure(NAMES2, core=W, cond=TRUE, extra=W & L),
    # Derived 2 (ours): ORPO with the both-false world rejected: N = w & ~l, D = ~w.
    "orpo_strict": compile_structure(NAMES2, core=W & Not(L), cond=Not(W & L)),
    # Derived 3 (ours): ORPO with the both-false world accepted: N = ~l, D = ~w & l.
    "orpo_lenient": compile_structure(NAMES2, core=Not(L), cond=Not(W) | Not(L)),
}


@dataclass(frozen=True)
class Term:
    structure: str
    weight_map: str = "seq"  # seq | avg
    beta_key: str | None = "beta"  # hyper-parameter scaling log p (None: 1)
    reference: str = "none"  # none | ratio | odds
    coef_key: str | None = None  # hyper-parameter multiplying the term (None: 1)


@dataclass(frozen=True)
class LossSpec:
    name: str
    terms: tuple[Term, ...]
    family: str  # known | derived | no_structure
    reason: str = ""  # for no_structure: why no exact structure exists
    margin_structure: str | None = None  # no_structure: the structure whose rho is the loss's margin
    hparams: dict = field(default_factory=dict)


LOSSES = {
    "dpo": LossSpec("dpo", (Term("cpo", reference="ratio"),), "known", hparams={"beta": 0.1}),
    "dpo_odds": LossSpec("dpo_odds", (Term("orpo", reference="odds"),), "known", hparams={"beta": 0.1}),
    "cpo": LossSpec("cpo", (Term("cpo"), Term("sft", beta_key=None)), "known", hparams={"beta": 0.1}),
    "cpo_pref": LossSpec("cpo_pref", (Term("cpo"),), "known", hparams={"beta": 0.1}),
    "orpo": LossSpec(
        "orpo", (Term("sft", "avg", None), Term("orpo", "avg", None, coef_key="lam")), "known", hparams={"lam": 0.1}
    ),
    "orpo_or": LossSpec("orpo_or", (Term("orpo", "avg", None),), "known"),
    "simpo": LossSpec("simpo", (Term("simpo", "avg"),), "known", hparams={"beta": 2.0, "gamma": 0.5}),
    "unlikelihood": LossSpec("unlikelihood", (Term("unlikelihood", beta_key=None),), "known"),
    "sft": LossSpec("sft", (Term("sft", beta_key=None),), "known"),
    "ipo": LossSpec(
        "ipo",
        (),
        "no_structure",
        margin_structure="cpo",
        hparams={"tau": 0.1},
        reason="squared loss of the DPO margin: not monotone in rho (minimal at rho = 1/(2 tau)), "
        "while every semantic loss softplus(-rho) is strictly decreasing in rho",
    ),
    "slic": LossSpec(
        "slic",
        (),
        "no_structure",
        margin_structure="cpo",
        hparams={"delta": 1.0, "lam": 0.1},
        reason="hinge on the CPO margin: exactly zero for rho >= delta and piecewise linear, "
        "while every semantic loss softplus(-rho) is positive and smooth for finite rho",
    ),
    "dpo_strict": LossSpec("dpo_strict", (Term("cpo_strict", reference="ratio"),), "derived", hparams={"beta": 0.1}),
    "orpo_strict": LossSpec("orpo_strict", (Term("orpo_strict", "avg", None),), "derived"),
    "orpo_lenient": LossSpec("orpo_lenient", (Term("orpo_lenient", "avg", None),), "derived"),
}


def _log_p(term: Term, s: torch.Tensor, length: torch.Tensor, hp: dict) -> torch.Tensor:
    beta = hp[term.beta_key] if term.beta_key else 1.0
    if term.weight_map == "seq":
        return beta * s
    if term.weight_map == "avg":
        return beta * s / length
    raise ValueError(f"weight map {term.weight_map!r}: expected seq or avg")


def proposition_log_probs(term: Term, batch: dict, hp: dict, reference: bool = False) -> torch.Tensor:
    """(B, n) log-probabilities of the term's propositions (w, l[, z])."""
    sw, sl = (batch["ref_w"], batch["ref_l"]) if reference else (batch["logp_w"], batch["logp_l"])
    cols = [_log_p(term, sw, batch["len_w"], hp), _log_p(term, sl, batch["len_l"], hp)]
    if len(STRUCTURES[term.structure].names) == 3:  # SimPO's margin proposition, p_z = exp(-gamma)
        if hp["gamma"] < 0:
            raise ValueError("simpo: gamma must be >= 0 for p_z = exp(-gamma) to be a probability")
        cols.append(torch.full_like(sw, -float(hp["gamma"])))
    return torch.stack(cols, dim=-1)


def compiled_loss(name: str, batch: dict, hp: dict | None = None) -> torch.Tensor:
    """Per-example loss of `name` computed from its decompiled structures by model counting."""
    spec = LOSSES[name]
    if spec.family == "no_structure":
        raise ValueError(f"{name} has no exact preference structure: {spec.reason}")
    hp = {**spec.hparams, **(hp or {})}
    total = 0.0
    for term in spec.terms:
        s = STRUCTURES[term.structure]
        lp = proposition_log_probs(term, batch, hp)
        lp_ref = proposition_log_probs(term, batch, hp, reference=True) if term.reference != "none" else None
        coef = hp[term.coef_key] if term.coef_key else 1.0
        total = total + coef * semantic_loss(s, lp, lp_ref, term.reference)
    return total


def compiled_margin(structure: str, batch: dict, hp: dict) -> torch.Tensor:
    """rho of a structure with the DPO weight map and ratio reference (for no-structure losses)."""
    from .logic import margin

    term = Term(structure, reference="ratio")
    return margin(STRUCTURES[structure], proposition_log_probs(term, batch, hp)) - margin(
        STRUCTURES[structure], proposition_log_probs(term, batch, hp, reference=True)
    )


def closed_form(name: str, batch: dict, hp: dict | None = None) -> torch.Tensor:
    """Per-example loss from the original papers' formulas (no logic involved)."""
    hp = {**LOSSES[name].hparams, **(hp or {})}
    sw, sl, rw, rl = batch["logp_w"], batch["logp_l"], batch["ref_w"], batch["ref_l"]
    lw, ll = batch["len_w"], batch["len_l"]
    if name in ("dpo", "dpo_odds"):
        return -F.logsigmoid(hp["beta"] * ((sw - rw) - (sl - rl)))
    if name == "cpo":
        return -F.logsigmoid(hp["beta"] * (sw - sl)) - sw
    if name == "cpo_pref":
        return -F.logsigmoid(hp["beta"] * (sw - sl))
    if name in ("orpo", "orpo_or"):
        aw, al = sw / lw, sl / ll
        log_odds = lambda a: a - log1mexp(a)  # noqa: E731
        ratio = -F.logsigmoid(log_odds(aw) - log_odds(al))
        return ratio if name == "orpo_or" else -aw + hp["lam"] * ratio
    if name == "simpo":
        return -F.logsigmoid(hp["beta"] * sw / lw - hp["beta"] * sl / ll - hp["gamma"])
    if name == "ipo":
        return ((sw - rw) - (sl - rl) - 1.0 / (2.0 * hp["tau"])) ** 2
    if name == "slic":
        return torch.clamp(hp["delta"] - sw + sl, min=0.0) - hp["lam"] * sw
    if name == "unlikelihood":
        return -sw - log1mexp(sl)
    if name == "sft":
        return -sw
    if name == "dpo_strict":  # -log sig(rho_theta - rho_ref), rho = log p_w - log(1 - p_w + p_w p_l), p = pi^beta

        def rho(a, b):
            pw, pl = hp["beta"] * a, hp["beta"] * b
            return pw - torch.log1p(-torch.exp(pw) + torch.exp(pw + pl))

        return -F.logsigmoid(rho(sw, sl) - rho(rw, rl))
    if name in ("orpo_strict", "orpo_lenient"):
        aw, al = sw / lw, sl / ll
        if name == "orpo_strict":  # rho = log p_w + log(1 - p_l) - log(1 - p_w)
            return -F.logsigmoid(aw + log1mexp(al) - log1mexp(aw))
        return -F.logsigmoid(log1mexp(al) - log1mexp(aw) - al)  # rho = log(1-p_l) - log((1-p_w) p_l)
    raise KeyError(f"unknown loss {name!r}; known: {sorted(LOSSES)}")


def both_false_excluded(name: str) -> bool:
    """True if some term of the loss rejects every world where winner and loser are both false
    (the both-false world is in D and not in N), so a model that puts mass there is penalised."""
    spec = LOSSES[name]
    for term in spec.terms:
        s: Structure = STRUCTURES[term.structure]
        roles = s.roles()
        both_false = [k for k in range(s.n_worlds) if not (k & 1) and not (k & 2)]
        if all(roles[k] == "rejected" for k in both_false):
            return True
    return False


def random_batch(n: int, seed: int, dtype=torch.float64) -> dict:
    """Random sequence log-probabilities (policy and reference) and lengths for identity checks."""
    g = torch.Generator().manual_seed(seed)
    length_w = torch.randint(1, 40, (n,), generator=g).to(dtype)
    length_l = torch.randint(1, 40, (n,), generator=g).to(dtype)
    per_token = lambda: -torch.rand(n, generator=g, dtype=dtype) * 3.0  # noqa: E731
    return {
        "logp_w": per_token() * length_w,
        "logp_l": per_token() * length_l,
        "ref_w": per_token() * length_w,
        "ref_l": per_token() * length_l,
        "len_w": length_w,
        "len_l": length_l,
    }


def known_structure_names() -> list[str]:
    return [k for k, v in LOSSES.items() if v.family != "no_structure"]


def check_losses(losses: list[str], where: str, hparams: dict | None = None) -> None:
    """Unknown or structure-less losses, and overrides of hyper-parameters a loss does not have."""
    for name, hp in (hparams or {}).items():
        unknown = set(hp) - set(LOSSES.get(name, LOSSES["sft"]).hparams)
        if unknown:
            raise ValueError(
                f"config {where.rsplit('.', 1)[0]}.hparams.{name}: {sorted(unknown)} are not "
                f"hyper-parameters of {name} (it has {sorted(LOSSES[name].hparams)})"
            )
    for name in losses:
        if name not in LOSSES:
            raise ValueError(f"config {where}: unknown loss {name!r}; known: {sorted(LOSSES)}")
        if LOSSES[name].family == "no_structure":
            raise ValueError(
                f"config {where}: {name!r} has no preference structure ({LOSSES[name].reason}); remove it from the list"
            )
