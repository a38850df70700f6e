"""What each step of the dpa_logic DAG does (workflow/rules/dpa_logic.smk); one function per script."""
from __future__ import annotations

from pathlib import Path

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json, set_seed

from . import experiments, figures, tabular
from .losses import LOSSES, both_false_excluded

DECLARATION = Path(__file__).with_name("claims.yaml")
# Each derived loss and the known loss it was derived from (one world moved in the lattice).
DERIVED_PARENT = {"dpo_strict": "dpo", "orpo_strict": "orpo_or", "orpo_lenient": "orpo_or"}


def check_losses(losses: list[str], where: str, hparams: dict | None = None) -> None:
    """Unknown or structure-less losses, and overrides of hyper-parameters a loss does not have."""
    for name, hp in (hparams or {}).items():
        unknown = set(hp) - set(LOSSES.get(name, LOSSES["sft"]).hparams)
        if unknown:
            raise ValueError(f"config {where.rsplit('.', 1)[0]}.hparams.{name}: {sorted(unknown)} are not "
                             f"hyper-parameters of {name} (it has {sorted(LOSSES[name].hparams)})")
    for name in losses:
        if name not in LOSSES:
            raise ValueError(f"config {where}: unknown loss {name!r}; known: {sorted(LOSSES)}")
        if LOSSES[name].family == "no_structure":
            raise ValueError(f"config {where}: {name!r} has no preference structure ({LOSSES[name].reason}); "
                             "remove it from the list")


def semantics_experiment(n_points: int, seed: int, lattice_max_n: int, order_points: int, out_json: str) -> None:
    """Decompiled losses vs closed forms; lattice sizes; the entailment order and its monotonicity."""
    doc = {"decompile": experiments.decompile_check(n_points, seed),
           "lattice": experiments.lattice_report(lattice_max_n, order_points, seed)}
    for name, row in doc["decompile"].items():
        log(f"{name}: " + (f"max rel err {row['max_rel_err']:.2e}" if "max_rel_err" in row else row["reason"]))
    log(f"lattice sizes {doc['lattice']['sizes']}; order {doc['lattice']['order_n2']}")
    write_json(out_json, doc)


def tabular_experiment(seed: int, policy: str, task: dict, losses: list[str], hparams: dict, steps: int, lr: float,
                       log_every: int, out_json: str) -> None:
    """One seed of the tabular experiment: every loss from the same initial policy and data."""
    check_losses(losses, "dpa_logic.tabular.losses", hparams)
    set_seed(seed)
    t = tabular.make_task(seed, **task)
    out = {"seed": seed, "policy": policy, "losses": {}}
    for name in losses:
        r = tabular.train_policy(t, name, hparams.get(name, {}), steps, lr, log_every)
        r["excludes_both_false"] = both_false_excluded(name)
        r["family"] = LOSSES[name].family
        out["losses"][name] = r
        out["ref_test_accuracy"] = r["ref_test_accuracy"]
        log(f"seed {seed} {policy} {name}: dlogp_w {r['delta_logp_w']:+.3f} acc {r['test_accuracy']:.3f}")
    write_json(out_json, out)


def lm_experiment(model_id: str, dataset: dict, n_train: int, n_test: int, max_prompt: int, max_response: int,
                  losses: list[str], hparams: dict, steps: int, batch_size: int, lr: float, seeds: list[int],
                  device: str, out_json: str) -> None:
    """Full scale: a causal LM tuned with each compiled loss (methods.dpa_logic.lm)."""
    import torch

    from methods.common.lm.model import load_causal_lm

    from . import lm

    check_losses(losses, "dpa_logic.lm.losses", hparams)
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("dpa_logic.lm.device is cuda but no GPU is visible; set it to cpu or run on a GPU node")
    model, tokenizer = load_causal_lm(model_id, device=device)
    pairs = lm.load_pairs(dataset["path"], dataset.get("data_files"), dataset["split"], n_train + n_test, seed=0)
    if len(pairs) < n_train + n_test:
        raise ValueError(f"dataset {dataset['path']}: {len(pairs)} pairs, fewer than n_train + n_test = "
                         f"{n_train + n_test}; lower dpa_logic.lm.n_train / n_test")
    enc = lm.encode_pairs(tokenizer, pairs, max_prompt, max_response)
    train, test = enc[:n_train], enc[n_train:]
    out = {"model": model_id, "dataset": dataset, "runs": {}}
    for name in losses:
        out["runs"][name] = []
        for seed in seeds:
            r = lm.train_lm(model, tokenizer, train, test, name, hparams.get(name, {}), steps, batch_size, lr, seed)
            r["excludes_both_false"] = both_false_excluded(name)
            out["runs"][name].append(r)
            log(f"lm {name} seed {seed}: dlogp_w {r['delta_logp_w']:+.3f} acc {r['test_reward_accuracy']:.3f}")
    write_json(out_json, out)


def make_figures(semantics_json: str, tabular_files: dict, decompile_png: str, lattice_png: str,
                 training_png: str) -> None:
    sem = read_json(semantics_json)
    figures.plot_decompile(sem, decompile_png)
    figures.plot_lattice(sem, lattice_png)
    figures.plot_training({p: [read_json(f) for f in files] for p, files in tabular_files.items()}, training_png)


# --- claims ---------------------------------------------------------------------------------------

def claims_metrics(semantics_json: str, tabular_files: dict) -> tuple[dict, dict]:
    """Flat metrics for claims.yaml, and the lists its templates expand over. The semantics numbers
    (decompilation errors, lattice sizes, the order) are identities tested in pytest; they are kept here
    for metrics_summary.json."""
    sem = read_json(semantics_json)
    m = {}
    structured = [k for k, v in sem["decompile"].items() if v["family"] != "no_structure"]
    for k in structured:
        m[f"decompile_rel_err_{k}"] = sem["decompile"][k]["max_rel_err"]
    for k in ("ipo", "slic"):
        row = sem["decompile"][k]
        m[f"{k}_margin_err"] = row["margin_max_abs_err"]
        m[f"{k}_increases_in_rho"] = float(row["increases_somewhere_in_rho"])
        m[f"{k}_zero_at_finite_rho"] = float(row["zero_at_finite_rho"])
    lat = sem["lattice"]
    for n, s in lat["sizes"].items():
        m[f"lattice_structures_n{n}"] = s["structures"]
        m[f"lattice_compile_image_n{n}"] = s["compile_image"]
        m[f"lattice_distinct_losses_n{n}"] = s["distinct_loss_functions"]
    order = lat["order_n2"]
    m["order_is_partial_order"] = float(order["reflexive"] and order["antisymmetric"] and order["transitive"])
    m["order_monotone_violations"] = order["monotone_violations"]
    m["order_comparable_pairs"] = order["comparable_pairs"]
    expand = {"structured_loss": structured, "allowing": [], "excluding": [], "derived": [], "derived_strict": [],
              "derived_lenient": [], "policy": []}
    for policy, files in tabular_files.items():
        expand["policy"].append(policy)
        runs = [read_json(f) for f in files]
        losses = list(runs[0]["losses"])
        for name in losses:
            m[f"dlogp_w_{policy}_{name}"] = [r["losses"][name]["delta_logp_w"] for r in runs]
            m[f"acc_{policy}_{name}"] = [r["losses"][name]["test_accuracy"] for r in runs]
            group = "excluding" if runs[0]["losses"][name]["excludes_both_false"] else "allowing"
            key = f"{policy}_{name}"
            if key not in expand[group]:
                expand[group].append(key)
        m[f"acc_{policy}_reference"] = [r["ref_test_accuracy"] for r in runs]
        for child, parent in DERIVED_PARENT.items():
            if child in losses and parent in losses:
                key = f"{policy}_{child}"
                expand["derived"].append(key)
                expand["derived_strict" if both_false_excluded(child) else "derived_lenient"].append(key)
                m[f"dlogp_w_parent_{key}"] = m[f"dlogp_w_{policy}_{parent}"]
                m[f"acc_parent_{key}"] = m[f"acc_{policy}_{parent}"]
                m[f"acc_reference_{key}"] = m[f"acc_{policy}_reference"]
        excl = [n for n in losses if runs[0]["losses"][n]["excludes_both_false"]]
        allow = [n for n in losses if n not in excl]
        m[f"min_dlogp_w_excluding_{policy}"] = [min(r["losses"][n]["delta_logp_w"] for n in excl) for r in runs]
        m[f"max_dlogp_w_allowing_{policy}"] = [max(r["losses"][n]["delta_logp_w"] for n in allow) for r in runs]
    return m, expand


def write_paper_claims(semantics_json: str, tabular_files: dict, scale: str, claims_path: str,
                       summary_path: str) -> None:
    measured, expand = claims_metrics(semantics_json, tabular_files)
    write_json(summary_path, {"metrics": measured, "groups": expand})
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over=expand)
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))

