"""Figures: decompilation errors, the lattice of the named structures, training curves (step dpa_logic_figures)."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, read_json
from methods.common.plotting import new_figure, save_figure

ROLE_COLOURS = {"rejected": 0, "ignored": 1, "tie": 2, "accepted": 3}
WORLD_LABELS = ["~w ~l", "w ~l", "~w l", "w l"]


def plot_decompile(semantics: dict, path: str) -> None:
    rows = semantics["decompile"]
    names = list(rows)
    fig, ax = new_figure(width=7.0, height=3.6)
    for i, n in enumerate(names):
        r = rows[n]
        if r["family"] == "no_structure":
            ax.text(i, -15.5, "no exact\nstructure", ha="center", va="bottom", fontsize=7, rotation=90)
            continue
        err = max(r["max_rel_err"], 1e-17)
        colour = "tab:green" if r["family"] == "derived" else "tab:blue"
        ax.bar(i, np.log10(err) + 17, bottom=-17, color=colour)
    ax.axhline(-9, color="k", lw=0.8, ls="--", label="tolerance 1e-9")
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_ylim(-17, -5)
    ax.set_ylabel("log10 max relative error\ncompiled vs closed form")
    ax.set_title("Decompiled structures reproduce each loss (blue: known, green: derived)")
    ax.legend(loc="upper right")
    save_figure(fig, path)


def plot_lattice(semantics: dict, path: str) -> None:
    lat = semantics["lattice"]
    named = lat["named"]
    names = list(named)
    fig, (ax0, ax1) = new_figure(1, 2, width=10.0, height=4.0, gridspec_kw={"width_ratios": [1, 1.4]})
    grid = np.array([[ROLE_COLOURS[r] for r in named[n]["roles"]] for n in names])
    ax0.imshow(grid, cmap="RdYlGn", vmin=0, vmax=3, aspect="auto")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            ax0.text(j, i, named[names[i]]["roles"][j], ha="center", va="center", fontsize=7)
    ax0.set_xticks(range(4), WORLD_LABELS)
    ax0.set_yticks(range(len(names)), names)
    ax0.grid(False)
    ax0.set_title("role of each world (N only: accepted, D only: rejected)")
    # Hasse diagram of the entailment order among the named structures
    edges = [tuple(e) for e in lat["named_order"]]
    cover = [(a, b) for a, b in edges if not any((a, c) in edges and (c, b) in edges for c in names)]
    strength = {
        n: sum(r == "rejected" for r in named[n]["roles"]) - sum(r == "accepted" for r in named[n]["roles"])
        for n in names
    }
    levels = {}
    for n in names:
        levels.setdefault(strength[n], []).append(n)
    pos = {}
    for lev, members in levels.items():
        for k, n in enumerate(members):
            pos[n] = (k - (len(members) - 1) / 2, lev)
    for a, b in cover:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        ax1.annotate("", xy=(xb, yb), xytext=(xa, ya), arrowprops={"arrowstyle": "->", "color": "0.4"})
    for n, (x, y) in pos.items():
        ax1.text(
            x, y, n, ha="center", va="center", fontsize=8, bbox={"boxstyle": "round", "fc": "white", "ec": "tab:blue"}
        )
    xs = [p[0] for p in pos.values()]
    ax1.set_xlim(min(xs) - 1, max(xs) + 1)
    ys = [p[1] for p in pos.values()]
    ax1.set_ylim(min(ys) - 0.7, max(ys) + 0.7)
    ax1.set_xticks([])
    ax1.set_ylabel("#rejected - #accepted worlds")
    size = lat["sizes"]["2"]
    ax1.set_title(
        f"entailment (upper entails lower: loss >=); n=2: {size['structures']} structures, "
        f"{size['distinct_loss_functions']} distinct losses",
        fontsize=8,
    )
    save_figure(fig, path)


def plot_training(runs: dict, path: str) -> None:
    """runs: {policy: [seed result, ...]}; seed result: {loss: {curve, test_accuracy, excludes_both_false}}."""
    policies = list(runs)
    fig, axes = new_figure(2, len(policies), width=5.0 * len(policies), height=7.0, squeeze=False)
    for c, policy in enumerate(policies):
        seeds = runs[policy]
        losses = list(seeds[0]["losses"])
        ax, bx = axes[0, c], axes[1, c]
        for k, name in enumerate(losses):
            curves = np.array([s["losses"][name]["curve"]["logp_w"] for s in seeds])
            steps = seeds[0]["losses"][name]["curve"]["step"]
            excl = seeds[0]["losses"][name]["excludes_both_false"]
            ax.plot(
                steps,
                curves.mean(0) - curves[:, :1].mean(),
                ls="-" if excl else "--",
                color=f"C{k % 10}",
                label=name + (" (excl.)" if excl else ""),
            )
            acc = [s["losses"][name]["test_accuracy"] for s in seeds]
            bx.bar(k, np.mean(acc), yerr=np.std(acc), color=f"C{k % 10}", hatch="" if excl else "//")
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xlabel("Adam step")
        ax.set_ylabel("mean log pi(y_w) - initial")
        ax.set_title(f"{policy} policy: winner log-probability (dashed: both-false world allowed)", fontsize=8)
        ax.legend(fontsize=6, ncol=2)
        ref = np.mean([s["ref_test_accuracy"] for s in seeds])
        bx.axhline(ref, color="k", lw=0.6, ls=":", label="reference policy")
        bx.set_xticks(range(len(losses)), losses, rotation=45, ha="right")
        bx.set_ylabel("held-out pair accuracy")
        bx.set_ylim(0.3, 1.0)
        bx.legend(fontsize=7)
    save_figure(fig, path)


def write_accuracy_csv(runs: dict, path: str) -> None:
    """The training figure's lower panels as data (claims.yaml's main_figure): per policy and loss the held-out
    pair accuracy, mean and standard deviation over seeds, and whether the loss excludes the both-false world;
    the reference (initial) policy as loss `reference`."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["label", "policy", "loss", "test_accuracy", "sd", "seeds", "excludes_both_false"])
            for policy, seeds in runs.items():
                rows = [
                    (
                        name,
                        [s["losses"][name]["test_accuracy"] for s in seeds],
                        seeds[0]["losses"][name]["excludes_both_false"],
                    )
                    for name in seeds[0]["losses"]
                ]
                rows.append(("reference", [s["ref_test_accuracy"] for s in seeds], ""))
                for name, acc, excl in rows:
                    w.writerow(
                        [f"{policy}/{name}", policy, name, f"{np.mean(acc):.6g}", f"{np.std(acc):.6g}", len(acc), excl]
                    )


def make_figures(
    semantics_json: str, tabular_files: dict, decompile_png: str, lattice_png: str, training_png: str, accuracy_csv: str
) -> None:
    """Step dpa_logic_figures: the three PNGs and the data of the main one."""
    sem = read_json(semantics_json)
    plot_decompile(sem, decompile_png)
    plot_lattice(sem, lattice_png)
    runs = {p: [read_json(f) for f in files] for p, files in tabular_files.items()}
    plot_training(runs, training_png)
    write_accuracy_csv(runs, accuracy_csv)
