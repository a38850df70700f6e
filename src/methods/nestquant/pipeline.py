"""What each step of the NestQuant DAG does (workflow/rules/nestquant.smk); one function per script.

- `synthetic`: Gaussian and heavy-tailed (Student-t) matrices, Hadamard-rotated: MSE and matrix-product
  error vs bits per entry for NestQuant (a sweep over the nesting ratio q) and the scalar baselines
  (RTN on the raw matrix, Hadamard + RTN, uniform with optimal clipping), one data/rotation seed.
- `lm_eval`: the shared small Llama at W4A4KV4 and W4 for fp, RTN, Hadamard + RTN, NestQuant, each
  rotated method with and without LDLQ; one seed (rotations, calibration sample).
- `minilm_eval`: all-MiniLM-L6-v2 at W4A4: embedding fidelity and WordSim / SimLex Spearman.
- `synthetic_figure`, `quality_figure`, `write_paper_claims`.

Bits per entry are counted exactly (`methods.nestquant.quant.nestquant_rate`, `rtn_rate`): NestQuant at
q = 14 with 4 scales spends log2(14) + 2/8 = 4.06 bits per entry plus one fp16 scale per row, RTN 4 bits
plus the same scale.
"""
from __future__ import annotations

import copy
import math
import time
from pathlib import Path

import numpy as np
import torch

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, set_seed, write_json
from methods.common.plotting import new_figure, save_figure

from .model import linear_names, quantize_kv, quantize_linears
from .quant import (E8_NSM, ldlq, nestquant, nestquant_rate, random_hadamard, rotate, rtn, rtn_rate,
                    uniform_clipped)

DECLARATION = Path(__file__).with_name("claims.yaml")
E8_GAIN_DB = 10 * math.log10((1 / 12) / E8_NSM)  # granular gain of E8 over the integer lattice, 0.65 dB
FP = "fp"
METHODS = ("rtn", "hadrtn", "hadrtn_ldlq", "nestquant", "nestquant_ldlq")  # the quantized configurations
ROTATED = {"hadrtn", "hadrtn_ldlq", "nestquant", "nestquant_ldlq"}


# --- synthetic matrices ---------------------------------------------------------------------------

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
    return {"mse": float((qa - a).pow(2).mean() / a.pow(2).mean()),
            "matmul": float((qa @ qb.T - ref).norm() / ref.norm())}


def synthetic(distributions: list[str], rows: int, cols: int, df: int, nestquant_q: list[int],
              weight_betas: list[float], rtn_bits: list[int], uniform_levels: list[int], seed: int,
              out_json: str) -> None:
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
            curves["uniform_clipped"].append({"rate": math.log2(levels), "levels": levels, **_errors(
                ar, br, uniform_clipped(ar, levels), uniform_clipped(br, levels))})
        for q in nestquant_q:
            betas = [x / q for x in weight_betas]
            curves["nestquant"].append({"rate": nestquant_rate(q, len(betas), cols), "q": q, **_errors(
                ar, br, nestquant(ar, q, betas), nestquant(br, q, betas))})
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
    return {base: 10 * power * math.log10(error_at_rate(curves[base], nq["rate"], key) / nq[key])
            for base in curves if base != "nestquant"}


def errors_at_rate(curves: dict, q: int, key: str) -> dict[str, float]:
    """Every quantizer's error (relative MSE or matrix-product error) at NestQuant's rate for q: the
    numbers the gains compare, so that a claim can put a baseline's number in place of NestQuant's."""
    nq = next(p for p in curves["nestquant"] if p["q"] == q)
    return {name: (nq[key] if name == "nestquant" else error_at_rate(curve, nq["rate"], key))
            for name, curve in curves.items()}


def synthetic_figure(files: list[str], claim_q: int, out_png: str) -> None:
    """MSE vs rate per distribution (first seed), and NestQuant's gain in dB over uniform quantization with
    optimal clipping vs rate (MSE and matrix-product error), with the E8 granular gain as a reference line."""
    runs = [read_json(f) for f in files]
    dists = list(runs[0]["results"])
    fig, axes = new_figure(1, len(dists) + 1, width=5 * (len(dists) + 1), height=4)
    for ax, dist in zip(axes, dists):
        for name, curve in runs[0]["results"][dist].items():
            ax.semilogy([p["rate"] for p in curve], [p["mse"] for p in curve], "o-", label=name)
        ax.axvline(nestquant_rate(claim_q, 4, runs[0]["cols"]), color="0.6", ls=":", lw=0.8)
        ax.set_title(f"{dist}: relative MSE (seed {runs[0]['seed']})")
        ax.set_xlabel("bits per entry")
        ax.legend(fontsize=7)
    ax = axes[-1]
    for i, dist in enumerate(dists):
        qs = [p["q"] for p in runs[0]["results"][dist]["nestquant"]]
        rates = [p["rate"] for p in runs[0]["results"][dist]["nestquant"]]
        for key, style in (("mse", "o-"), ("matmul", "s:")):
            gains = np.array([[gains_db(r["results"][dist], q, key)["uniform_clipped"] for q in qs] for r in runs])
            ax.plot(rates, gains.mean(0), style, color=f"C{i}", label=f"{dist}, {key} (mean of {len(runs)} seeds)")
    ax.axhline(E8_GAIN_DB, color="k", ls="--", lw=1, label=f"E8 granular gain {E8_GAIN_DB:.2f} dB")
    ax.axhline(0, color="0.5", lw=0.6)
    ax.set_title("NestQuant gain over uniform w/ optimal clipping")
    ax.set_xlabel("bits per entry")
    ax.set_ylabel("dB")
    ax.legend(fontsize=7)
    save_figure(fig, out_png)


# --- quantizers of the LM experiments -------------------------------------------------------------

def _row_scaled(w: torch.Tensor, scale: torch.Tensor, quantize):
    """Quantizer of a column block of W for LDLQ: row scales fixed up front from the whole row."""
    return lambda block: quantize(block / scale) * scale


def _weight_quantizer(method: str, q: int, betas: list[float], bits: int):
    if method.startswith("nestquant"):
        return lambda w: nestquant(w, q, betas)
    return lambda w: rtn(w, bits)


def ldlq_weights(model, method: str, hessians: dict, q: int, betas: list[float], bits: int, seed: int,
                 names: list[str]) -> dict[str, torch.Tensor]:
    """LDLQ-quantized rotated weights W R^T per linear, from the Hessian of rotated inputs R H R^T.
    Seeds and rotations match those `quantize_linears` gives the same names (seed + index)."""
    out = {}
    qmax = 2 ** (bits - 1) - 1
    for i, name in enumerate(names):
        lin = model.get_submodule(name)
        signs = random_hadamard(lin.in_features, seed + i)
        w = rotate(lin.weight.detach().float(), signs)
        h = hessians[name]["hessian"].float()
        h_rot = rotate(rotate(h, signs).T.contiguous(), signs)  # R H R^T
        k = w.shape[1]
        if method.startswith("nestquant"):  # rows at norm sqrt(K) with the exact scale, as the official quantsim
            scale = (w.norm(dim=1, keepdim=True) / math.sqrt(k)).clamp_min(1e-8)
            block_q = _row_scaled(w, scale, lambda b: nestquant(b, q, betas, scale_rows=False))
        else:  # per-channel absmax scale of the rotated row, as GPTQ fixes it before the sweep
            scale = (w.abs().amax(1, keepdim=True) / qmax).half().float().clamp_min(1e-8)
            block_q = _row_scaled(w, scale, lambda b: torch.clamp(torch.round(b), -qmax - 1, qmax))
        out[name] = ldlq(w, h_rot, block_q)
    return out


def quantize_model(model, method: str, setting: str, q: int, betas: dict, bits: int, seed: int,
                   head_dim: int, hessians: dict | None, skip: tuple[str, ...]):
    """A quantized copy of `model`: `setting` w4 (weights) or w4a4kv4 (+ activations, keys, values)."""
    if method == FP:
        return model
    m = copy.deepcopy(model)
    names = linear_names(m, skip=skip)
    rotated = method in ROTATED
    w_q = _weight_quantizer(method, q, betas["weights"], bits)
    weights = None
    if method.endswith("_ldlq"):
        if hessians is None:
            raise ValueError(f"quantize_model: method {method} needs calibration Hessians")
        weights = ldlq_weights(m, method, hessians, q, betas["weights"], bits, seed, names)
    act_q = _activation_quantizer(method, setting, q, betas, bits)
    quantize_linears(m, w_q, act_q, seed, rotate_input=rotated, weights=weights, names=names)
    if setting == "w4a4kv4":
        _quantize_kv_cache(m, method, q, betas, bits, head_dim, seed, rotated)
    return m


def weight_proxy_error(model_q, model, hessians: dict) -> float:
    """Mean over linears of tr(dW H dW^T) / tr(W H W^T) in the rotated basis: the layer-output error
    that LDLQ minimizes, on the calibration inputs (QuantLinear holds the rotation signs)."""
    from .model import QuantLinear
    from .quant import proxy_loss

    errs = []
    for name, mod in model_q.named_modules():
        if isinstance(mod, QuantLinear) and name in hessians:
            w = model.get_submodule(name).weight.detach().float()
            h = hessians[name]["hessian"].float()
            if mod.rotate_input:
                w, h = rotate(w, mod.signs), rotate(rotate(h, mod.signs).T.contiguous(), mod.signs)
            errs.append(proxy_loss(w, mod.weight_hat, h) / proxy_loss(w, torch.zeros_like(w), h))
    return float(np.mean(errs))


def _betas(cfg: dict, q: int) -> dict[str, list[float]]:
    return {k: [b / q for b in v] for k, v in cfg["betas"].items()}


def rates(cfg: dict, k: int, head_dim: int) -> dict[str, dict[str, float]]:
    """Bits per entry of weights (rows of length k), activations (tokens of length k) and KV (per head)."""
    q, nb, bits = cfg["q"], len(cfg["betas"]["weights"]), cfg["rtn_bits"]
    return {"nestquant": {"weights": nestquant_rate(q, nb, k), "kv": nestquant_rate(q, nb, head_dim)},
            "rtn": {"weights": rtn_rate(bits, None, k), "kv": rtn_rate(bits, None, head_dim)}}


# --- the small Llama ------------------------------------------------------------------------------

def lm_eval(model_dir: str, tokens: str, quant: dict, settings: list[str], calibration: dict, evaluation: dict,
            seed: int, threads: int, out_json: str) -> None:
    """Perplexity of fp and every method of METHODS in every setting, rotation and calibration seed `seed`."""
    from methods.common.lm import (calibration_windows, capture_linear_inputs, load_causal_lm, load_token_splits,
                                   perplexity)

    torch.set_num_threads(threads)
    set_seed(seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"  # full scale: the GPU the rule asks for
    splits = load_token_splits(tokens)
    calib_ids = calibration_windows(splits["train"], calibration["n_windows"], calibration["seq_len"], seed)
    if calibration.get("layerwise", False):
        return _lm_eval_layerwise(model_dir, splits, calib_ids, quant, settings, evaluation, seed, device, out_json)
    model, _ = load_causal_lm(model_dir, device=device)
    model = model.float()
    cfg = model.config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    hessians = capture_linear_inputs(model, calib_ids, stats=("hessian",))
    ppl = lambda m: perplexity(m, splits["test"], evaluation["seq_len"], evaluation["batch_size"],  # noqa: E731
                               evaluation["max_windows"])
    results = {FP: {"perplexity": ppl(model)}}
    log(f"fp perplexity {results[FP]['perplexity']:.3f}")
    for setting in settings:
        results[setting] = {}
        for method in METHODS:
            t0 = time.perf_counter()
            m = quantize_model(model, method, setting, quant["q"], _betas(quant, quant["q"]), quant["rtn_bits"],
                               seed, head_dim, hessians, skip=("lm_head",))
            results[setting][method] = {"perplexity": ppl(m), "weight_error": weight_proxy_error(m, model, hessians),
                                        "seconds": time.perf_counter() - t0}
            r = results[setting][method]
            log(f"{setting} {method}: perplexity {r['perplexity']:.3f}, weight proxy error "
                f"{r['weight_error']:.5f} ({r['seconds']:.1f} s)")
    write_json(out_json, {"model": "small_llama", "seed": seed, "device": device, "head_dim": head_dim,
                          "rates": rates(quant, cfg.hidden_size, head_dim), "results": results})


def _lm_eval_layerwise(model_dir: str, splits: dict, calib_ids, quant: dict, settings: list[str], evaluation: dict,
                       seed: int, device: str, out_json: str) -> None:
    """`lm_eval` for models that fit one GPU only in their own dtype (Llama-3-8B in bf16): every method
    quantizes a freshly loaded model in place, block by block (`quantize_model_layerwise`)."""
    from methods.common.lm import load_causal_lm, perplexity

    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    load = lambda: load_causal_lm(model_dir, device=device, dtype=dtype)[0]  # noqa: E731
    ppl = lambda m: perplexity(m, splits["test"], evaluation["seq_len"], evaluation["batch_size"],  # noqa: E731
                               evaluation["max_windows"])
    model = load()
    cfg = model.config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    results = {FP: {"perplexity": ppl(model)}}
    log(f"fp perplexity {results[FP]['perplexity']:.3f} (layerwise, {dtype})")
    del model
    for setting in settings:
        results[setting] = {}
        for method in METHODS:
            t0 = time.perf_counter()
            m, errors = quantize_model_layerwise(load(), method, setting, quant["q"], _betas(quant, quant["q"]),
                                                 quant["rtn_bits"], seed, head_dim, calib_ids, skip=("lm_head",))
            results[setting][method] = {"perplexity": ppl(m), "weight_error": float(np.mean(errors)),
                                        "seconds": time.perf_counter() - t0}
            del m
            if device == "cuda":
                torch.cuda.empty_cache()
            r = results[setting][method]
            log(f"{setting} {method}: perplexity {r['perplexity']:.3f}, weight proxy error "
                f"{r['weight_error']:.5f} ({r['seconds']:.1f} s)")
    write_json(out_json, {"model": "small_llama", "seed": seed, "device": device, "head_dim": head_dim,
                          "layerwise": True, "dtype": str(dtype),
                          "rates": rates(quant, cfg.hidden_size, head_dim), "results": results})


# --- MiniLM ---------------------------------------------------------------------------------------

def minilm_eval(minilm_dir: str, corpus_dir: str, pairs_files: dict[str, str], quant: dict, minilm: dict,
                seed: int, threads: int, out_json: str) -> None:
    """all-MiniLM-L6-v2 at W4A4 for every method: fidelity to fp embeddings, word-similarity Spearman."""
    from methods.common.lm import (capture_linear_inputs, corpus_sentences, embedding_fidelity, load_minilm,
                                   word_similarity_spearman)

    torch.set_num_threads(threads)
    set_seed(seed)
    dense, tok = load_minilm(minilm_dir)
    head_dim = dense.config.hidden_size // dense.config.num_attention_heads
    calib = corpus_sentences(f"{corpus_dir}/train.txt", minilm["n_calibration"], seed,
                             key="nestquant.minilm.n_calibration")
    eval_sent = corpus_sentences(f"{corpus_dir}/test.txt", minilm["n_eval"], 20_000,
                                 key="nestquant.minilm.n_eval")
    enc = dict(tok(calib, padding="max_length", truncation=True, max_length=minilm["max_length"],
                   return_tensors="pt"))
    batches = [{k: v[i:i + 32] for k, v in enc.items()} for i in range(0, len(calib), 32)]
    hessians = capture_linear_inputs(dense, batches, stats=("hessian",))

    def quality(model):
        out = {"fidelity": embedding_fidelity(model, dense, tok, eval_sent)}
        for key, path in pairs_files.items():
            out[key] = word_similarity_spearman(model, tok, path)
        return out

    results = {FP: quality(dense)}
    for method in METHODS:
        m = quantize_model(dense, method, "w4a4", quant["q"], _betas(quant, quant["q"]), quant["rtn_bits"], seed,
                           head_dim, hessians, skip=("pooler",))
        results[method] = {**quality(m), "weight_error": weight_proxy_error(m, dense, hessians)}
        log(f"minilm {method}: " + ", ".join(f"{k} {'undefined' if v is None else f'{v:.4f}'}"
                                              for k, v in results[method].items()))
    write_json(out_json, {"model": "minilm", "seed": seed, "results": results})


# --- figures and claims ---------------------------------------------------------------------------

def quality_figure(lm_files: list[str], minilm_files: list[str], settings: list[str], out_png: str) -> None:
    """Small Llama perplexity per method and setting, MiniLM fidelity per method (bars: mean, dots: seeds)."""
    lm = [read_json(f) for f in lm_files]
    mini = [read_json(f)["results"] for f in minilm_files]
    fig, axes = new_figure(1, len(settings) + 1, width=4.5 * (len(settings) + 1), height=3.8)
    x = np.arange(len(METHODS))
    for ax, setting in zip(axes, settings):
        vals = np.array([[r["results"][setting][m]["perplexity"] for m in METHODS] for r in lm])
        ax.bar(x, vals.mean(0), color="C0")
        for v in vals:
            ax.plot(x, v, "k.", ms=4)
        ax.axhline(np.mean([r["results"][FP]["perplexity"] for r in lm]), color="C3", ls="--", label="fp")
        ax.set_ylim(0.9 * min(vals.min(), lm[0]["results"][FP]["perplexity"]), 1.05 * vals.max())
        ax.set_xticks(x, METHODS, rotation=30, ha="right")
        ax.set_title(f"small Llama {setting.upper()} test perplexity")
        ax.legend(fontsize=7)
    vals = np.array([[r[m]["fidelity"] for m in METHODS] for r in mini])
    axes[-1].bar(x, vals.mean(0), color="C2")
    for v in vals:
        axes[-1].plot(x, v, "k.", ms=4)
    axes[-1].set_ylim(max(0.0, vals.min() - 0.05), 1.0)
    axes[-1].set_xticks(x, METHODS, rotation=30, ha="right")
    axes[-1].set_title("MiniLM W4A4 embedding cosine to fp")
    save_figure(fig, out_png)


def claims_metrics(synthetic_files: list[str], lm_files: list[str], minilm_files: list[str], claim_q: int) -> dict:
    """Flat {metric: list over seeds} read by the criteria of claims.yaml."""
    measured: dict[str, list[float]] = {}

    def put(key, value):
        measured.setdefault(key, []).append(float(value))

    for f in synthetic_files:
        for dist, curves in read_json(f)["results"].items():
            for key in ("mse", "matmul"):
                for base, gain in gains_db(curves, claim_q, key).items():
                    put(f"synth_{dist}_{key}_gain_db_vs_{base}", gain)
                for name, err in errors_at_rate(curves, claim_q, key).items():
                    put(f"synth_{dist}_{key}_{name}", err)
                put(f"synth_{dist}_{key}_gain_db_vs_uniform_clipped_null", 0.0)  # the baseline against itself
                put(f"synth_{dist}_{key}_best_scalar", min(v for n, v in errors_at_rate(curves, claim_q, key).items()
                                                           if n != "nestquant"))
            put(f"synth_{dist}_rate_nestquant", next(p["rate"] for p in curves["nestquant"] if p["q"] == claim_q))
    for f in lm_files:
        run = read_json(f)
        res = run["results"]
        put("lm_perplexity_fp", res[FP]["perplexity"])
        for setting in (s for s in res if s != FP):
            for method, r in res[setting].items():
                put(f"lm_{setting}_perplexity_{method}", r["perplexity"])
                put(f"lm_{setting}_weight_error_{method}", r["weight_error"])
        for method, r in run["rates"].items():
            for kind, v in r.items():
                put(f"rate_{method}_{kind}", v)
    for f in minilm_files:
        res = read_json(f)["results"]
        for method, r in res.items():
            for key, v in r.items():
                put(f"minilm_{key}_{method}", math.nan if v is None else v)
    for setting in {k.split("_")[1] for k in measured if k.startswith("lm_w")}:
        p = lambda m: np.array(measured[f"lm_{setting}_perplexity_{m}"])  # noqa: E731
        fp = np.array(measured["lm_perplexity_fp"])
        for base, nq in (("hadrtn_ldlq", "nestquant_ldlq"), ("hadrtn", "nestquant"), ("rtn", "nestquant_ldlq"),
                         ("hadrtn_ldlq", "hadrtn_ldlq")):  # the last: the baseline against itself (the null)
            measured[f"lm_{setting}_gap_reduction_{nq}_vs_{base}"] = list((p(base) - p(nq)) / (p(base) - fp))
    return measured


def write_paper_claims(synthetic_files: list[str], lm_files: list[str], minilm_files: list[str], claim_q: int,
                       scale: str, claims_path: str, summary_path: str) -> None:
    measured = claims_metrics(synthetic_files, lm_files, minilm_files, claim_q)
    measured["e8_gain_db"] = E8_GAIN_DB
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    summary = {k: {"mean": float(np.mean(v)), "values": v} if isinstance(v, list) else v for k, v in measured.items()}
    write_json(summary_path, summary)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")


# --- layer by layer (full scale: an 8B model in one GPU's memory) ---------------------------------

class _StopForward(Exception):
    """Raised by a forward hook once the layer whose inputs are being captured has run."""


class _Stopping(torch.nn.Module):
    """Runs `inner` and swallows `_StopForward`, so the calibration pass ends at the captured layer."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, **batch):
        try:
            return self.inner(**batch)
        except _StopForward:
            return None


def _layer_groups(names: list[str]) -> list[tuple[str | None, list[str]]]:
    """Linears grouped by decoder block ("<prefix>.layers.<i>"), in forward order; linears outside
    every block form a group with prefix None (captured by a full forward pass)."""
    import re

    groups: dict = {}
    for name in names:
        m = re.match(r"(.*\blayers\.\d+)\.", name)
        groups.setdefault(m.group(1) if m else None, []).append(name)
    blocks = sorted((k for k in groups if k is not None), key=lambda k: int(k.rsplit(".", 1)[1]))
    return ([(None, groups[None])] if None in groups else []) + [(k, groups[k]) for k in blocks]


def _activation_quantizer(method: str, setting: str, q: int, betas: dict, bits: int):
    """The activation quantizer of a setting: NestQuant or RTN at w4a4kv4, none at w4."""
    if setting != "w4a4kv4":
        return None
    return (lambda x: nestquant(x, q, betas["activations"])) if method.startswith("nestquant") else (
        lambda x: rtn(x, bits))


def _quantize_kv_cache(model, method: str, q: int, betas: dict, bits: int, head_dim: int, seed: int,
                       rotated: bool) -> None:
    """Quantize the keys and values as the KV cache stores them (seed offsets 10 000 / 20 000)."""
    for kind, suffixes, offset in (("keys", ("k_proj", "attention.self.key"), 10_000),
                                   ("values", ("v_proj", "attention.self.value"), 20_000)):
        kv_q = (lambda x, b=betas[kind]: nestquant(x, q, b)) if method.startswith("nestquant") else (
            lambda x: rtn(x, bits))
        quantize_kv(model, kv_q, head_dim, seed + offset, rotate_heads=rotated, names=suffixes)


def quantize_model_layerwise(model, method: str, setting: str, q: int, betas: dict, bits: int, seed: int,
                             head_dim: int, calib_ids, skip: tuple[str, ...], batch_size: int = 8):
    """`quantize_model` in place, one decoder block at a time, returning (model, weight proxy errors).

    Memory: the model stays in its own dtype; only one block's Hessians and fp32 weights exist at once
    (never an fp32 copy of the model nor every layer's Hessian). Blocks are quantized from the last to
    the first, and each block's calibration pass stops right after that block, so every captured input
    comes from unquantized blocks: the Hessians, LDLQ weights, rotations (seed + global linear index)
    and hence the quantized model are those of the all-at-once path. Cost: about L/2 calibration passes
    for L blocks instead of one."""
    from methods.common.lm import capture_linear_inputs

    from .model import QuantLinear
    from .quant import proxy_loss

    if method == FP:
        return model, []
    names = linear_names(model, skip=skip)
    index = {n: i for i, n in enumerate(names)}
    rotated = method in ROTATED
    w_q = _weight_quantizer(method, q, betas["weights"], bits)
    act_q = _activation_quantizer(method, setting, q, betas, bits)
    groups = _layer_groups(names)
    order = ([g for g in groups if g[0] is None] + [g for g in groups if g[0] is not None][::-1])
    errors = {}
    wrapper = _Stopping(model)
    for prefix, group in order:
        handle = None
        if prefix is not None:
            def stop(module, args, out):
                raise _StopForward
            handle = model.get_submodule(prefix).register_forward_hook(stop)
        try:
            captured = capture_linear_inputs(wrapper, calib_ids, stats=("hessian",),
                                             names=[f"inner.{n}" for n in group], batch_size=batch_size)
        finally:
            if handle is not None:
                handle.remove()
        for name in group:
            h = captured.pop(f"inner.{name}")["hessian"]
            i = index[name]
            weights = None
            if method.endswith("_ldlq"):
                weights = ldlq_weights(model, method, {name: {"hessian": h}}, q, betas["weights"], bits, seed + i,
                                       [name])
            w = model.get_submodule(name).weight.detach().float()
            quantize_linears(model, w_q, act_q, seed + i, rotate_input=rotated, weights=weights, names=[name])
            mod = model.get_submodule(name)
            assert isinstance(mod, QuantLinear)
            hf = h.float()
            if mod.rotate_input:
                w, hf = rotate(w, mod.signs), rotate(rotate(hf, mod.signs).T.contiguous(), mod.signs)
            errors[name] = proxy_loss(w, mod.weight_hat, hf) / proxy_loss(w, torch.zeros_like(w), hf)
            del h, hf, w
    if setting == "w4a4kv4":
        _quantize_kv_cache(model, method, q, betas, bits, head_dim, seed, rotated)
    return model, [float(errors[n]) for n in names]
