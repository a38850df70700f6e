"""Exact enumeration of the one-stage sampler (S1) on a small hypercube (d <= 12, 2^d states).

On {-1, 1}^d with d small, q_alpha, the exact denoiser E[x | y] (mixture.posterior_mean) and the
whole transition matrix of (S1) are computable, so the two theoretical statements the paper makes
about its Langevin-like sampler can be measured directly instead of through an ESS proxy:

- contraction: the measured rate of the chain is its second-largest eigenvalue modulus (SLEM); the
  theoretical rate we compare it with is Dobrushin's coefficient of the product kernel,
      rho = max_j sum_i max_y |P(y'_i = +1 | y) - P(y'_i = +1 | y^(j))|,
  the contraction factor of the Hamming Wasserstein-1 distance under the coordinatewise coupling
  (our derivation: the paper's theorem could not be read). SLEM <= rho always holds, since every
  function on the hypercube is Lipschitz for the Hamming metric;
- stationary distribution: the unadjusted chain's stationary law pi_eta (left Perron vector of its
  transition matrix) against the target q_alpha, in total variation; with the Metropolis-Hastings
  correction the stationary law must be q_alpha exactly.
"""

from __future__ import annotations

import numpy as np
import torch

from .mixture import BernoulliMixture, random_mixture
from .noise import hypercube

MAX_D = 12


def proposal_logits(states: torch.Tensor, mixture: BernoulliMixture, alpha: float, eta: float) -> torch.Tensor:
    """(S1) logits alpha m_i(y) + 2 y_i / eta at every state (2^d, d), with the exact denoiser."""
    return alpha * mixture.posterior_mean(alpha * states) + 2 * states / eta


def transition_matrix(states: torch.Tensor, logits: torch.Tensor) -> np.ndarray:
    """P[y, y'] = prod_i sigmoid(y'_i l_i(y)) of the unadjusted chain (rows sum to 1), float64.

    log sigmoid(s l) = s l / 2 - log(2 cosh(l / 2)) for s = +-1, so log P = L Y'^T / 2 - row constant."""
    lg = logits.double()
    log_norm = (lg / 2).abs() + torch.log1p(torch.exp(-lg.abs()))  # log(2 cosh(l/2)) stably
    log_p = lg @ states.double().T / 2 - log_norm.sum(1, keepdim=True)
    return torch.exp(log_p).numpy()


def metropolis_matrix(p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """P corrected by Metropolis-Hastings towards q: off-diagonal P[y,y'] min(1, q(y')P[y',y] / (q(y)P[y,y']))."""
    with np.errstate(divide="ignore"):
        log_ratio = (log_q[None, :] + np.log(p.T)) - (log_q[:, None] + np.log(p))
    acc = np.exp(np.minimum(0.0, log_ratio))
    k = p * acc
    np.fill_diagonal(k, 0.0)
    np.fill_diagonal(k, 1.0 - k.sum(1))
    return k


def stationary(p: np.ndarray) -> np.ndarray:
    """Stationary law pi P = pi of an irreducible chain: (P^T - I) pi = 0 with sum(pi) = 1, solved directly."""
    n = len(p)
    a = p.T - np.eye(n)
    a[-1] = 1.0  # replace one (redundant) balance equation by the normalisation
    b = np.zeros(n)
    b[-1] = 1.0
    pi = np.linalg.solve(a, b)
    return np.clip(pi, 0.0, None) / np.clip(pi, 0.0, None).sum()


def slem(p: np.ndarray) -> float:
    """Second-largest eigenvalue modulus of P: the chain's asymptotic contraction rate per step."""
    mods = np.sort(np.abs(np.linalg.eigvals(p)))[::-1]
    return float(mods[1])


def dobrushin_rate(states: torch.Tensor, logits: torch.Tensor) -> float:
    """rho = max_j sum_i max_y |p_i(y) - p_i(y^(j))| with p_i = sigmoid(l_i): the W1 (Hamming) contraction bound."""
    n, d = states.shape
    prob = torch.sigmoid(logits.double())  # (2^d, d)
    idx = torch.arange(n)
    # hypercube() lists states lexicographically with -1 < +1: bit j of the index is coordinate d-1-j
    influence = torch.empty(d, d, dtype=torch.float64)  # [i, j]
    for j in range(d):
        flipped = idx ^ (1 << (d - 1 - j))
        influence[:, j] = (prob - prob[flipped]).abs().amax(0)
    return float(influence.sum(0).max())


def total_variation(a: np.ndarray, b: np.ndarray) -> float:
    return float(0.5 * np.abs(a - b).sum())


def run_chain(p: np.ndarray, n_chains: int, n_steps: int, generator: np.random.Generator) -> np.ndarray:
    """State indices of `n_chains` independent runs of the chain P after `n_steps` steps from uniform starts."""
    n = len(p)
    cdf = np.cumsum(p, axis=1)
    cdf[:, -1] = 1.0
    s = generator.integers(0, n, size=n_chains)
    for _ in range(n_steps):
        u = generator.random(n_chains)
        s = np.minimum((cdf[s] < u[:, None]).sum(1), n - 1)
    return s


def marginal_z(states: torch.Tensor, pi: np.ndarray, draws: np.ndarray) -> float:
    """max_i |mean of y_i over the draws - E_pi[y_i]| / its standard error sqrt(Var_pi(y_i) / n)."""
    y = states.double().numpy()
    mean = pi @ y
    var = np.clip(1 - mean**2, 1e-12, None)
    emp = y[draws].mean(0)
    return float(np.max(np.abs(emp - mean) / np.sqrt(var / len(draws))))


def exact_chain_metrics(
    d: int,
    n_components: int,
    sharpness: float,
    alphas: list[float],
    eta: float,
    etas: list[float],
    n_chains: int,
    n_steps: int,
    seed: int,
) -> dict:
    """For one random mixture: per alpha the SLEM and Dobrushin rate at `eta`, the TV bias of the
    unadjusted chain for each eta in `etas`, the TV of the MH-corrected chain, and the z-score of the
    sampled chain's marginals against the exact stationary marginals."""
    if not 1 <= d <= MAX_D:
        raise ValueError(f"exact enumeration needs 1 <= d <= {MAX_D} (2^d states); got d = {d}")
    gen = torch.Generator().manual_seed(seed)
    mixture = random_mixture(d, n_components, sharpness, gen)
    mixture = BernoulliMixture(mixture.weights.double(), mixture.means.double())
    states = hypercube(d).double()
    rng = np.random.default_rng(seed)
    rows = []
    for alpha in alphas:
        log_q = mixture.log_q(states, alpha).numpy()
        q = np.exp(log_q - log_q.max())
        q /= q.sum()
        row = {"alpha": alpha, "bias_tv": {}, "mh_tv": {}}
        for e in sorted(set(etas) | {eta}):
            logits = proposal_logits(states, mixture, alpha, e)
            p = transition_matrix(states, logits)
            pi = stationary(p)
            row["bias_tv"][str(e)] = total_variation(pi, q)
            # MH keeps q exactly: the TV between q K and q is 0 up to rounding
            row["mh_tv"][str(e)] = total_variation(q @ metropolis_matrix(p, log_q), q)
            if e == eta:
                row["slem"] = slem(p)
                row["dobrushin"] = dobrushin_rate(states, logits)
                row["chain_marginal_z"] = marginal_z(states, pi, run_chain(p, n_chains, n_steps, rng))
                row["n_chains"] = n_chains
        rows.append(row)
    return {"d": d, "seed": seed, "eta": eta, "etas": etas, "n_states": 2**d, "z_bound": z_tolerance(d), "rows": rows}


def z_tolerance(d: int, level: float = 1e-3) -> float:
    """Two-sided z threshold for the largest of d marginal z-scores at family-wise level `level`
    (Bonferroni). The z-scores divide by the standard error sqrt(Var / n) of n draws, so the tolerance
    on each empirical mean is this z times sqrt(Var / n): it shrinks with the number of samples."""
    from statistics import NormalDist

    return float(NormalDist().inv_cdf(1 - level / (2 * d)))


def exact_chain_job(params: dict, seeds: list[int], threads: int, out_json: str) -> None:
    """Step binary_denoising_exact: exact_chain_metrics for every seed's mixture of one seed group (all seeds
    at tiny scale, one seed per job at paper scale, where d = 12 makes each seed minutes of eigensolves),
    written as one JSON {"seeds": [...], "runs": [one document per seed]}. `threads` bounds torch's and
    the BLAS's threads (numpy's eigensolver and linear solves)."""
    from threadpoolctl import threadpool_limits

    from methods.common.io import log, write_json

    torch.set_num_threads(threads)
    runs = []
    for seed in seeds:
        with threadpool_limits(limits=threads):
            out = exact_chain_metrics(
                params["d"],
                params["n_components"],
                params["sharpness"],
                params["alphas"],
                params["eta"],
                params["etas"],
                params["n_chains"],
                params["n_steps"],
                seed,
            )
        for row in out["rows"]:
            log(
                f"seed {seed} alpha {row['alpha']}: SLEM {row['slem']:.4f} <= Dobrushin {row['dobrushin']:.4f}; "
                f"unadjusted TV bias {row['bias_tv']}; MH {max(row['mh_tv'].values()):.1e}; "
                f"chain marginal z {row['chain_marginal_z']:.2f} (bound {out['z_bound']:.2f})"
            )
        runs.append(out)
    write_json(out_json, {"seeds": list(seeds), "runs": runs})


def merged_exact_runs(exact_files: list[str]) -> list[dict]:
    """The per-seed documents of binary_denoising_exact's seed groups (files in seed order), in seed order."""
    from methods.common.io import read_json

    return [run for f in exact_files for run in read_json(f)["runs"]]
