"""What each DAG step of binary_denoising does (one function per script in workflow/scripts/binary_denoising)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import atomic_path, read_json, set_seed, write_json
from methods.common.plotting import new_figure, save_figure

from .data import load_digits
from .metrics import classifier_score, energy_distance, ess_per_step, weight_tv
from .mixture import random_mixture
from .models import as_denoiser, build_denoiser, train_denoiser
from .samplers import langevin_step, multi_measurement, two_stage_step

DECLARATION_PATH = Path(__file__).with_name("claims.yaml")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr)


def _step_fn(kind: str, alpha: float, denoiser, eta: float, gen: torch.Generator):
    """y, s -> y' for the chosen sampler of q(y | s), driven by a denoiser."""
    if kind == "langevin":
        return lambda y, s: langevin_step(y, denoiser, alpha, eta, s=s, generator=gen)
    if kind == "two_stage":
        return lambda y, s: two_stage_step(y, alpha, s=s, denoiser=denoiser, generator=gen)
    raise ValueError(f"unknown sampler {kind!r}; use langevin or two_stage")


def _sample_quality_mixture(samples: dict, mixture, x_test: torch.Tensor) -> dict:
    rows = {}
    for k, xs in samples.items():
        assign = mixture.component_log_lik(xs).argmax(1)
        rows[k] = {
            "energy": energy_distance(xs, x_test),
            "weight_tv": weight_tv(assign, mixture.weights),
            "log_lik": float(mixture.log_prob(xs).mean()),
        }
    return rows


def run_mixture(seed: int, mix: dict, model: dict, train: dict, sampling: dict, out_json: str) -> None:
    """Mixture of product Bernoulli laws: learned vs analytic denoiser, mixing vs alpha, quality vs m."""
    t0 = time.time()
    torch.set_num_threads(1)
    set_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    mixture = random_mixture(mix["d"], mix["n_components"], mix["sharpness"], gen)
    x_train, _ = mixture.sample(mix["n_train"], gen)
    x_test, _ = mixture.sample(mix["n_test"], gen)
    alphas = [float(a) for a in sampling["alphas"]]
    mm_alpha, m_max = float(sampling["mm_alpha"]), int(sampling["m_max"])
    net = build_denoiser("mlp", mixture.d, model)
    history = train_denoiser(net, x_train, sorted(set(alphas + [mm_alpha])), m_max,
                             train["steps"], train["batch_size"], train["lr"], gen)
    learned = as_denoiser(net)
    _log(f"trained mlp: loss {history[0]:.4f} -> {np.mean(history[-20:]):.4f} ({time.time() - t0:.1f}s)")

    # denoiser error vs the analytic optimum, one measurement at each alpha
    denoise = {}
    for a in alphas:
        x, _ = mixture.sample(mix["n_test"], gen)
        y = torch.where(torch.rand(x.shape, generator=gen) < (1 + np.tanh(a)) / 2, x, -x)
        h = a * y
        opt, got, naive = mixture.posterior_mean(h), learned(h), torch.tanh(h)
        denoise[a] = {
            "mse_learned": float(((got - opt) ** 2).mean()),
            "mse_naive": float(((naive - opt) ** 2).mean()),
            "hamming_learned": float((torch.where(got >= 0, 1.0, -1.0) != x).float().mean()),
            "hamming_bayes": float((torch.where(opt >= 0, 1.0, -1.0) != x).float().mean()),
        }

    # mixing vs alpha: chains started at stationarity (exact draws of q_alpha), statistic P(k | h)
    mixing = {}
    for a in alphas:
        row = {}
        for kind in ("langevin", "two_stage"):
            step = _step_fn(kind, a, learned, sampling["eta"], gen)
            x0, _ = mixture.sample(sampling["n_chains"], gen)
            y = torch.where(torch.rand(x0.shape, generator=gen) < (1 + np.tanh(a)) / 2, x0, -x0)
            trace = []
            for _ in range(sampling["chain_steps"]):
                y = step(y, None)
                trace.append(mixture.component_posterior(a * y).numpy())
            trace = np.stack(trace)  # (T, C, K)
            ess = [ess_per_step(trace[:, :, k]) for k in range(trace.shape[2])]
            row[kind] = float(np.nanmin(ess))
        mixing[a] = row
        _log(f"alpha={a}: ESS/step {row}")

    # sample quality vs m at fixed alpha, learned and analytic denoisers
    quality = {}
    for name, den in (("learned", learned), ("analytic", mixture.posterior_mean)):
        samples = multi_measurement(sampling["n_samples"], mixture.d, mm_alpha, m_max,
                                    sampling["steps_per_measurement"],
                                    _step_fn(sampling["mm_sampler"], mm_alpha, den, sampling["eta"], gen), den, gen)
        quality[name] = _sample_quality_mixture(samples, mixture, x_test)
    quality["data"] = {"log_lik": float(mixture.log_prob(x_test).mean()),
                       "energy_split": energy_distance(x_test[: len(x_test) // 2], x_test[len(x_test) // 2:])}
    _log(f"quality: {quality}")
    write_json(out_json, {
        "seed": seed, "alphas": alphas, "mm_alpha": mm_alpha, "m_max": m_max,
        "train_loss": history[-1], "denoise": denoise, "mixing": mixing, "quality": quality,
        "weights": mixture.weights.tolist(), "seconds": time.time() - t0,
    })


def _train_classifier(x: torch.Tensor, labels: torch.Tensor, cfg: dict, gen: torch.Generator) -> nn.Module:
    """A one-hidden-layer classifier of clean binarised digits (for the classifier-based score)."""
    net = nn.Sequential(nn.Linear(x.shape[1], cfg["hidden"]), nn.ReLU(), nn.Linear(cfg["hidden"], 10))
    opt = torch.optim.Adam(net.parameters(), lr=cfg["lr"])
    for _ in range(cfg["steps"]):
        idx = torch.randint(len(x), (cfg["batch_size"],), generator=gen)
        loss = nn.functional.cross_entropy(net(x[idx]), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return net.eval()


def run_digits(dataset: str, seed: int, spec: dict, wheel: str | None, root: str, model: dict, train: dict,
               classifier: dict, sampling: dict, out_json: str, out_npz: str) -> None:
    """Binarised digits: learned denoiser, sequential multi-measurement samples, quality vs m."""
    t0 = time.time()
    torch.set_num_threads(1)
    set_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    x_all, labels = load_digits(spec, wheel, root)
    if spec.get("max_images"):
        x_all, labels = x_all[: spec["max_images"]], labels[: spec["max_images"]]
    perm = torch.randperm(len(x_all), generator=gen)
    n_test = int(len(x_all) * spec["test_fraction"])
    x_all, labels = torch.from_numpy(x_all)[perm], torch.from_numpy(labels)[perm]
    x_test, x_train, y_train, y_test = x_all[:n_test], x_all[n_test:], labels[n_test:], labels[:n_test]
    d = x_train.shape[1]
    alpha, m_max = float(sampling["mm_alpha"]), int(sampling["m_max"])
    net = build_denoiser(spec["arch"], d, model[spec["arch"]])
    history = train_denoiser(net, x_train, [alpha], m_max, train["steps"], train["batch_size"], train["lr"], gen)
    den = as_denoiser(net)
    clf = _train_classifier(x_train, y_train, classifier, gen)
    with torch.no_grad():
        test_acc = float((clf(x_test).argmax(1) == y_test).float().mean())
        score_of = lambda xs: classifier_score(torch.softmax(clf(xs), 1))  # noqa: E731
        samples = multi_measurement(sampling["n_samples"], d, alpha, m_max, sampling["steps_per_measurement"],
                                    _step_fn(sampling["mm_sampler"], alpha, den, sampling["eta"], gen), den, gen)
        quality = {k: {"energy": energy_distance(xs, x_test), "classifier_score": score_of(xs)}
                   for k, xs in samples.items()}
        reference = {"classifier_score": score_of(x_test), "classifier_accuracy": test_acc,
                     "energy_split": energy_distance(x_test[: n_test // 2], x_test[n_test // 2:])}
    _log(f"{dataset}: loss {history[0]:.4f} -> {history[-1]:.4f}; quality {quality}; reference {reference}")
    write_json(out_json, {"dataset": dataset, "seed": seed, "alpha": alpha, "m_max": m_max, "d": d,
                          "train_loss": history[-1], "quality": quality, "reference": reference,
                          "seconds": time.time() - t0})
    side = int(round(np.sqrt(d)))
    grid = np.stack([samples[k][: sampling["grid_columns"]].numpy().reshape(-1, side, side)
                     for k in range(1, m_max + 1)])  # (m, columns, side, side)
    with atomic_path(out_npz) as tmp:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, grid=grid, data=x_test[: sampling["grid_columns"]].numpy().reshape(-1, side, side))


def plot_sample_grid(npz_path: str, dataset: str, out_png: str) -> None:
    """Rows: samples after m = 1, 2, ... measurements (last row: held-out data)."""
    z = np.load(npz_path)
    rows = list(z["grid"]) + [z["data"]]
    n_rows, n_cols = len(rows), rows[0].shape[0]
    fig, axes = new_figure(n_rows, n_cols, width=0.6 * n_cols + 1, height=0.6 * n_rows + 0.5, squeeze=False)
    for r, row in enumerate(rows):
        for c in range(n_cols):
            ax = axes[r, c]
            ax.imshow(row[c], cmap="gray_r", vmin=-1, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            ax.spines[:].set_visible(False)  # images need no axis lines
        axes[r, 0].set_ylabel("data" if r == n_rows - 1 else f"m={r + 1}", fontsize=7)
    fig.suptitle(f"{dataset}: sign(E[x | y_1..y_m]) of sequential samples")
    save_figure(fig, out_png)


def plot_mixing(mixture_files: list[str], out_png: str) -> None:
    """ESS per step vs alpha (mean over seeds) for both samplers."""
    docs = [read_json(f) for f in mixture_files]
    alphas = docs[0]["alphas"]
    fig, ax = new_figure(width=5, height=3.5)
    for kind in ("langevin", "two_stage"):
        vals = np.array([[doc["mixing"][str(a)][kind] for a in alphas] for doc in docs])
        ax.errorbar(alphas, vals.mean(0), yerr=vals.std(0), marker="o", label=kind)
    ax.set_xlabel("alpha (larger = less noise)")
    ax.set_ylabel("ESS per step (slowest component)")
    ax.set_yscale("log")
    ax.legend()
    save_figure(fig, out_png)


def plot_quality(mixture_files: list[str], digits_files: dict, out_png: str) -> None:
    """Energy distance to held-out data vs the number of measurements m, per dataset."""
    fig, ax = new_figure(width=5, height=3.5)
    groups = {"mixture": [read_json(f)["quality"]["learned"] for f in mixture_files]}
    groups.update({ds: [read_json(f)["quality"] for f in files] for ds, files in digits_files.items()})
    for name, quals in groups.items():
        ms = sorted(int(k) for k in quals[0])
        vals = np.array([[q[str(m)]["energy"] for m in ms] for q in quals])
        ax.errorbar(ms, vals.mean(0), yerr=vals.std(0), marker="o", label=name)
    ax.set_xlabel("measurements m (fixed alpha)")
    ax.set_ylabel("energy distance / sqrt(d)")
    ax.legend()
    save_figure(fig, out_png)


def exact_metrics(doc: dict) -> dict:
    """Metrics of one seed's exact enumeration of the one-stage chain (S1) (exact.exact_chain_metrics).

    high_noise / low_noise: the smallest / largest alpha of the grid (small alpha = high noise);
    eta_small / eta_large: the smallest / largest step size of the bias measurement."""
    rows = sorted(doc["rows"], key=lambda r: r["alpha"])
    etas = sorted(float(e) for e in doc["etas"])
    main = str(doc["eta"])
    high, low = rows[0], rows[-1]
    return {
        "slem_high_noise": high["slem"], "slem_low_noise": low["slem"],
        "dobrushin_high_noise": high["dobrushin"], "dobrushin_low_noise": low["dobrushin"],
        "rate_excess": max(r["slem"] - r["dobrushin"] for r in rows),
        "bias_high_noise": high["bias_tv"][main], "bias_low_noise": low["bias_tv"][main],
        "bias_eta_small": float(np.mean([r["bias_tv"][str(etas[0])] for r in rows])),
        "bias_eta_large": float(np.mean([r["bias_tv"][str(etas[-1])] for r in rows])),
        "mh_tv_max": max(max(r["mh_tv"].values()) for r in rows),
        "marginal_z_max": max(r["chain_marginal_z"] for r in rows),
        "z_bound": doc["z_bound"],
    }


def plot_exact(exact_json: str, out_png: str) -> None:
    """Exact enumeration: SLEM and Dobrushin's rate against alpha (left), TV bias of the unadjusted chain (right)."""
    docs = read_json(exact_json)["runs"]
    fig, (ax1, ax2) = new_figure(1, 2, width=10, height=3.8)
    for i, doc in enumerate(docs):
        rows = sorted(doc["rows"], key=lambda r: r["alpha"])
        a = [r["alpha"] for r in rows]
        lab = i == 0
        ax1.plot(a, [r["slem"] for r in rows], "o-", color="C0", label="measured (SLEM)" if lab else None)
        ax1.plot(a, [r["dobrushin"] for r in rows], "s--", color="C3",
                 label="theory (Dobrushin coefficient)" if lab else None)
        for j, e in enumerate(sorted(doc["etas"], key=float)):
            ax2.plot(a, [r["bias_tv"][str(e)] for r in rows], "o-", color=f"C{j}", alpha=0.8,
                     label=f"unadjusted, eta={e}" if lab else None)
    ax1.axhline(1.0, color="grey", lw=0.8)
    ax1.set(xscale="log", xlabel="alpha (small = high noise)", ylabel="contraction rate per step",
            title=f"one-stage chain, d={docs[0]['d']} ({docs[0]['n_states']} states), one line per seed")
    ax2.set(xscale="log", xlabel="alpha", ylabel="TV(stationary law, q_alpha)", title="bias of the unadjusted chain")
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=8)
    save_figure(fig, out_png)


def claims_metrics(mixture_files: list[str], digits_files: dict, exact_json: str) -> dict:
    """The flat {metric: values over seeds} dict that claims.yaml's criteria read (the exact-enumeration
    metrics over the seeds of binary_denoising_exact, one random mixture each)."""
    mix = [read_json(f) for f in mixture_files]
    per_seed = [exact_metrics(doc) for doc in read_json(exact_json)["runs"]]
    out = {k: [m[k] for m in per_seed] for k in per_seed[0]}
    alphas = mix[0]["alphas"]
    lo, hi = str(min(alphas)), str(max(alphas))  # lowest alpha = highest noise
    out["denoiser_gap_ratio"] = [np.mean([v["mse_learned"] / v["mse_naive"] for v in m["denoise"].values()]) for m in mix]
    out["hamming_excess"] = [max(v["hamming_learned"] - v["hamming_bayes"] for v in m["denoise"].values()) for m in mix]
    for kind in ("langevin", "two_stage"):
        out[f"ess_{kind}_high_noise"] = [m["mixing"][lo][kind] for m in mix]
        out[f"ess_{kind}_low_noise"] = [m["mixing"][hi][kind] for m in mix]
    last = str(mix[0]["m_max"])
    for key in ("energy", "weight_tv"):
        out[f"{key}_m1_mixture"] = [m["quality"]["learned"]["1"][key] for m in mix]
        out[f"{key}_mlast_mixture"] = [m["quality"]["learned"][last][key] for m in mix]
    for ds, files in digits_files.items():
        docs = [read_json(f) for f in files]
        last = str(docs[0]["m_max"])
        for key, short in (("energy", "energy"), ("classifier_score", "cscore")):
            out[f"{short}_m1_{ds}"] = [doc["quality"]["1"][key] for doc in docs]
            out[f"{short}_mlast_{ds}"] = [doc["quality"][last][key] for doc in docs]
    return out


def write_paper_claims(mixture_files: list[str], digits_files: dict, exact_json: str, declaration: str, scale: str,
                       claims_path: str, summary_path: str) -> None:
    measured = claims_metrics(mixture_files, digits_files, exact_json)
    doc = evaluate_claims(load_declaration(declaration), measured, scale, expand_over={"dataset": list(digits_files)})
    write_claims(claims_path, doc)
    write_json(summary_path, measured)
    for c in doc["claims"]:
        _log(f"{c['id']}: {c['verdict']}")
