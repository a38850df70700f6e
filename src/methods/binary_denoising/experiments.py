"""The training steps of binary_denoising: the mixture experiment (binary_denoising_mixture) and one digits
dataset (binary_denoising_digits), one seed each.

Device: the denoiser and the digits classifier train and run on `device` (the job's GPU at paper scale,
the CPU at tiny scale), and every batch is moved there; the random draws (data, noise, sampler moves)
stay on the CPU generator of the seed, so a CPU and a GPU run of one seed draw the same noise.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch
from torch import nn

from methods.common.io import atomic_path, set_seed, write_json

from .data import load_digits
from .metrics import classifier_score, energy_distance, ess_per_step, weight_tv
from .mixture import random_mixture
from .models import as_denoiser, build_denoiser, train_denoiser
from .samplers import langevin_step, multi_measurement, two_stage_step


def _log(msg: str) -> None:
    print(msg, file=sys.stderr)


def _step_fn(kind: str, alpha: float, denoiser, eta: float, gen: torch.Generator):
    """y, s -> y' for the chosen sampler of q(y | s), driven by a denoiser."""
    if kind == "langevin":
        return lambda y, s: langevin_step(y, denoiser, alpha, eta, s=s, generator=gen)
    if kind == "two_stage":
        return lambda y, s: two_stage_step(y, alpha, s=s, denoiser=denoiser, generator=gen)
    raise ValueError(f"unknown sampler {kind!r}; use langevin or two_stage")


def equal_budget_one_measurement(
    n: int, d: int, alpha: float, m_max: int, steps_per_measurement: int, step_fn, denoiser, gen: torch.Generator
) -> torch.Tensor:
    """The null of the multi-measurement claims at the method's budget: ONE measurement sampled by
    m_max * steps_per_measurement steps of the same sampler (the sampler steps, i.e. the score / denoiser
    evaluations, that m_max measurements use), read out as sign(E[x | alpha y_1])."""
    return multi_measurement(n, d, alpha, 1, m_max * steps_per_measurement, step_fn, denoiser, gen)[1]


def product_of_marginals(n: int, x_train: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """The trivial sampler: independent +-1 bits with the training data's per-bit means (no denoiser at all)."""
    p_plus = ((1 + x_train.float().mean(0)) / 2).clamp(0, 1)
    draw = torch.rand((n, x_train.shape[1]), generator=gen) < p_plus
    return torch.where(draw, 1.0, -1.0)


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


def run_mixture(
    seed: int,
    mix: dict,
    model: dict,
    train: dict,
    sampling: dict,
    out_json: str,
    device: torch.device = torch.device("cpu"),
    threads: int = 1,
) -> None:
    """Mixture of product Bernoulli laws: learned vs analytic denoiser, mixing vs alpha, quality vs m."""
    t0 = time.time()
    torch.set_num_threads(threads)
    set_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    mixture = random_mixture(mix["d"], mix["n_components"], mix["sharpness"], gen)
    x_train, _ = mixture.sample(mix["n_train"], gen)
    x_test, _ = mixture.sample(mix["n_test"], gen)
    alphas = [float(a) for a in sampling["alphas"]]
    mm_alpha, m_max = float(sampling["mm_alpha"]), int(sampling["m_max"])
    net = build_denoiser("mlp", mixture.d, model).to(device)
    history = train_denoiser(
        net, x_train, sorted(set(alphas + [mm_alpha])), m_max, train["steps"], train["batch_size"], train["lr"], gen
    )
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
        samples = multi_measurement(
            sampling["n_samples"],
            mixture.d,
            mm_alpha,
            m_max,
            sampling["steps_per_measurement"],
            _step_fn(sampling["mm_sampler"], mm_alpha, den, sampling["eta"], gen),
            den,
            gen,
        )
        quality[name] = _sample_quality_mixture(samples, mixture, x_test)
    # nulls, drawn after everything above so that the earlier numbers keep their random streams: one
    # measurement at the sampler budget of m_max (learned denoiser), and independent bits with the
    # training marginals (trivial)
    step_fn = _step_fn(sampling["mm_sampler"], mm_alpha, learned, sampling["eta"], gen)
    one = equal_budget_one_measurement(
        sampling["n_samples"], mixture.d, mm_alpha, m_max, sampling["steps_per_measurement"], step_fn, learned, gen
    )
    marg = product_of_marginals(sampling["n_samples"], x_train, gen)
    quality["learned"].update(_sample_quality_mixture({"1_equal_budget": one, "marginals": marg}, mixture, x_test))
    quality["data"] = {
        "log_lik": float(mixture.log_prob(x_test).mean()),
        "energy_split": energy_distance(x_test[: len(x_test) // 2], x_test[len(x_test) // 2 :]),
    }
    _log(f"quality: {quality}")
    write_json(
        out_json,
        {
            "seed": seed,
            "alphas": alphas,
            "mm_alpha": mm_alpha,
            "m_max": m_max,
            "train_loss": history[-1],
            "denoise": denoise,
            "mixing": mixing,
            "quality": quality,
            "weights": mixture.weights.tolist(),
            "seconds": time.time() - t0,
        },
    )


def _train_classifier(
    x: torch.Tensor, labels: torch.Tensor, cfg: dict, gen: torch.Generator, device: torch.device = torch.device("cpu")
) -> nn.Module:
    """A one-hidden-layer classifier of clean binarised digits (for the classifier-based score), on `device`."""
    net = nn.Sequential(nn.Linear(x.shape[1], cfg["hidden"]), nn.ReLU(), nn.Linear(cfg["hidden"], 10)).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=cfg["lr"])
    for _ in range(cfg["steps"]):
        idx = torch.randint(len(x), (cfg["batch_size"],), generator=gen)
        loss = nn.functional.cross_entropy(net(x[idx].to(device)), labels[idx].to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return net.eval()


def run_digits(
    dataset: str,
    seed: int,
    spec: dict,
    data_file: str,
    model: dict,
    train: dict,
    classifier: dict,
    sampling: dict,
    out_json: str,
    out_npz: str,
    device: torch.device = torch.device("cpu"),
    threads: int = 1,
) -> None:
    """Binarised digits: learned denoiser, sequential multi-measurement samples, quality vs m."""
    t0 = time.time()
    torch.set_num_threads(threads)
    set_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    x_all, labels = load_digits(spec, data_file)
    if spec.get("max_images"):
        x_all, labels = x_all[: spec["max_images"]], labels[: spec["max_images"]]
    perm = torch.randperm(len(x_all), generator=gen)
    n_test = int(len(x_all) * spec["test_fraction"])
    x_all, labels = torch.from_numpy(x_all)[perm], torch.from_numpy(labels)[perm]
    x_test, x_train, y_train, y_test = x_all[:n_test], x_all[n_test:], labels[n_test:], labels[:n_test]
    d = x_train.shape[1]
    alpha, m_max = float(sampling["mm_alpha"]), int(sampling["m_max"])
    net = build_denoiser(spec["arch"], d, model[spec["arch"]]).to(device)
    history = train_denoiser(net, x_train, [alpha], m_max, train["steps"], train["batch_size"], train["lr"], gen)
    den = as_denoiser(net)
    clf = _train_classifier(x_train, y_train, classifier, gen, device)
    with torch.no_grad():
        test_acc = float((clf(x_test.to(device)).argmax(1).cpu() == y_test).float().mean())
        score_of = lambda xs: classifier_score(torch.softmax(clf(xs.to(device)), 1).cpu())  # noqa: E731
        samples = multi_measurement(
            sampling["n_samples"],
            d,
            alpha,
            m_max,
            sampling["steps_per_measurement"],
            _step_fn(sampling["mm_sampler"], alpha, den, sampling["eta"], gen),
            den,
            gen,
        )
        # nulls, drawn after the samples (their random streams unchanged): one measurement at the sampler
        # budget of m_max, and independent bits with the training marginals (trivial)
        nulls = {
            "1_equal_budget": equal_budget_one_measurement(
                sampling["n_samples"],
                d,
                alpha,
                m_max,
                sampling["steps_per_measurement"],
                _step_fn(sampling["mm_sampler"], alpha, den, sampling["eta"], gen),
                den,
                gen,
            ),
            "marginals": product_of_marginals(sampling["n_samples"], x_train, gen),
        }
        quality = {
            k: {"energy": energy_distance(xs, x_test), "classifier_score": score_of(xs)}
            for k, xs in {**samples, **nulls}.items()
        }
        reference = {
            "classifier_score": score_of(x_test),
            "classifier_accuracy": test_acc,
            "energy_split": energy_distance(x_test[: n_test // 2], x_test[n_test // 2 :]),
        }
    _log(f"{dataset}: loss {history[0]:.4f} -> {history[-1]:.4f}; quality {quality}; reference {reference}")
    write_json(
        out_json,
        {
            "dataset": dataset,
            "seed": seed,
            "alpha": alpha,
            "m_max": m_max,
            "d": d,
            "train_loss": history[-1],
            "quality": quality,
            "reference": reference,
            "seconds": time.time() - t0,
        },
    )
    side = int(round(np.sqrt(d)))
    grid = np.stack(
        [samples[k][: sampling["grid_columns"]].numpy().reshape(-1, side, side) for k in range(1, m_max + 1)]
    )  # (m, columns, side, side)
    with atomic_path(out_npz) as tmp:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, grid=grid, data=x_test[: sampling["grid_columns"]].numpy().reshape(-1, side, side))
