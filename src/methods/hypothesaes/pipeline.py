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
from .interpret import InterpretConfig, TermInterpreter, interpret_feature
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
                  rng: np.random.Generator) -> list[dict]:
    """Select features on the training split, then interpret each (examples: train; F1 scoring: val)."""
    chosen, coef = select_features(selection["method"], feats["train"], y[idx["train"]], selection["n_select"],
                                   classification=is_binary(y))
    out = []
    for j, c in zip(chosen, coef):
        centre = float(np.median(feats["train"][:, j]))
        h = interpret_feature((idx["train"], feats["train"][:, j]), (idx["val"], feats["val"][:, j]), centre,
                              interpreter, icfg, rng)
        out.append({"feature": int(j), "selection_coef": float(c), **h})
    return out


def validate(hyps: list[dict], y: np.ndarray, test_idx: np.ndarray, interpreter, alpha: float,
             classification: bool = False) -> dict:
    """Annotate the held-out texts with every hypothesis; one joint OLS (Logit for a binary target);
    Bonferroni over len(hyps)."""
    ann = np.column_stack([interpreter.annotate(test_idx, h["hypothesis"]) for h in hyps]).astype(float)
    res = significant_hypotheses(ann, y[test_idx], alpha, len(hyps), classification)
    for h, c, p, s in zip(hyps, res["coef"], res["pvalue"], res["significant"]):
        h.update({"test_coef": float(c), "test_pvalue": float(p), "significant": bool(s)})
    return {"n_significant": res["n_significant"], "test_r2": res["r2"]}


def is_binary(y: np.ndarray) -> bool:
    """A target whose values are all 0 or 1 (and both occur): the classification path."""
    return bool(np.isin(y, (0, 1)).all() and len(np.unique(y)) == 2)


def n_hypotheses(selection: dict, reference: list[str]) -> int:
    """How many hypotheses a method outputs: as many as there are reference hypotheses when they are known
    (the paper's recovery protocol: the official Hungarian matching pairs two lists of equal length, so
    precision = recall = F1 and the ceiling is 1), else selection.n_select."""
    return len(reference) if reference else selection["n_select"]


def run_experiment(npz: str, meta_json: str, methods: dict, selection: dict, interpret: dict, interpreter: dict,
                   alpha: float, seeds: list[int], out_json: str, threads: int = 1) -> None:
    """Step hypothesaes_run: every method on every seed through the same select/interpret/validate path."""
    import torch

    torch.set_num_threads(threads)
    ds = load_dataset_files(npz, meta_json)
    interp = make_interpreter(interpreter, ds)
    icfg = InterpretConfig(**interpret)
    binary = is_binary(ds["y"])
    # a binary 0/1 target (e.g. party, pairwise clicks) keeps its values: L1-logistic selection and Logit
    # validation, as the official classification=True path; any other target is standardised (OLS path)
    y = ds["y"].astype(float) if binary else \
        (ds["y"] - ds["y"][ds["idx"]["train"]].mean()) / ds["y"][ds["idx"]["train"]].std()
    selection = {**selection, "n_select": n_hypotheses(selection, ds["reference"])}
    runs = []
    for seed in seeds:
        for method, spec in methods.items():
            rng = np.random.default_rng([seed, sorted(methods).index(method)])
            t0 = time.perf_counter()
            feats, info = method_features(method, spec, ds["emb"], ds["texts"], ds["idx"], seed)
            t_feat = time.perf_counter() - t0
            hyps = hypotheses_of(feats, y, ds["idx"], selection, interp, icfg, rng)
            t_total = time.perf_counter() - t0
            row = {"seed": seed, "method": method, "n_features": int(feats["train"].shape[1]),
                   "feature_seconds": t_feat, "method_seconds": t_total, "info": info,
                   "mean_annotation_f1": float(np.mean([h["f1"] for h in hyps])),
                   **validate(hyps, y, ds["idx"]["test"], interp, alpha, binary), "hypotheses": hyps}
            if ds["reference"]:
                sim = getattr(interp, "similarity", None) if interpreter["kind"] == "llm" else None
                rec = recovery_f1([h["hypothesis"] for h in hyps], ds["reference"], sim)
                row.update({"recovery_f1": rec["f1"], "recovery_precision": rec["precision"],
                            "recovery_recall": rec["recall"]})
            log(f"seed {seed} {method}: {row['n_significant']} significant, R2 {row['test_r2']:.3f}, "
                f"recovery F1 {row.get('recovery_f1', float('nan')):.3f}, {t_total:.1f} s")
            runs.append(row)
    write_json(out_json, {"source": ds["source"], "reference": ds["reference"], "n_select": selection["n_select"],
                          "alpha": alpha, "bonferroni_threshold": alpha / selection["n_select"],
                          "embed_seconds": ds["embed_seconds"], "target": "binary" if binary else "continuous",
                          "concept_pc_alignment": ds.get("concept_pc_alignment"), "runs": runs})


# --- claims, figure, table ----------------------------------------------------------------------

def _per_seed(runs: list[dict], method: str, key: str) -> list[float]:
    return [float(r[key]) for r in sorted(runs, key=lambda r: r["seed"]) if r["method"] == method]


def claims_metrics(synthetic: dict, real: dict) -> dict:
    """Flat {metric: values per seed} that claims.yaml reads."""
    m = {}
    for method in ("sae", *BASELINES):
        m[f"f1_{method}"] = _per_seed(synthetic["runs"], method, "recovery_f1")
        m[f"nsig_{method}_synthetic"] = _per_seed(synthetic["runs"], method, "n_significant")
        m[f"nsig_{method}_real"] = _per_seed(real["runs"], method, "n_significant")
        m[f"r2_{method}_real"] = _per_seed(real["runs"], method, "test_r2")
    m["f1_best_baseline"] = list(np.max([m[f"f1_{b}"] for b in BASELINES], axis=0))
    m["nsig_best_baseline_real"] = list(np.max([m[f"nsig_{b}_real"] for b in BASELINES], axis=0))
    m["sae_seconds"] = [a + b for a, b in zip(_per_seed(synthetic["runs"], "sae", "method_seconds"),
                                                _per_seed(real["runs"], "sae", "method_seconds"))]
    m["llm_baseline_measured"] = 0.0
    return m


def top_hypotheses_table(result: dict, seed: int, title: str) -> str:
    run = next(r for r in result["runs"] if r["method"] == "sae" and r["seed"] == seed)
    lines = [f"### {title} (SAE, seed {seed}; test R² {run['test_r2']:.3f}, "
             f"{run['n_significant']}/{len(run['hypotheses'])} significant at p < {result['bonferroni_threshold']:.4g})",
             "", "| neuron | hypothesis | annotation F1 | selection coef | held-out coef | p-value |",
             "|---|---|---|---|---|---|"]
    for h in sorted(run["hypotheses"], key=lambda h: h["test_pvalue"]):
        star = " **\\***" if h["significant"] else ""
        lines.append(f"| {h['feature']} | {h['hypothesis']}{star} | {h['f1']:.2f} | {h['selection_coef']:+.3f} | "
                     f"{h['test_coef']:+.3f} | {h['test_pvalue']:.2g} |")
    return "\n".join(lines)


def plot_methods(metrics: dict, path: str, f1_ceiling: float | None = None) -> None:
    from methods.common.plotting import new_figure, save_figure

    fig, axes = new_figure(1, 2, width=9.0, height=3.6)
    methods = ("sae", *BASELINES)
    for ax, key, ylabel in ((axes[0], "f1_{}", "recovery F1 of reference hypotheses"),
                            (axes[1], "nsig_{}_real", "significant hypotheses (held out)")):
        for i, m in enumerate(methods):
            vals = np.asarray(metrics[key.format(m)], dtype=float)
            ax.bar(i, vals.mean(), color="C0" if m == "sae" else "0.7", yerr=vals.std(ddof=1) if len(vals) > 1 else 0,
                   capsize=4)
            ax.plot(np.full(len(vals), i) + np.linspace(-0.15, 0.15, len(vals)), vals, "k.", ms=5)
        ax.set_xticks(range(len(methods)), [m.upper() for m in methods])
        ax.set_ylabel(ylabel)
    if f1_ceiling is not None:
        axes[0].axhline(f1_ceiling, color="k", ls="--", lw=1)
        axes[0].annotate("ceiling: 2 min(H, R) / (H + R)", (3.45, f1_ceiling), ha="right", va="bottom", fontsize=8)
    axes[0].set_ylim(0, 1.05)
    axes[0].set_title("synthetic: planted concepts")
    axes[1].set_title("real text: joint OLS, Bonferroni")
    save_figure(fig, path)


def write_paper_claims(synthetic_json: str, real_json: str, scale: str, claims_path: str, summary_path: str,
                       figure_path: str, table_path: str) -> None:
    """Step hypothesaes_claims: measured metrics, verdicts of claims.yaml, figure and hypothesis table."""
    synthetic, real = read_json(synthetic_json), read_json(real_json)
    measured = claims_metrics(synthetic, real)
    n_hyp, n_ref = synthetic["n_select"], len(synthetic["reference"])
    ratio = [a / b if b else float("nan") for a, b in zip(measured["nsig_sae_real"], measured["nsig_best_baseline_real"])]
    ceiling = 2 * min(n_hyp, n_ref) / (n_hyp + n_ref)
    alignment = synthetic.get("concept_pc_alignment") or {}
    write_json(summary_path, {**measured, "synthetic_reference": synthetic["reference"],
                              "n_hypotheses": {"synthetic": n_hyp, "real": real["n_select"]},
                              "f1_ceiling": ceiling,
                              "reference_pc_alignment": {r: alignment.get(r) for r in synthetic["reference"]},
                              "max_concept_pc_corr": max((a["max_abs_corr"] for a in alignment.values()),
                                                         default=float("nan")),
                              "nsig_ratio_sae_to_best_baseline_real": ratio,
                              "embed_seconds": {"synthetic": synthetic["embed_seconds"],
                                                "real": real["embed_seconds"]}})
    plot_methods(measured, figure_path, f1_ceiling=ceiling if ceiling < 1 else None)
    seed = min(r["seed"] for r in real["runs"])
    table = "\n\n".join([top_hypotheses_table(synthetic, seed, "Synthetic (planted concepts; reference: "
                                              + ", ".join(synthetic["reference"]) + ")"),
                         top_hypotheses_table(real, seed, "Real text")])
    with atomic_path(table_path) as tmp:
        Path(tmp).write_text(table + "\n")
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
