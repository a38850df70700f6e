"""Step 3 of HypotheSAEs: name each selected feature (paper Sec. 3.3; official interpret_neurons.py).

Protocol (as the official `sample_percentile_bins` path): the interpreter sees `n_examples` random texts
from the top decile of the feature's positive activations and `n_examples` random non-activating texts,
proposes `n_candidates` descriptions; each candidate is annotated on `n_score` other high-bin and
`n_score` non-activating texts, and the candidate with the best annotation F1 (label = high bin) is kept.

Two interpreters share that protocol:
- `TermInterpreter`, the offline substitute used at tiny scale (no LLM can be reached here): candidates
  are the terms (planted concept tags, or n-grams) most over-represented in the high examples; a
  text is annotated 1 when it carries the term. It is a substitute, not the paper's method.
- `LLMInterpreter`, the paper's path: an OpenAI-compatible chat API proposes and annotates
  (methods.hypothesaes.llm).

Dense baselines (PCA, raw dimensions, LDA) have no exact zeros; every feature is centred at its training
median first, so "non-activating" means at or below the median. For an SAE neuron that fires on
fewer than half of the texts the median is 0 and this is exactly the official zero-activation bin.
The sign of a dense feature is arbitrary (a principal component's is), so its concept may sit at either
end: with `dense_sides: both` (the default) a dense feature is interpreted from its top end and from its
bottom end (the same protocol on the negated, median-centred activations) and the candidate with the best
annotation F1 of the two ends is kept; `positive` reads the top end only. The official code has no
dense baselines; an SAE neuron (non-negative, exact zeros) is always read from its top end, as there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class InterpretConfig:
    high_quantile: float = 0.9  # top decile of positive activations
    n_examples: int = 10  # high and non-activating examples shown to the interpreter
    n_candidates: int = 3  # descriptions proposed per feature
    n_score: int = 100  # high and non-activating texts annotated to score each candidate
    dense_sides: str = "both"  # dense features: "both" ends (best F1 kept) or the "positive" end only

    def __post_init__(self):
        if self.dense_sides not in ("both", "positive"):
            raise ValueError(
                f"config hypothesaes.interpret.dense_sides: {self.dense_sides!r}; use 'both' or 'positive'"
            )


def activation_bins(a: np.ndarray, centre: float, high_quantile: float) -> tuple[np.ndarray, np.ndarray]:
    """(high, low) index arrays: top (1 - high_quantile) of the positive centred activations; centred <= 0."""
    c = a - centre
    pos = c > 0
    low = np.flatnonzero(~pos)
    if not pos.any():
        return np.array([], dtype=int), low
    thr = np.quantile(c[pos], high_quantile)
    return np.flatnonzero(pos & (c >= thr)), low


def annotation_f1(labels: np.ndarray, annotations: np.ndarray) -> float:
    """F1 of binary annotations against binary labels (0 when there is no true or predicted positive)."""
    labels, annotations = labels.astype(bool), annotations.astype(bool)
    tp = int((labels & annotations).sum())
    fp = int((~labels & annotations).sum())
    fn = int((labels & ~annotations).sum())
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def _sample(idx: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.choice(idx, size=min(n, len(idx)), replace=False) if len(idx) else idx


class TermInterpreter:
    """Offline substitute: a hypothesis is a term (concept tag or n-gram); annotation is its presence."""

    def __init__(self, names: list[str], presence: np.ndarray):
        if presence.shape[1] != len(names):
            raise ValueError(f"TermInterpreter: {presence.shape[1]} term columns but {len(names)} names")
        self.names = list(names)
        self.presence = presence.astype(bool)  # (n_texts, n_terms)
        self.column = {n: j for j, n in enumerate(self.names)}

    def propose(self, high: np.ndarray, low: np.ndarray, n: int) -> list[str]:
        """The n terms most over-represented in the high examples (count in high minus count in low)."""
        diff = self.presence[high].sum(0).astype(float) - self.presence[low].sum(0)
        order = np.argsort(-diff, kind="stable")[:n]
        return [self.names[j] for j in order]

    def annotate(self, idx: np.ndarray, hypothesis: str) -> np.ndarray:
        if hypothesis not in self.column:
            raise KeyError(f"TermInterpreter: unknown term {hypothesis!r}")
        return self.presence[idx, self.column[hypothesis]]


def interpret_feature(
    shown: tuple[np.ndarray, np.ndarray],
    scored: tuple[np.ndarray, np.ndarray],
    centre: float,
    interpreter,
    cfg: InterpretConfig,
    rng: np.random.Generator,
) -> dict:
    """One feature's hypothesis. `shown` and `scored` are (text indices, activations) of two disjoint
    splits: the interpreter sees examples of `shown`; candidates are scored by annotation F1 on `scored`."""
    high, low = activation_bins(shown[1], centre, cfg.high_quantile)
    candidates = interpreter.propose(
        _sample(shown[0][high], cfg.n_examples, rng), _sample(shown[0][low], cfg.n_examples, rng), cfg.n_candidates
    )
    high, low = activation_bins(scored[1], centre, cfg.high_quantile)
    high, low = _sample(scored[0][high], cfg.n_score, rng), _sample(scored[0][low], cfg.n_score, rng)
    idx = np.concatenate([high, low]).astype(int)
    labels = np.r_[np.ones(len(high), bool), np.zeros(len(low), bool)]
    scores = [annotation_f1(labels, interpreter.annotate(idx, c)) for c in candidates]
    best = int(np.argmax(scores)) if scores else 0
    return {
        "hypothesis": candidates[best] if candidates else "",
        "f1": float(scores[best]) if scores else 0.0,
        "candidates": candidates,
        "candidate_f1": [float(s) for s in scores],
    }


def interpret_dense_feature(
    shown: tuple[np.ndarray, np.ndarray],
    scored: tuple[np.ndarray, np.ndarray],
    centre: float,
    interpreter,
    cfg: InterpretConfig,
    rng: np.random.Generator,
) -> dict:
    """A dense feature's hypothesis (module docstring): its top end, and with dense_sides 'both' also its
    bottom end (the protocol on the negated activations); the end whose best candidate has the higher
    annotation F1 is kept (the top end on a tie). The result records the end ('side': +1 or -1)."""
    top = {**interpret_feature(shown, scored, centre, interpreter, cfg, rng), "side": 1}
    if cfg.dense_sides == "positive":
        return top
    bottom = interpret_feature((shown[0], -shown[1]), (scored[0], -scored[1]), -centre, interpreter, cfg, rng)
    return {**bottom, "side": -1} if bottom["f1"] > top["f1"] else top
