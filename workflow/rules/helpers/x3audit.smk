# Config checks and input functions used by workflow/rules/x3audit.smk (its rules live there).

X3 = config["x3audit"]
X3_OUT = paper_dir("x3audit")
X3_BD = X3["bd_exact"]

if not 1 <= X3_BD["d"] <= 12:
    raise ValueError(
        f"config x3audit.bd_exact.d = {X3_BD['d']}: exact enumeration holds 2^d states and a 2^d x 2^d "
        "transition matrix; use 1 <= d <= 12."
    )
if len(X3_BD["alphas"]) < 2:
    raise ValueError(
        "config x3audit.bd_exact.alphas needs at least 2 noise levels (the claims compare the smallest "
        "and the largest); add one."
    )
if len(X3_BD["etas"]) < 2:
    raise ValueError(
        "config x3audit.bd_exact.etas needs at least 2 step sizes (the claims compare the smallest and "
        "the largest); add one."
    )
_x3_pa = X3["pa_lower_bound"]
if sorted(_x3_pa["horizons"]) != _x3_pa["horizons"] or len(set(_x3_pa["horizons"])) < 2:
    raise ValueError(
        f"config x3audit.pa_lower_bound.horizons = {_x3_pa['horizons']}: give at least 2 distinct "
        "horizons in increasing order (the claims fit a slope over them)."
    )
if "outcome_process" not in PAPERS:
    raise ValueError(
        "config key 'papers' selects x3audit without outcome_process: x3audit reads outcome_process's "
        "horizon sweep (results/outcome_process/coverage/horizon.json); add outcome_process to 'papers' "
        "or leave 'papers' empty."
    )
X3_OP_HORIZON = f"{paper_dir('outcome_process')}/coverage/horizon.json"


def x3_bd_files():
    return [f"{X3_OUT}/bd_exact/s{s}.json" for s in X3["seeds"]]


def x3_pa_files():
    return [f"{X3_OUT}/pa_lower_bound/s{s}.json" for s in X3["seeds"]]
