"""What each step of the HypotheSAEs DAG does (workflow/rules/hypothesaes.smk); one function per script.

(hypothesaes_data lives in data.py, prepare_dataset, so that edits here do not redo the embeddings)
run_experiment   per seed and method: features -> selection -> interpretation -> held-out validation
write_paper_claims  claims.json, the figure and the table of top hypotheses
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import atomic_path, log, read_json, write_json

from .features import method_features
from .interpret import InterpretConfig, TermInterpreter, interpret_dense_feature, interpret_feature
from .select import select_features
from .validate import recovery_f1, significant_hypotheses

DECLARATION = Path(__file__).with_name("claims.yaml")
BASELINES = ("pca", "raw", "lda")


# --- data -------------------------------------------------------------------------------------

def load_dataset_files(npz: str, meta_json: str) -> dict:
    with np.load(npz, allow_pickle=False) as z:
        d = {k: z[k] for k in z.files}
    meta = read_json(meta_json)
    idx = {s: d[f"idx_{s}"] for s in ("train", "val", "test")}
    return {"emb": {s: d["embeddings"][i] for s, i in idx.items()}, "y": d["y"], "terms": d["terms"], "idx": idx,
            **meta}


# --- the method and its baselines --------------------------------------------------------------

def make_interpreter(cfg: dict, ds: dict):
    if cfg["kind"] == "terms":
        return TermInterpreter(ds["term_names"], ds["terms"])
    from .llm import ChatClient, LLMInterpreter

    llm = cfg["llm"]
    client = ChatClient(llm["endpoint"], llm["model"], llm.get("api_key_env"), llm["timeout_s"])
    return LLMInterpreter(ds["texts"], client, temperature=llm["temperature"])


def hypotheses_of(feats: dict, y: np.ndarray, idx: dict, selection: dict, interpreter, icfg: InterpretConfig,
                  rng: np.random.Generator, sparse: bool) -> list[dict]:
    """Select features on the training split, then interpret each (examples: train; F1 scoring: val).
    `sparse`: the SAE's non-negative neurons, read from their top end as the official code; dense baseline
    features are read per `icfg.dense_sides` (interpret.interpret_dense_feature)."""
    chosen, coef = select_features(selection["method"], feats["train"], y[idx["train"]], selection["n_select"],
                                   classification=is_binary(y))
    interpret = interpret_feature if sparse else interpret_dense_feature
    out = []
    for j, c in zip(chosen, coef):
        centre = float(np.median(feats["train"][:, j]))
        h = interpret((idx["train"], feats["train"][:, j]), (idx["val"], feats["val"][:, j]), centre,
                      interpreter, icfg, rng)
        out.append({"feature": int(j), "selection_coef": float(c), **h})
    return out


def validate(hyps: list[dict], y: np.ndarray, test_idx: np.ndarray, interpreter, alpha: float,
             classification: bool = False) -> dict:
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
    return {"n_significant": res["n_significant"], "n_distinct": len(distinct), "test_r2": res["r2"],
            "bonferroni_threshold": alpha / len(distinct)}


def is_binary(y: np.ndarray) -> bool:
    """A target whose values are all 0 or 1 (and both occur): the classification path."""
    return bool(np.isin(y, (0, 1)).all() and len(np.unique(y)) == 2)


def n_hypotheses(selection: dict, reference: list[str]) -> int:
    """How many hypotheses a method outputs: as many as there are reference hypotheses when they are known
    (the paper's recovery protocol: the official Hungarian matching pairs two lists of equal length, so
    precision = recall = F1 and the ceiling is 1), else selection.n_select."""
    return len(reference) if reference else selection["n_select"]


def run_experiment(npz: list[str], meta_json: list[str], methods: dict, selection: dict, interpret: dict,
                   interpreter: dict, alpha: float, seeds: list[int], out_json: str, threads: int = 1) -> None:
    """Step hypothesaes_run: every method on every seed through the same select/interpret/validate path.

    `npz` / `meta_json`: one dataset file per seed (a synthetic design: seed s runs on its own draw s), or one
    file that every seed shares (the real dataset)."""
    import torch

    torch.set_num_threads(threads)
    if len(npz) != len(meta_json) or len(npz) not in (1, len(seeds)):
        raise ValueError(f"run_experiment: {len(npz)} data files for {len(seeds)} seeds; give one per seed or one")
    files = list(zip(npz, meta_json)) if len(npz) == len(seeds) else list(zip(npz, meta_json)) * len(seeds)
    icfg = InterpretConfig(**interpret)
    runs, datasets = [], []
    for seed, (data_npz, data_json) in zip(seeds, files):
        ds = load_dataset_files(data_npz, data_json)
        interp = make_interpreter(interpreter, ds)
        binary = is_binary(ds["y"])
        # a binary 0/1 target (e.g. party, pairwise clicks) keeps its values: L1-logistic selection and Logit
        # validation, as the official classification=True path; any other target is standardised (OLS path)
        y = ds["y"].astype(float) if binary else \
            (ds["y"] - ds["y"][ds["idx"]["train"]].mean()) / ds["y"][ds["idx"]["train"]].std()
        sel = {**selection, "n_select": n_hypotheses(selection, ds["reference"])}
        datasets.append({"seed": seed, "draw_seed": ds.get("draw_seed"), "reference": ds["reference"],
                         "embed_seconds": ds["embed_seconds"], "concept_pc_alignment": ds.get("concept_pc_alignment")})
        for method, spec in methods.items():
            rng = np.random.default_rng([seed, sorted(methods).index(method)])
            t0 = time.perf_counter()
            feats, info = method_features(method, spec, ds["emb"], ds["texts"], ds["idx"], seed)
            t_feat = time.perf_counter() - t0
            hyps = hypotheses_of(feats, y, ds["idx"], sel, interp, icfg, rng, sparse=method == "sae")
            t_total = time.perf_counter() - t0
            row = {"seed": seed, "method": method, "n_features": int(feats["train"].shape[1]),
                   "n_hypotheses": sel["n_select"], "feature_seconds": t_feat, "method_seconds": t_total,
                   "info": info, "mean_annotation_f1": float(np.mean([h["f1"] for h in hyps])),
                   **validate(hyps, y, ds["idx"]["test"], interp, alpha, binary), "hypotheses": hyps}
            if ds["reference"]:
                sim = getattr(interp, "similarity", None) if interpreter["kind"] == "llm" else None
                rec = recovery_f1([h["hypothesis"] for h in hyps], ds["reference"], sim)
                row.update({"recovery_f1": rec["f1"], "recovery_precision": rec["precision"],
                            "recovery_recall": rec["recall"]})
            log(f"seed {seed} {method}: {row['n_significant']}/{row['n_distinct']} significant, "
                f"R2 {row['test_r2']:.3f}, recovery F1 {row.get('recovery_f1', float('nan')):.3f}, {t_total:.1f} s")
            runs.append(row)
    write_json(out_json, {"source": ds["source"], "alpha": alpha, "target": "binary" if binary else "continuous",
                          "datasets": datasets, "runs": runs})


# --- claims, figure, table ----------------------------------------------------------------------

SYNTHETIC_DESIGNS = {"synthetic": "", "synthetic10": "_first"}   # result name -> metric suffix


def _per_seed(runs: list[dict], method: str, key: str) -> list[float]:
    return [float(r[key]) for r in sorted(runs, key=lambda r: r["seed"]) if r["method"] == method]


def _present(runs: list[dict], methods) -> list[str]:
    return [m for m in methods if any(r["method"] == m for r in runs)]


def claims_metrics(synthetic: dict, real: dict, synthetic10: dict | None = None) -> dict:
    """Flat {metric: values per seed} that claims.yaml reads. Synthetic designs: seed s is its own draw s.
    `synthetic10` (the first design, 10 concepts) gives the same metrics with the suffix `_first`. The
    best baseline is the per-seed maximum over the baselines that ran."""
    m = {}
    for result, suffix in ((synthetic, ""), (synthetic10, "_first")):
        if result is None:
            continue
        for method in _present(result["runs"], ("sae", *BASELINES)):
            m[f"f1_{method}{suffix}"] = _per_seed(result["runs"], method, "recovery_f1")
            m[f"nsig_{method}_synthetic{suffix}"] = _per_seed(result["runs"], method, "n_significant")
        m[f"f1_best_baseline{suffix}"] = list(np.max([m[f"f1_{b}{suffix}"]
                                                      for b in _present(result["runs"], BASELINES)], axis=0))
    for method in _present(real["runs"], ("sae", *BASELINES)):
        m[f"nsig_{method}_real"] = _per_seed(real["runs"], method, "n_significant")
        m[f"r2_{method}_real"] = _per_seed(real["runs"], method, "test_r2")
    m["nsig_best_baseline_real"] = list(np.max([m[f"nsig_{b}_real"] for b in _present(real["runs"], BASELINES)], axis=0))
    return m


def top_hypotheses_table(result: dict, seed: int, title: str) -> str:
    run = next(r for r in result["runs"] if r["method"] == "sae" and r["seed"] == seed)
    lines = [f"### {title} (SAE, seed {seed}; test R² {run['test_r2']:.3f}, {run['n_significant']} of "
             f"{run['n_distinct']} distinct hypotheses significant at p < {run['bonferroni_threshold']:.4g})",
             "", "| neuron | hypothesis | annotation F1 | selection coef | held-out coef | p-value |",
             "|---|---|---|---|---|---|"]
    for h in sorted(run["hypotheses"], key=lambda h: h["test_pvalue"]):
        star = " **\\***" if h["significant"] else ""
        lines.append(f"| {h['feature']} | {h['hypothesis']}{star} | {h['f1']:.2f} | {h['selection_coef']:+.3f} | "
                     f"{h['test_coef']:+.3f} | {h['test_pvalue']:.2g} |")
    return "\n".join(lines)


def plot_methods(metrics: dict, path: str) -> None:
    from methods.common.plotting import new_figure, save_figure

    panels = [("f1_{}", "recovery F1 of reference hypotheses", "synthetic: 20 concepts (one draw per seed)")]
    if "f1_sae_first" in metrics:
        panels.append(("f1_{}_first", "recovery F1 of reference hypotheses", "synthetic: first design, 10 concepts"))
    panels.append(("nsig_{}_real", "significant hypotheses (held out)", "real text: joint OLS, Bonferroni"))
    fig, axes = new_figure(1, len(panels), width=4.5 * len(panels), height=3.6)
    methods = ("sae", *BASELINES)
    for ax, (key, ylabel, title) in zip(axes, panels):
        for i, m in enumerate(methods):
            vals = np.asarray(metrics[key.format(m)], dtype=float)
            ax.bar(i, vals.mean(), color="C0" if m == "sae" else "0.7", yerr=vals.std(ddof=1) if len(vals) > 1 else 0,
                   capsize=4)
            ax.plot(np.full(len(vals), i) + np.linspace(-0.15, 0.15, len(vals)), vals, "k.", ms=5)
        ax.set_xticks(range(len(methods)), [m.upper() for m in methods])
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        if key.startswith("f1"):
            ax.set_ylim(0, 1.05)
    save_figure(fig, path)


def _design_summary(result: dict) -> dict:
    """Per draw: the reference concepts and how close each is to a principal direction (design diagnostic)."""
    out = {}
    for d in result["datasets"]:
        al = d.get("concept_pc_alignment") or {}
        out[str(d["seed"])] = {"reference": d["reference"],
                               "reference_pc_alignment": {r: al.get(r) for r in d["reference"]},
                               "max_concept_pc_corr": max((a["max_abs_corr"] for a in al.values()), default=None)}
    return out


def write_paper_claims(synthetic_json: str, real_json: str, scale: str, claims_path: str, summary_path: str,
                       figure_path: str, table_path: str, synthetic10_json: str | None = None) -> None:
    """Step hypothesaes_claims: measured metrics, verdicts of claims.yaml, figure and hypothesis table."""
    synthetic, real = read_json(synthetic_json), read_json(real_json)
    synthetic10 = read_json(synthetic10_json) if synthetic10_json else None
    measured = claims_metrics(synthetic, real, synthetic10)
    ratio = [a / b if b else float("nan") for a, b in zip(measured["nsig_sae_real"], measured["nsig_best_baseline_real"])]
    sae_seconds = {name: _per_seed(res["runs"], "sae", "method_seconds")
                   for name, res in (("synthetic", synthetic), ("synthetic10", synthetic10), ("real", real)) if res}
    write_json(summary_path, {**measured,
                              "designs": {"synthetic": _design_summary(synthetic),
                                          **({"synthetic10": _design_summary(synthetic10)} if synthetic10 else {})},
                              "nsig_ratio_sae_to_best_baseline_real": ratio,
                              "sae_path_seconds_per_seed": sae_seconds,
                              "embed_seconds": {name: [d["embed_seconds"] for d in res["datasets"]]
                                                for name, res in (("synthetic", synthetic), ("synthetic10", synthetic10),
                                                                  ("real", real)) if res}})
    plot_methods(measured, figure_path)
    seed = min(r["seed"] for r in real["runs"])
    reference = next(d["reference"] for d in synthetic["datasets"] if d["seed"] == seed)
    table = "\n\n".join([top_hypotheses_table(synthetic, seed, f"Synthetic, draw {seed} (planted concepts; "
                                              "reference: " + ", ".join(reference) + ")"),
                         top_hypotheses_table(real, seed, "Real text")])
    with atomic_path(table_path) as tmp:
        Path(tmp).write_text(table + "\n")
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
