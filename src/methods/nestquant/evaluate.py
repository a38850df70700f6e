"""The model steps of the NestQuant DAG (rules nestquant_lm, nestquant_minilm), one seed per job, on the job's
device (`methods.common.device.job_device`: the GPU at paper scale).

- `lm_eval`: the shared causal LM at W4A4KV4 and W4 for fp, RTN, Hadamard + RTN, NestQuant, each rotated
  method with and without LDLQ; one seed (rotations, calibration sample). At paper scale
  (`calibration.layerwise`) every method quantizes a freshly loaded bf16 model block by block
  (`quantize_model_layerwise`), so an 8B model fits one GPU.
- `minilm_eval`: all-MiniLM-L6-v2 at W4 (weights only): embedding fidelity and WordSim / SimLex Spearman.
"""

from __future__ import annotations

import copy
import math
import time

import numpy as np
import torch

from methods.common.io import log, set_seed, write_json

from .model import linear_names, quantize_kv, quantize_kv_post_rope, quantize_linears
from .quant import ldlq, nestquant, nestquant_rate, random_hadamard, rotate, rtn, rtn_levels_rate, rtn_rate

KV_CACHES = ("post_rope", "pre_rope")  # post_rope: the official code's KV cache (the default)

FP = "fp"
# the quantized configurations; hadrtn17*: Hadamard + RTN on a 17-level grid (log2 17 = 4.09 bits per entry, no
# less than NestQuant's 4.06 at q = 14): the lattice replaced by a scalar quantizer at NestQuant's bits (the
# equal-budget mechanism ablation; hadrtn* is QuaRot's 4-bit analogue at 4.00 bits)
METHODS = ("rtn", "hadrtn", "hadrtn_ldlq", "hadrtn17", "hadrtn17_ldlq", "nestquant", "nestquant_ldlq")
ROTATED = {"hadrtn", "hadrtn_ldlq", "hadrtn17", "hadrtn17_ldlq", "nestquant", "nestquant_ldlq"}
WIDE_LEVELS = 17  # levels of the hadrtn17 methods


def _levels(method: str) -> int | None:
    return WIDE_LEVELS if method.startswith("hadrtn17") else None


def _row_scaled(w: torch.Tensor, scale: torch.Tensor, quantize):
    """Quantizer of a column block of W for LDLQ: row scales fixed up front from the whole row."""
    return lambda block: quantize(block / scale) * scale


def _weight_quantizer(method: str, q: int, betas: list[float], bits: int):
    if method == GRID_TRAP:
        from methods.common.lm.gguf import rtn_asymmetric

        return lambda w: rtn_asymmetric(w, bits, 32)
    if method.startswith("nestquant"):
        return lambda w: nestquant(w, q, betas)
    return lambda w: rtn(w, bits, levels=_levels(method))


def ldlq_weights(
    model,
    method: str,
    hessians: dict,
    q: int,
    betas: list[float],
    bits: int,
    seed: int,
    names: list[str],
    rotation: str = "kronecker",
) -> dict[str, torch.Tensor]:
    """LDLQ-quantized rotated weights W R^T per linear, from the Hessian of rotated inputs R H R^T.
    Seeds and rotations match those `quantize_linears` gives the same names (seed + index)."""
    out = {}
    levels = _levels(method)
    qmax = 2 ** (bits - 1) - 1 if levels is None else (levels - 1) // 2
    lo = -qmax - 1 if levels is None else -qmax
    for i, name in enumerate(names):
        lin = model.get_submodule(name)
        signs = random_hadamard(lin.in_features, seed + i)
        w = rotate(lin.weight.detach().float(), signs, rotation)
        h = hessians[name]["hessian"].float()
        h_rot = rotate(rotate(h, signs, rotation).T.contiguous(), signs, rotation)  # R H R^T
        k = w.shape[1]
        if method.startswith("nestquant"):  # rows at norm sqrt(K) with the exact scale, as the official quantsim
            scale = (w.norm(dim=1, keepdim=True) / math.sqrt(k)).clamp_min(1e-8)
            block_q = _row_scaled(w, scale, lambda b: nestquant(b, q, betas, scale_rows=False))
        else:  # per-channel absmax scale of the rotated row, as GPTQ fixes it before the sweep
            scale = (w.abs().amax(1, keepdim=True) / qmax).half().float().clamp_min(1e-8)
            block_q = _row_scaled(w, scale, lambda b: torch.clamp(torch.round(b), lo, qmax))
        out[name] = ldlq(w, h_rot, block_q)
    return out


def quantize_model(
    model,
    method: str,
    setting: str,
    q: int,
    betas: dict,
    bits: int,
    seed: int,
    head_dim: int,
    hessians: dict | None,
    skip: tuple[str, ...],
    rotation: str = "kronecker",
    kv_cache: str = "post_rope",
    ldlq_cache: dict | None = None,
):
    """A quantized copy of `model`: `setting` w4 (weights) or w4a4kv4 (+ activations, keys, values).
    `rotation`: the Hadamard construction for widths that are not powers of two (quant.ROTATIONS);
    `kv_cache`: where keys and values are quantized (KV_CACHES; post_rope is the official code's).
    `ldlq_cache`: a dict that keeps the LDLQ weights of each method, so that the settings of one method (same
    seed, Hessians and rotations: the same weights) compute them once."""
    _check_kv_cache(kv_cache)
    if setting not in SETTINGS:
        raise ValueError(f"quantize_model: setting {setting!r} is not one of {SETTINGS}")
    if method == FP:
        return model
    if method == GRID_TRAP and setting != "w4":
        raise ValueError(f"quantize_model: {GRID_TRAP} (the grid-trap baseline) quantizes weights only, not {setting}")
    m = copy.deepcopy(model)
    names = linear_names(m, skip=skip)
    rotated = method in ROTATED
    w_q = _weight_quantizer(method, q, betas["weights"], bits)
    weights = None
    if method.endswith("_ldlq"):
        if hessians is None:
            raise ValueError(f"quantize_model: method {method} needs calibration Hessians")
        if ldlq_cache is not None and method in ldlq_cache:
            weights = ldlq_cache[method]
        else:
            weights = ldlq_weights(m, method, hessians, q, betas["weights"], bits, seed, names, rotation)
            if ldlq_cache is not None:
                ldlq_cache[method] = weights
    act_q = _activation_quantizer(method, setting, q, betas, bits)
    quantize_linears(m, w_q, act_q, seed, rotate_input=rotated, weights=weights, names=names, rotation=rotation)
    if setting == "w4a4kv4":
        _quantize_kv_cache(m, method, q, betas, bits, head_dim, seed, rotated, rotation, kv_cache)
    return m


SETTINGS = ("w4", "w4a4kv4")


def _check_kv_cache(kv_cache: str) -> None:
    if kv_cache not in KV_CACHES:
        raise ValueError(f"kv_cache {kv_cache!r} is not one of {KV_CACHES} (config key nestquant.quant.kv_cache)")


def linear_proxy_error(w: torch.Tensor, mod, hessian: torch.Tensor) -> float:
    """tr(dW H dW^T) / tr(W H W^T) of one QuantLinear `mod` against its dense weight `w`, H the Hessian of the
    layer's inputs: the layer-output error that LDLQ minimizes. A rotated layer's Ŵ lives in the rotated basis
    (W R^T against R H R^T); R is orthogonal, so the same number is tr(E H E^T) with E = unrotate(Ŵ) - W, which
    rotates a weight-sized matrix once instead of the Hessian twice."""
    from .quant import proxy_loss, unrotate

    w_hat = unrotate(mod.weight_hat, mod.signs, mod.rotation) if mod.rotate_input else mod.weight_hat
    return proxy_loss(w, w_hat, hessian) / proxy_loss(w, torch.zeros_like(w), hessian)


def weight_proxy_error(model_q, model, hessians: dict) -> float:
    """Mean over linears of `linear_proxy_error` on the calibration inputs (QuantLinear holds the rotation
    signs)."""
    from .model import QuantLinear

    return float(
        np.mean(
            [
                linear_proxy_error(
                    model.get_submodule(name).weight.detach().float(), mod, hessians[name]["hessian"].float()
                )
                for name, mod in model_q.named_modules()
                if isinstance(mod, QuantLinear) and name in hessians
            ]
        )
    )


def _betas(cfg: dict, q: int) -> dict[str, list[float]]:
    return {k: [b / q for b in v] for k, v in cfg["betas"].items()}


def rates(cfg: dict, k: int, head_dim: int) -> dict[str, dict[str, float]]:
    """Bits per entry of weights (rows of length k), activations (tokens of length k) and KV (per head)."""
    q, nb, bits = cfg["q"], len(cfg["betas"]["weights"]), cfg["rtn_bits"]
    return {
        "nestquant": {"weights": nestquant_rate(q, nb, k), "kv": nestquant_rate(q, nb, head_dim)},
        "rtn": {"weights": rtn_rate(bits, None, k), "kv": rtn_rate(bits, None, head_dim)},
        "hadrtn17": {
            "weights": rtn_levels_rate(WIDE_LEVELS, k),
            "kv": rtn_levels_rate(WIDE_LEVELS, head_dim),
        },
    }


# --- the causal LM -------------------------------------------------------------------------------


def _trivial(splits: dict, vocab_size: int, evaluation: dict) -> dict:
    """Uniform, unigram and bigram next-token perplexity on the evaluation windows (nulls of the LM claims)."""
    from methods.common.lm.baselines import trivial_perplexities

    out = trivial_perplexities(splits, vocab_size, evaluation["seq_len"], evaluation["max_windows"])
    log("trivial perplexities: " + ", ".join(f"{k} {v:.2f}" for k, v in out.items()))
    return out


def lm_eval(
    model_dir: str,
    tokens: str,
    quant: dict,
    settings: list[str],
    calibration: dict,
    evaluation: dict,
    seed: int,
    threads: int,
    out_json: str,
    device="cpu",
) -> None:
    """Perplexity of fp and every method of METHODS in every setting, rotation and calibration seed `seed`,
    on `device`: the shared causal LM of `model_dir` on the token splits of `tokens` (`lm_tokens()`)."""
    from methods.common.lm import calibration_windows, load_token_splits

    torch.set_num_threads(threads)
    set_seed(seed)
    device = torch.device(device)
    splits = load_token_splits(tokens)
    calib_ids = calibration_windows(splits["train"], calibration["n_windows"], calibration["seq_len"], seed)
    if calibration.get("layerwise", False):
        return _lm_eval_layerwise(model_dir, splits, calib_ids, quant, settings, evaluation, seed, device, out_json)
    _lm_eval_in_memory(
        model_dir, splits, calib_ids, quant, settings, evaluation, seed, device, out_json, model_name="small_llama"
    )


# a 4-bit asymmetric RTN with one scale and one minimum per group of 32 inputs: the layout of the Q4_1 GGUF that
# SmolLM2 is shipped in, so that it reproduces the dense reference's weights exactly (the grid trap); weights
# only (W4), unrotated, 4 + 2 x 16 / 32 = 5 bits per entry. Reported, never a comparator of a claim.
GRID_TRAP = "rtn_asym_g32"


def lm_eval_pretrained(
    model_dir: str,
    calibration_text: str,
    test_text: str,
    quant: dict,
    settings: list[str],
    calibration: dict,
    evaluation: dict,
    seed: int,
    threads: int,
    out_json: str,
    device="cpu",
    model_name: str = "smollm2-135m",
    validation: float = 0.1,
) -> None:
    """`lm_eval` for a pretrained LM with its own tokenizer on the Wikipedia text (`lm_wikipedia`): calibration
    windows drawn (seed `seed`) from the calibration articles, perplexity on `evaluation.max_windows` windows
    spread evenly over the test articles (the same windows for every seed and method), and the grid-trap baseline
    (GRID_TRAP) at W4. The trivial predictors fit their counts on the calibration tokens, the last `validation`
    fraction held out to choose the bigram's interpolation weight."""
    from methods.common.lm import calibration_windows
    from methods.common.lm.wikipedia import wikipedia_splits, window_bos

    torch.set_num_threads(threads)
    set_seed(seed)
    device = torch.device(device)
    tokenizer = _tokenizer(model_dir)
    splits = wikipedia_splits(
        tokenizer, calibration_text, test_text, evaluation["seq_len"], evaluation["max_windows"], validation
    )
    # the calibration windows are drawn from every calibration article, the held-out part included
    cal = torch.cat([splits["train"], splits["validation"]])
    calib_ids = calibration_windows(cal, calibration["n_windows"], calibration["seq_len"], seed, window_bos(tokenizer))
    log(f"{model_name}: {calib_ids.shape[0]} calibration windows of {calibration['seq_len']}")
    _lm_eval_in_memory(
        model_dir,
        splits,
        calib_ids,
        quant,
        settings,
        {**evaluation, "max_windows": None},  # the test split holds exactly the chosen windows
        seed,
        device,
        out_json,
        model_name=model_name,
        extra_w4=(GRID_TRAP,),
    )


def _tokenizer(model_dir: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(model_dir))


def _lm_eval_in_memory(
    model_dir: str,
    splits: dict,
    calib_ids,
    quant: dict,
    settings: list[str],
    evaluation: dict,
    seed: int,
    device: torch.device,
    out_json: str,
    model_name: str,
    extra_w4: tuple[str, ...] = (),
) -> None:
    """The fp32 model in memory, one quantized copy per method (`quantize_model`); `extra_w4`: methods run at
    W4 only (GRID_TRAP)."""
    from methods.common.lm import capture_linear_inputs, load_causal_lm, perplexity

    model, _ = load_causal_lm(model_dir, device=device)
    model = model.float()
    cfg = model.config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    t0 = time.perf_counter()
    hessians = capture_linear_inputs(model, calib_ids, stats=("hessian",), batch_size=4)
    # kept in float32 (accumulated in float64; LDLQ works in float64 again): half the memory
    hessians = {k: {s: v.float() if torch.is_tensor(v) else v for s, v in d.items()} for k, d in hessians.items()}
    log(f"calibration Hessians of {len(hessians)} linears ({time.perf_counter() - t0:.1f} s)")
    ppl = lambda m: perplexity(  # noqa: E731
        m,
        splits["test"],
        evaluation["seq_len"],
        evaluation["batch_size"],
        evaluation["max_windows"],
    )
    t0 = time.perf_counter()
    results = {FP: {"perplexity": ppl(model), "seconds": time.perf_counter() - t0}}
    log(f"fp perplexity {results[FP]['perplexity']:.3f} ({results[FP]['seconds']:.1f} s)")
    trivial = _trivial(splits, cfg.vocab_size, evaluation)
    results.update({setting: {} for setting in settings})
    for method in METHODS + extra_w4:  # method by method: its LDLQ weights are computed once for every setting
        ldlq_cache = {}
        weight_error = None  # the same weights in every setting, so the same error: computed once per method
        for setting in settings:
            if method in extra_w4 and setting != "w4":
                continue
            t0 = time.perf_counter()
            m = quantize_model(
                model,
                method,
                setting,
                quant["q"],
                _betas(quant, quant["q"]),
                quant["rtn_bits"],
                seed,
                head_dim,
                hessians,
                skip=("lm_head",),
                rotation=quant["rotation"],
                kv_cache=quant["kv_cache"],
                ldlq_cache=ldlq_cache,
            )
            if weight_error is None:
                weight_error = weight_proxy_error(m, model, hessians)
            results[setting][method] = {
                "perplexity": ppl(m),
                "weight_error": weight_error,
                "seconds": time.perf_counter() - t0,  # the first setting of an LDLQ method includes LDLQ itself
            }
            del m
            r = results[setting][method]
            log(
                f"{setting} {method}: perplexity {r['perplexity']:.3f}, weight proxy error "
                f"{r['weight_error']:.5f} ({r['seconds']:.1f} s)"
            )
    rate = rates(quant, cfg.hidden_size, head_dim)
    if extra_w4:
        rate[GRID_TRAP] = {"weights": GRID_TRAP_RATE}
    write_json(
        out_json,
        {
            "model": model_name,
            "seed": seed,
            "device": str(device),
            "head_dim": head_dim,
            "rotation": quant["rotation"],
            "kv_cache": quant["kv_cache"],
            "rates": rate,
            "results": results,
            "trivial": trivial,
        },
    )


GRID_TRAP_RATE = 4 + 2 * 16 / 32  # 4-bit codes + an fp16 scale and an fp16 minimum per 32 weights


def _lm_eval_layerwise(
    model_dir: str,
    splits: dict,
    calib_ids,
    quant: dict,
    settings: list[str],
    evaluation: dict,
    seed: int,
    device: torch.device,
    out_json: str,
) -> None:
    """`lm_eval` for models that fit one GPU only in their own dtype (Llama-3-8B in bf16): every method
    quantizes a freshly loaded model in place, block by block (`quantize_model_layerwise`)."""
    from methods.common.lm import load_causal_lm, perplexity

    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    load = lambda: load_causal_lm(model_dir, device=device, dtype=dtype)[0]  # noqa: E731
    ppl = lambda m: perplexity(
        m,
        splits["test"],
        evaluation["seq_len"],
        evaluation["batch_size"],  # noqa: E731
        evaluation["max_windows"],
    )
    model = load()
    cfg = model.config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    results = {FP: {"perplexity": ppl(model)}}
    log(f"fp perplexity {results[FP]['perplexity']:.3f} (layerwise, {dtype})")
    trivial = _trivial(splits, cfg.vocab_size, evaluation)
    del model
    for setting in settings:
        results[setting] = {}
        for method in METHODS:
            t0 = time.perf_counter()
            m, errors = quantize_model_layerwise(
                load(),
                method,
                setting,
                quant["q"],
                _betas(quant, quant["q"]),
                quant["rtn_bits"],
                seed,
                head_dim,
                calib_ids,
                skip=("lm_head",),
                rotation=quant["rotation"],
                kv_cache=quant["kv_cache"],
            )
            results[setting][method] = {
                "perplexity": ppl(m),
                "weight_error": float(np.mean(errors)),
                "seconds": time.perf_counter() - t0,
            }
            del m
            if device.type == "cuda":
                torch.cuda.empty_cache()
            r = results[setting][method]
            log(
                f"{setting} {method}: perplexity {r['perplexity']:.3f}, weight proxy error "
                f"{r['weight_error']:.5f} ({r['seconds']:.1f} s)"
            )
    write_json(
        out_json,
        {
            "model": "small_llama",
            "seed": seed,
            "device": str(device),
            "head_dim": head_dim,
            "rotation": quant["rotation"],
            "kv_cache": quant["kv_cache"],
            "layerwise": True,
            "dtype": str(dtype),
            "rates": rates(quant, cfg.hidden_size, head_dim),
            "results": results,
            "trivial": trivial,
        },
    )


# --- MiniLM ---------------------------------------------------------------------------------------


def minilm_eval(
    minilm_dir: str,
    corpus_dir: str,
    pairs_files: dict[str, str],
    quant: dict,
    minilm: dict,
    seed: int,
    threads: int,
    out_json: str,
    device="cpu",
) -> None:
    """all-MiniLM-L6-v2 at W4 (weights only) for every method, on `device`: fidelity to fp embeddings, word-similarity
    Spearman."""
    from methods.common.lm import (
        capture_linear_inputs,
        corpus_sentences,
        embed,
        embedding_fidelity,
        load_minilm,
        mean_embedding_fidelity,
        word_similarity_spearman,
    )

    torch.set_num_threads(threads)
    set_seed(seed)
    dense, tok = load_minilm(minilm_dir, device=device)
    head_dim = dense.config.hidden_size // dense.config.num_attention_heads
    calib = corpus_sentences(
        f"{corpus_dir}/train.txt", minilm["n_calibration"], seed, key="nestquant.minilm.n_calibration"
    )
    eval_sent = corpus_sentences(f"{corpus_dir}/test.txt", minilm["n_eval"], 20_000, key="nestquant.minilm.n_eval")
    enc = dict(tok(calib, padding="max_length", truncation=True, max_length=minilm["max_length"], return_tensors="pt"))
    batches = [{k: v[i : i + 32] for k, v in enc.items()} for i in range(0, len(calib), 32)]
    hessians = capture_linear_inputs(dense, batches, stats=("hessian",))

    reference = embed(dense, tok, eval_sent)  # the fp32 embeddings every method's fidelity reads

    def quality(model):
        out = {"fidelity": embedding_fidelity(model, reference, tok, eval_sent)}
        for key, path in pairs_files.items():
            out[key] = word_similarity_spearman(model, tok, path)
        return out

    results = {FP: quality(dense)}
    # the constant embedding (normalised mean of the calibration sentences' fp embeddings): a null
    trivial = {"fidelity_mean": mean_embedding_fidelity(dense, tok, calib, eval_sent)}
    log(f"minilm constant (mean) embedding fidelity {trivial['fidelity_mean']:.4f}")
    for method in METHODS:
        m = quantize_model(
            dense,
            method,
            "w4",  # weights only: the encoder's activations are not quantized (no KV cache either)
            quant["q"],
            _betas(quant, quant["q"]),
            quant["rtn_bits"],
            seed,
            head_dim,
            hessians,
            skip=("pooler",),
            rotation=quant["rotation"],
            kv_cache=quant["kv_cache"],
        )
        results[method] = {**quality(m), "weight_error": weight_proxy_error(m, dense, hessians)}
        log(
            f"minilm {method}: "
            + ", ".join(f"{k} {'undefined' if v is None else f'{v:.4f}'}" for k, v in results[method].items())
        )
    write_json(
        out_json,
        {
            "model": "minilm",
            "seed": seed,
            "device": str(device),
            "rotation": quant["rotation"],
            "kv_cache": quant["kv_cache"],
            "results": results,
            "trivial": trivial,
        },
    )


# --- layer by layer (paper scale: an 8B model in one GPU's memory) -------------------------------


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
    return (
        (lambda x: nestquant(x, q, betas["activations"]))
        if method.startswith("nestquant")
        else (lambda x: rtn(x, bits, levels=_levels(method)))
    )


def _quantize_kv_cache(
    model,
    method: str,
    q: int,
    betas: dict,
    bits: int,
    head_dim: int,
    seed: int,
    rotated: bool,
    rotation: str = "kronecker",
    kv_cache: str = "post_rope",
) -> None:
    """Quantize the keys and values as the KV cache stores them (rotation seed offsets 10 000 for the keys
    (and queries), 20 000 for the values of the pre_rope path)."""
    _check_kv_cache(kv_cache)

    def kv_quantizer(kind):
        if method.startswith("nestquant"):
            return lambda x, b=betas[kind]: nestquant(x, q, b)
        return lambda x: rtn(x, bits, levels=_levels(method))

    if kv_cache == "post_rope":
        quantize_kv_post_rope(
            model,
            kv_quantizer("keys"),
            kv_quantizer("values"),
            head_dim,
            seed + 10_000,
            rotate_heads=rotated,
            rotation=rotation,
        )
        return
    for kind, suffixes, offset in (
        ("keys", ("k_proj", "attention.self.key"), 10_000),
        ("values", ("v_proj", "attention.self.value"), 20_000),
    ):
        quantize_kv(
            model, kv_quantizer(kind), head_dim, seed + offset, rotate_heads=rotated, names=suffixes, rotation=rotation
        )


def quantize_model_layerwise(
    model,
    method: str,
    setting: str,
    q: int,
    betas: dict,
    bits: int,
    seed: int,
    head_dim: int,
    calib_ids,
    skip: tuple[str, ...],
    batch_size: int = 8,
    rotation: str = "kronecker",
    kv_cache: str = "post_rope",
):
    """`quantize_model` in place, one decoder block at a time, returning (model, weight proxy errors).

    Memory: the model stays in its own dtype; only one block's Hessians and fp32 weights exist at once
    (never an fp32 copy of the model nor every layer's Hessian). Blocks are quantized from the last to
    the first, and each block's calibration pass stops right after that block, so every captured input
    comes from unquantized blocks: the Hessians, LDLQ weights, rotations (seed + global linear index)
    and hence the quantized model are those of the all-at-once path. Cost: about L/2 calibration passes
    for L blocks instead of one."""
    from methods.common.lm import capture_linear_inputs

    from .model import QuantLinear

    _check_kv_cache(kv_cache)
    if setting not in SETTINGS:
        raise ValueError(f"quantize_model_layerwise: setting {setting!r} is not one of {SETTINGS}")
    if method == FP:
        return model, []
    names = linear_names(model, skip=skip)
    index = {n: i for i, n in enumerate(names)}
    rotated = method in ROTATED
    w_q = _weight_quantizer(method, q, betas["weights"], bits)
    act_q = _activation_quantizer(method, setting, q, betas, bits)
    groups = _layer_groups(names)
    order = [g for g in groups if g[0] is None] + [g for g in groups if g[0] is not None][::-1]
    errors = {}
    wrapper = _Stopping(model)
    for prefix, group in order:
        handle = None
        if prefix is not None:

            def stop(module, args, out):
                raise _StopForward

            handle = model.get_submodule(prefix).register_forward_hook(stop)
        try:
            captured = capture_linear_inputs(
                wrapper, calib_ids, stats=("hessian",), names=[f"inner.{n}" for n in group], batch_size=batch_size
            )
        finally:
            if handle is not None:
                handle.remove()
        for name in group:
            h = captured.pop(f"inner.{name}")["hessian"]
            i = index[name]
            weights = None
            if method.endswith("_ldlq"):
                weights = ldlq_weights(
                    model, method, {name: {"hessian": h}}, q, betas["weights"], bits, seed + i, [name], rotation
                )
            w = model.get_submodule(name).weight.detach().float()
            quantize_linears(
                model, w_q, act_q, seed + i, rotate_input=rotated, weights=weights, names=[name], rotation=rotation
            )
            mod = model.get_submodule(name)
            assert isinstance(mod, QuantLinear)
            errors[name] = linear_proxy_error(w, mod, h.float())
            del h, w
    if setting == "w4a4kv4":
        _quantize_kv_cache(model, method, q, betas, bits, head_dim, seed, rotated, rotation, kv_cache)
    return model, [float(errors[n]) for n in names]
