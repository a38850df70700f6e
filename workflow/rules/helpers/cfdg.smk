# Config checks and input functions used by workflow/rules/cfdg.smk (its rules live there).

CF = config["cfdg"]
CF_OUT = paper_dir("cfdg")
CF_O2O_DATASETS = list(CF["o2o"]["datasets"])

for _name in CF_O2O_DATASETS + [CF["quality"]["offline"]]:
    if _name not in CF["datasets"]:
        raise ValueError(
            f"config cfdg: dataset {_name!r} (named in cfdg.o2o.datasets or cfdg.quality.offline) is not "
            f"defined under cfdg.datasets ({sorted(CF['datasets'])}); add it there or fix the name."
        )
for _name, _spec in {
    **{n: CF["datasets"][n] for n in set(CF_O2O_DATASETS + [CF["quality"]["offline"]])},
    "quality.online.train": CF["quality"]["online"]["train"],
    "quality.online.heldout": CF["quality"]["online"]["heldout"],
}.items():
    if _spec["source"] == "split" and _name != "quality.online.heldout":
        raise ValueError(
            f"config cfdg.datasets.{_name}: source 'split' is only for cfdg.quality.online.heldout."
        )
    _need = {
        "scripted": ["policy", "n_transitions", "n_envs"],
        "npz": ["path"],
        "minari": ["id"],
        "split": ["fraction"],
    }[_spec["source"]]
    _missing = [k for k in _need if k not in _spec]
    if _missing:
        raise ValueError(
            f"config cfdg.datasets.{_name}: source {_spec['source']!r} needs keys {_missing}; add them."
        )
    if (
        _spec["source"] == "scripted"
        and CF["env"] != "pendulum"
        and "behaviour" not in CF
    ):
        raise ValueError(
            f"config cfdg.datasets.{_name}: source 'scripted' on {CF['env']!r} needs cfdg.behaviour (the gait "
            f"search that trains the behaviour policies); add it or use source: minari or npz."
        )
    if _spec["source"] == "scripted" and _spec["n_transitions"] % _spec["n_envs"]:
        raise ValueError(
            f"config cfdg.datasets.{_name}: n_transitions must be a multiple of n_envs."
        )
if CF["diffusion"]["guidance_w"] not in CF["quality"]["w_grid"]:
    raise ValueError(
        f"config cfdg.diffusion.guidance_w ({CF['diffusion']['guidance_w']}) must be one of "
        f"cfdg.quality.w_grid ({CF['quality']['w_grid']}): the quality claim reads that weight."
    )
if CF["o2o"]["online_steps"] % CF["o2o"]["eval_every"]:
    raise ValueError(
        "config cfdg.o2o.online_steps must be a multiple of eval_every (the last evaluation is the final score)."
    )
if CF["o2o"]["retrain_every"] >= CF["o2o"]["online_steps"]:
    raise ValueError(
        "config cfdg.o2o.retrain_every must be below online_steps, or the augmented agents never get "
        "synthetic data; lower retrain_every."
    )
if CF["reference"]["source"] == "fixed" and not {"random", "expert"} <= set(
    CF["reference"]
):
    raise ValueError(
        "config cfdg.reference: source 'fixed' needs random and expert returns (D4RL reference scores)."
    )
if (
    CF["env"] != "pendulum"
    and CF["reference"]["source"] == "scripted"
    and "behaviour" not in CF
):
    raise ValueError(
        "config cfdg.reference: source 'scripted' on a MuJoCo env needs cfdg.behaviour (its expert gait)."
    )
if "behaviour" in CF and CF["behaviour"]["elites"] > CF["behaviour"]["population"]:
    raise ValueError(
        "config cfdg.behaviour.elites must not exceed cfdg.behaviour.population."
    )
if len(CF["seeds"]) < 2:
    raise ValueError(
        "config cfdg.seeds: at least 2 seeds are needed for the confidence intervals of the return claims."
    )


def cf_offline_files():
    names = sorted(CF["datasets"])
    return {n: f"{CF_OUT}/data/offline_{n}.npz" for n in names}


def cf_o2o_files(ext):
    return {n: f"{CF_OUT}/o2o/{n}.{ext}" for n in CF_O2O_DATASETS}


def cf_figures():
    return [f"{CF_OUT}/figures/returns.png", f"{CF_OUT}/figures/projection.png"]
