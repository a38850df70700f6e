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
_x3_kn = X3["pa_kn_grid"]
if any(k < 2 or k % 2 for k in _x3_kn["types"]):
    raise ValueError(
        f"config x3audit.pa_kn_grid.types = {_x3_kn['types']}: the hidden-subset family splits the types "
        "into two halves; give even numbers of types >= 2 (e.g. [2, 4, 8])."
    )
if min(_x3_kn["arms"]) < 3 or len(_x3_kn["types"]) * len(_x3_kn["arms"]) < 3:
    raise ValueError(
        f"config x3audit.pa_kn_grid: arms = {_x3_kn['arms']}, types = {_x3_kn['types']}: give arms >= 3 "
        "(one default arm and at least two serving arms) and at least 3 (K, N) points in all (the claim "
        "fits a slope over the grid)."
    )
_x3_zoom = X3["pa_zooming"]
if (
    sorted(set(_x3_zoom["horizons"])) != _x3_zoom["horizons"]
    or len(_x3_zoom["horizons"]) < 2
):
    raise ValueError(
        f"config x3audit.pa_zooming.horizons = {_x3_zoom['horizons']}: give at least 2 distinct horizons "
        "in increasing order (the claim fits a slope over them)."
    )
if _x3_zoom["n_arms"] ** 2 > 16 or _x3_zoom["n_arms"] < 2:
    raise ValueError(
        f"config x3audit.pa_zooming.n_arms = {_x3_zoom['n_arms']}: general incentives need N >= 2 arms, and "
        "the partition of [0, 1]^N and the comparator grid (grid_points^N) grow exponentially in N; use 2 to 4."
    )
if "outcome_process" not in PAPERS:
    raise ValueError(
        "config key 'papers' selects x3audit without outcome_process: x3audit reads outcome_process's "
        "horizon sweep (results/outcome_process/coverage/horizon.json); add outcome_process to 'papers' "
        "or leave 'papers' empty."
    )
X3_OP_HORIZON = f"{paper_dir('outcome_process')}/coverage/horizon.json"
X3_OP = config["outcome_process"]
if X3["op_preference"]["max_iter"] < 1:
    raise ValueError(
        "config x3audit.op_preference.max_iter must be >= 1 (iterations of the Bradley-Terry fit)."
    )


def x3_bd_files():
    return [f"{X3_OUT}/bd_exact/s{s}.json" for s in X3["seeds"]]


def x3_pa_files():
    return [f"{X3_OUT}/pa_lower_bound/s{s}.json" for s in X3["seeds"]]


def x3_kn_files():
    return [f"{X3_OUT}/pa_kn_grid/s{s}.json" for s in X3["seeds"]]


def x3_zoom_files():
    return [f"{X3_OUT}/pa_zooming/s{s}.json" for s in X3["seeds"]]


def x3_bt_files():
    return [f"{X3_OUT}/op_preference/{f}.json" for f in X3_OP["families"]]
