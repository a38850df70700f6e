# Config checks and input functions used by workflow/rules/neural_bridges.smk (its rules live there).

NEURAL_BRIDGES = config["neural_bridges"]
NEURAL_BRIDGES_OUT = paper_dir("neural_bridges")
NEURAL_BRIDGES_PROCESSES = sorted(NEURAL_BRIDGES["linear"]["processes"])
NEURAL_BRIDGES_EVENTS = ["normal", "rare", "multimodal"]

_bridges_pcn = NEURAL_BRIDGES["cell"]["pcn"]
if _bridges_pcn["burn_in"] >= _bridges_pcn["n_iters"]:
    raise ValueError(
        f"config neural_bridges.cell.pcn.burn_in ({_bridges_pcn['burn_in']}) must be below n_iters "
        f"({_bridges_pcn['n_iters']}): no pCN state would be kept; lower burn_in or raise n_iters."
    )
if (_bridges_pcn["n_iters"] - _bridges_pcn["burn_in"]) < _bridges_pcn["thin"]:
    raise ValueError(
        "config neural_bridges.cell.pcn: n_iters - burn_in must be at least thin so that one state is "
        "kept; raise n_iters or lower thin."
    )
for _ev, _spec in NEURAL_BRIDGES["cell"]["events"].items():
    if len(_spec["x0"]) != 2 or len(_spec["v"]) != 2:
        raise ValueError(
            f"config neural_bridges.cell.events.{_ev}: x0 and v must have 2 entries (the cell model is 2-d)."
        )
    if _spec["T"] / NEURAL_BRIDGES["cell"]["dt"] < 4:
        raise ValueError(
            f"config neural_bridges.cell.events.{_ev}: T / dt is below 4 time steps; lower neural_bridges.cell.dt."
        )
if NEURAL_BRIDGES["train"]["best_window"] > NEURAL_BRIDGES["train"]["n_iters"]:
    raise ValueError(
        "config neural_bridges.train.best_window must not exceed n_iters; lower best_window."
    )
for _t in NEURAL_BRIDGES["linear"]["eval_times"]:
    if not 0 < _t < 1:
        raise ValueError(
            f"config neural_bridges.linear.eval_times: {_t} is not a fraction of T strictly in (0, 1)."
        )


# The seed groups of the linear and cell steps: all seeds in one job at tiny and smoke scale, one job per
# seed at paper scale (seed_groups, workflow/rules/common.smk); the figures and claims steps read every
# group's files in seed order.
NEURAL_BRIDGES_SEED_GROUPS = seed_groups(NEURAL_BRIDGES["seeds"])


def neural_bridges_linear_files(ext):
    """{process: [the seed groups' files]} of the linear step."""
    return {
        p: [
            f"{NEURAL_BRIDGES_OUT}/linear/{p}_{g}.{ext}"
            for g in NEURAL_BRIDGES_SEED_GROUPS
        ]
        for p in NEURAL_BRIDGES_PROCESSES
    }


def neural_bridges_cell_files(ext):
    """{event: [the seed groups' files]} of the cell step."""
    return {
        e: [
            f"{NEURAL_BRIDGES_OUT}/cell/{e}_{g}.{ext}"
            for g in NEURAL_BRIDGES_SEED_GROUPS
        ]
        for e in NEURAL_BRIDGES_EVENTS
    }


def neural_bridges_figures():
    return [
        f"{NEURAL_BRIDGES_OUT}/figures/linear.png",
        f"{NEURAL_BRIDGES_OUT}/figures/cell.png",
    ]
