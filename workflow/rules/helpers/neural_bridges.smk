# Config checks and input functions used by workflow/rules/neural_bridges.smk (its rules live there).

NB = config["neural_bridges"]
NB_OUT = paper_dir("neural_bridges")
NB_PROCESSES = sorted(NB["linear"]["processes"])
NB_EVENTS = ["normal", "rare", "multimodal"]

_nb_pcn = NB["cell"]["pcn"]
if _nb_pcn["burn_in"] >= _nb_pcn["n_iters"]:
    raise ValueError(
        f"config neural_bridges.cell.pcn.burn_in ({_nb_pcn['burn_in']}) must be below n_iters "
        f"({_nb_pcn['n_iters']}): no pCN state would be kept; lower burn_in or raise n_iters."
    )
if (_nb_pcn["n_iters"] - _nb_pcn["burn_in"]) < _nb_pcn["thin"]:
    raise ValueError(
        "config neural_bridges.cell.pcn: n_iters - burn_in must be at least thin so that one state is "
        "kept; raise n_iters or lower thin."
    )
for _ev, _spec in NB["cell"]["events"].items():
    if len(_spec["x0"]) != 2 or len(_spec["v"]) != 2:
        raise ValueError(
            f"config neural_bridges.cell.events.{_ev}: x0 and v must have 2 entries (the cell model is 2-d)."
        )
    if _spec["T"] / NB["cell"]["dt"] < 4:
        raise ValueError(
            f"config neural_bridges.cell.events.{_ev}: T / dt is below 4 time steps; lower neural_bridges.cell.dt."
        )
if NB["train"]["best_window"] > NB["train"]["n_iters"]:
    raise ValueError(
        "config neural_bridges.train.best_window must not exceed n_iters; lower best_window."
    )
for _t in NB["linear"]["eval_times"]:
    if not 0 < _t < 1:
        raise ValueError(
            f"config neural_bridges.linear.eval_times: {_t} is not a fraction of T strictly in (0, 1)."
        )


def nb_linear_files(ext):
    return {p: f"{NB_OUT}/linear/{p}.{ext}" for p in NB_PROCESSES}


def nb_cell_files(ext):
    return {e: f"{NB_OUT}/cell/{e}.{ext}" for e in NB_EVENTS}


def nb_figures():
    return [f"{NB_OUT}/figures/linear.png", f"{NB_OUT}/figures/cell.png"]
