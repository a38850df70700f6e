"""The synthetic step of the NestQuant DAG (rule nestquant_synthetic), one data / rotation seed per job.

Gaussian and heavy-tailed (Student-t) matrices, Hadamard-rotated: MSE and matrix-product error vs bits per
entry for NestQuant (a sweep over the nesting ratio q) and the scalar baselines (RTN on the raw matrix,
Hadamard + RTN, uniform with optimal clipping); `gains_db` / `errors_at_rate` compare them at NestQuant's
rate (read by the figure and the claims).

Bits per entry are counted exactly (`methods.nestquant.quant.nestquant_rate`, `rtn_rate`): NestQuant at
q = 14 with 4 scales spends log2(14) + 2/8 = 4.06 bits per entry plus one fp16 scale per row, RTN 4 bits
plus the same scale.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from methods.common.io import log, write_json

from .quant import E8_NSM, nestquant, nestquant_rate, random_hadamard, rotate, rtn, rtn_rate, uniform_clipped

E8_GAIN_DB = 10 * math.log10((1 / 12) / E8_NSM)  # granular gain of E8 over the integer lattice, 0.65 dB


def sample_matrix(dist: str, rows: int, cols: int, g: torch.Generator, df: int) -> torch.Tensor:
    if dist == "gaussian":
        return torch.randn(rows, cols, generator=g)
    if dist == "student_t":  # heavy-tailed: t_df = N(0,1) / sqrt(chi2_df / df)
        z = torch.randn(rows, cols, generator=g)
        chi2 = torch.randn(rows, cols, int(df), generator=g).pow(2).sum(-1)
        return z / (chi2 / df).sqrt()
    raise ValueError(f"config nestquant.synthetic.distributions: unknown {dist!r}; use gaussian or student_t")


def _errors(a: torch.Tensor, b: torch.Tensor, qa: torch.Tensor, qb: torch.Tensor) -> dict[str, float]:
    """MSE per entry (relative to the mean square of a) and relative matrix-product error."""
    ref = a @ b.T
    return {
        "mse": float((qa - a).pow(2).mean() / a.pow(2).mean()),
        "matmul": float((qa @ qb.T - ref).norm() / ref.norm()),
    }


def synthetic(
    distributions: list[str],
    rows: int,
    cols: int,
    df: int,
    nestquant_q: list[int],
    weight_betas: list[float],
    rtn_bits: list[int],
    uniform_levels: list[int],
    seed: int,
    out_json: str,
) -> None:
    """Error vs rate of every quantizer on A [rows, cols] and B [rows, cols] (both quantized), one seed."""
    g = torch.Generator().manual_seed(seed)
    out = {"seed": seed, "rows": rows, "cols": cols, "df": df, "e8_gain_db": E8_GAIN_DB, "results": {}}
    for dist in distributions:
        a, b = sample_matrix(dist, rows, cols, g, df), sample_matrix(dist, rows, cols, g, df)
        signs = random_hadamard(cols, seed)
        ar, br = rotate(a, signs), rotate(b, signs)  # orthogonal: errors equal those after un-rotation
        curves = {"rtn": [], "hadrtn": [], "uniform_clipped": [], "nestquant": []}
        for bits in rtn_bits:
            rate = rtn_rate(bits, None, cols)
            curves["rtn"].append({"rate": rate, "bits": bits, **_errors(a, b, rtn(a, bits), rtn(b, bits))})
            curves["hadrtn"].append({"rate": rate, "bits": bits, **_errors(ar, br, rtn(ar, bits), rtn(br, bits))})
        for levels in uniform_levels:  # one clipping level per matrix: log2(levels) bits per entry
            curves["uniform_clipped"].append(
                {
                    "rate": math.log2(levels),
                    "levels": levels,
                    **_errors(ar, br, uniform_clipped(ar, levels), uniform_clipped(br, levels)),
                }
            )
        for q in nestquant_q:
            betas = [x / q for x in weight_betas]
            curves["nestquant"].append(
                {
                    "rate": nestquant_rate(q, len(betas), cols),
                    "q": q,
                    **_errors(ar, br, nestquant(ar, q, betas), nestquant(br, q, betas)),
                }
            )
        out["results"][dist] = curves
        nq = curves["nestquant"][-1]
        log(f"{dist}: NestQuant q={nq['q']} rate {nq['rate']:.3f} mse {nq['mse']:.5f} matmul {nq['matmul']:.5f}")
    write_json(out_json, out)


def error_at_rate(curve: list[dict], rate: float, key: str) -> float:
    """A baseline's error at `rate`, linear in log-error between its two nearest measured rates
    (extrapolated from the end segment outside the sweep; at high rate log-error is linear in rate)."""
    pts = sorted((p["rate"], math.log(p[key])) for p in curve)
    if len(pts) < 2:
        raise ValueError(f"error_at_rate: a curve needs at least two rates, got {len(pts)}")
    i = int(np.clip(np.searchsorted([r for r, _ in pts], rate), 1, len(pts) - 1))
    (r0, e0), (r1, e1) = pts[i - 1], pts[i]
    return math.exp(e0 + (e1 - e0) * (rate - r0) / (r1 - r0))


def gains_db(curves: dict, q: int, key: str) -> dict[str, float]:
    """10 log10(baseline error / NestQuant error) at NestQuant's rate for nesting ratio q (squared for
    the matrix-product error, which is a norm ratio)."""
    nq = next(p for p in curves["nestquant"] if p["q"] == q)
    power = 1 if key == "mse" else 2
    return {
        base: 10 * power * math.log10(error_at_rate(curves[base], nq["rate"], key) / nq[key])
        for base in curves
        if base != "nestquant"
    }


def errors_at_rate(curves: dict, q: int, key: str) -> dict[str, float]:
    """Every quantizer's error (relative MSE or matrix-product error) at NestQuant's rate for q: the
    numbers the gains compare, so that a claim can put a baseline's number in place of NestQuant's."""
    nq = next(p for p in curves["nestquant"] if p["q"] == q)
    return {
        name: (nq[key] if name == "nestquant" else error_at_rate(curve, nq["rate"], key))
        for name, curve in curves.items()
    }
