"""Step hypothesaes_run: per seed and method, the features (step hypothesaes_features) -> Lasso selection ->
interpretation -> held-out validation, every method through the same path (paper Sec. 3-4).

At paper scale this step is the LLM's work (hours of API calls, no GPU): interpretation and annotation go
through an OpenAI-compatible API (llm.py), whose replies are cached on disk per job, so a resubmitted job
continues where the killed one stopped.
"""

from __future__ import annotations

import time
import zlib

import numpy as np

from methods.common.io import log, write_json

from .data import load_dataset_files, load_features, per_seed_files
from .interpret import InterpretConfig, TermInterpreter, interpret_dense_feature, interpret_feature
from .select import select_features
from .validate import recovery_f1, significant_hypotheses


def make_interpreter(cfg: dict, ds: dict, llm_cache: str | None = None):
    """The offline substitute (kind terms) or the paper's LLM (kind llm) behind an OpenAI-compatible API."""
    if cfg["kind"] == "terms":
        return TermInterpreter(ds["term_names"], ds["terms"])
    from .llm import ChatClient, LLMInterpreter

    llm = cfg["llm"]
    client = ChatClient(
        llm["endpoint"],
        llm["model"],
        llm.get("api_key_env"),
        llm["timeout_s"],
        max_retries=llm.get("max_retries", 5),
        cache=llm_cache,
    )
    return LLMInterpreter(ds["texts"], client, temperature=llm["temperature"], workers=llm.get("workers", 1))


SPARSE = ("sae", "untrained_sae")  # methods whose non-negative neurons are read from their top end


def hypotheses_of(
    feats: dict,
    y: np.ndarray,
    idx: dict,
    selection: dict,
    interpreter,
    icfg: InterpretConfig,
    rng: np.random.Generator,
    sparse: bool,
) -> list[dict]:
    """Select features on the training split, then interpret each (examples: train; F1 scoring: val).
    `sparse`: the SAE's non-negative neurons, read from their top end as the official code; dense baseline
    features are read per `icfg.dense_sides` (interpret.interpret_dense_feature)."""
    chosen, coef = select_features(
        selection["method"], feats["train"], y[idx["train"]], selection["n_select"], classification=is_binary(y)
    )
    interpret = interpret_feature if sparse else interpret_dense_feature
    out = []
    for j, c in zip(chosen, coef):
        centre = float(np.median(feats["train"][:, j]))
        h = interpret(
            (idx["train"], feats["train"][:, j]), (idx["val"], feats["val"][:, j]), centre, interpreter, icfg, rng
        )
        out.append({"feature": int(j), "selection_coef": float(c), **h})
    return out


def validate(
    hyps: list[dict], y: np.ndarray, test_idx: np.ndarray, interpreter, alpha: float, classification: bool = False
) -> dict:
    """Annotate the held-out texts with every distinct hypothesis; one joint OLS (Logit for a binary
    target); Bonferroni over the distinct hypotheses. As the official score_hypotheses, which keys the
    annotations by hypothesis text: two features given the same hypothesis are one hypothesis."""
    distinct = list(dict.fromkeys(h["hypothesis"] for h in hyps))
    ann = np.column_stack([interpreter.annotate(test_idx, t) for t in distinct]).astype(float)
    res = significant_hypotheses(ann, y[test_idx], alpha, len(distinct), classification)
    by_text = {t: (c, p, s) for t, c, p, s in zip(distinct, res["coef"], res["pvalue"], res["significant"])}
    for h in hyps:
        c, p, s = by_text[h["hypothesis"]]
        h.update({"test_coef": float(c), "test_pvalue": float(p), "significant": bool(s)})
    return {
        "n_significant": res["n_significant"],
        "n_distinct": len(distinct),
        "test_r2": res["r2"],
        "bonferroni_threshold": alpha / len(distinct),
    }


def is_binary(y: np.ndarray) -> bool:
    """A target whose values are all 0 or 1 (and both occur): the classification path."""
    return bool(np.isin(y, (0, 1)).all() and len(np.unique(y)) == 2)


def n_hypotheses(selection: dict, reference: list[str]) -> int:
    """How many hypotheses a method outputs: as many as there are reference hypotheses when they are known
    (the paper's recovery protocol: the official Hungarian matching pairs two lists of equal length, so
    precision = recall = F1 and the ceiling is 1), else selection.n_select."""
    return len(reference) if reference else selection["n_select"]


def run_experiment(
    data_files: list[tuple[str, str]],
    features_npz: str,
    features_json: str,
    methods: list[str],
    selection: dict,
    interpret: dict,
    interpreter: dict,
    alpha: float,
    seeds: list[int],
    out_json: str,
    llm_cache: str | None = None,
) -> None:
    """Step hypothesaes_run: every method on every seed of the group through the same select / interpret /
    validate path. `data_files`: one (npz, json) per seed (a synthetic design: seed s runs on its own draw s),
    or one that every seed shares (the real dataset); `methods`: the config's method names, in config order
    (the interpreter's random stream of a method is keyed by its rank in sorted order)."""
    icfg = InterpretConfig(**interpret)
    runs, datasets = [], []
    for seed, (data_npz, data_json) in zip(seeds, per_seed_files(data_files, seeds)):
        ds = load_dataset_files(data_npz, data_json)
        interp = make_interpreter(interpreter, ds, llm_cache)
        binary = is_binary(ds["y"])
        # a binary 0/1 target (e.g. party, pairwise clicks) keeps its values: L1-logistic selection and Logit
        # validation, as the official classification=True path; any other target is standardised (OLS path)
        y = (
            ds["y"].astype(float)
            if binary
            else (ds["y"] - ds["y"][ds["idx"]["train"]].mean()) / ds["y"][ds["idx"]["train"]].std()
        )
        sel = {**selection, "n_select": n_hypotheses(selection, ds["reference"])}
        datasets.append(
            {
                "seed": seed,
                "draw_seed": ds.get("draw_seed"),
                "reference": ds["reference"],
                "embed_seconds": ds["embed_seconds"],
                "concept_pc_alignment": ds.get("concept_pc_alignment"),
            }
        )
        for method in methods:
            # keyed by the method's name, so adding or removing a method leaves the others' draws as they were
            rng = np.random.default_rng([seed, zlib.crc32(method.encode())])
            feats, frow = load_features(features_npz, features_json, seed, method)
            t0 = time.perf_counter()
            hyps = hypotheses_of(feats, y, ds["idx"], sel, interp, icfg, rng, sparse=method in SPARSE)
            t_total = frow["feature_seconds"] + time.perf_counter() - t0
            row = {
                "seed": seed,
                "method": method,
                "n_features": frow["n_features"],
                "n_hypotheses": sel["n_select"],
                "feature_seconds": frow["feature_seconds"],
                "method_seconds": t_total,
                "info": frow["info"],
                "mean_annotation_f1": float(np.mean([h["f1"] for h in hyps])),
                **validate(hyps, y, ds["idx"]["test"], interp, alpha, binary),
                "hypotheses": hyps,
            }
            if ds["reference"]:
                sim = getattr(interp, "similarity", None) if interpreter["kind"] == "llm" else None
                rec = recovery_f1([h["hypothesis"] for h in hyps], ds["reference"], sim)
                row.update(
                    {"recovery_f1": rec["f1"], "recovery_precision": rec["precision"], "recovery_recall": rec["recall"]}
                )
            log(
                f"seed {seed} {method}: {row['n_significant']}/{row['n_distinct']} significant, "
                f"R2 {row['test_r2']:.3f}, recovery F1 {row.get('recovery_f1', float('nan')):.3f}, {t_total:.1f} s"
            )
            runs.append(row)
    write_json(
        out_json,
        {
            "source": ds["source"],
            "alpha": alpha,
            "target": "binary" if binary else "continuous",
            "datasets": datasets,
            "runs": runs,
        },
    )
