# Config checks and input functions used by workflow/rules/cfdg.smk (its rules live there).

CFDG = config["cfdg"]
CFDG_OUT = paper_dir("cfdg")
CFDG_O2O_DATASETS = list(CFDG["o2o"]["datasets"])


def cfdg_is_bullet():
    """A Bullet locomotion task (pybullet-envs-gymnasium), whose behaviour policy is the pinned pretrained expert."""
    return "BulletEnv" in CFDG["env"]


def cfdg_uses_expert():
    """The data step rolls out the pretrained expert: a Bullet env with a scripted dataset or reference."""
    specs = [*CFDG["datasets"].values(), *CFDG["quality"]["online"].values()]
    return cfdg_is_bullet() and (
        any(sp["source"] == "scripted" for sp in specs)
        or CFDG["reference"]["source"] == "scripted"
    )


def cfdg_expert_wheel():
    """The pinned pybullet wheel whose example file holds the expert's weights ([] where no expert is used)."""
    if not cfdg_uses_expert():
        return []
    return [f"{RESOURCES}/cfdg/{CFDG['expert']['filename']}"]


for _name in CFDG_O2O_DATASETS + [CFDG["quality"]["offline"]]:
    if _name not in CFDG["datasets"]:
        raise ValueError(
            f"config cfdg: dataset {_name!r} (named in cfdg.o2o.datasets or cfdg.quality.offline) is not "
            f"defined under cfdg.datasets ({sorted(CFDG['datasets'])}); add it there or fix the name."
        )
for _name, _spec in {
    **{
        n: CFDG["datasets"][n]
        for n in set(CFDG_O2O_DATASETS + [CFDG["quality"]["offline"]])
    },
    "quality.online.train": CFDG["quality"]["online"]["train"],
    "quality.online.heldout": CFDG["quality"]["online"]["heldout"],
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
    if _spec["source"] == "scripted" and CFDG["env"] != "pendulum":
        _need_key = "expert" if cfdg_is_bullet() else "behaviour"
        if _need_key not in CFDG:
            raise ValueError(
                f"config cfdg.datasets.{_name}: source 'scripted' on {CFDG['env']!r} needs cfdg.{_need_key} "
                f"(its behaviour policies: the pinned pretrained expert on a Bullet task, the gait search on a "
                f"MuJoCo task); add it or use source: minari or npz."
            )
    if _spec["source"] == "scripted" and _spec["n_transitions"] % _spec["n_envs"]:
        raise ValueError(
            f"config cfdg.datasets.{_name}: n_transitions must be a multiple of n_envs."
        )
if CFDG["diffusion"]["guidance_w"] not in CFDG["quality"]["w_grid"]:
    raise ValueError(
        f"config cfdg.diffusion.guidance_w ({CFDG['diffusion']['guidance_w']}) must be one of "
        f"cfdg.quality.w_grid ({CFDG['quality']['w_grid']}): the quality claim reads that weight."
    )
if CFDG["o2o"]["online_steps"] % CFDG["o2o"]["eval_every"]:
    raise ValueError(
        "config cfdg.o2o.online_steps must be a multiple of eval_every (the last evaluation is the final score)."
    )
if CFDG["o2o"]["retrain_every"] >= CFDG["o2o"]["online_steps"]:
    raise ValueError(
        "config cfdg.o2o.retrain_every must be below online_steps, or the augmented agents never get "
        "synthetic data; lower retrain_every."
    )
if CFDG["reference"]["source"] == "fixed" and not {"random", "expert"} <= set(
    CFDG["reference"]
):
    raise ValueError(
        "config cfdg.reference: source 'fixed' needs random and expert returns (D4RL reference scores)."
    )
if (
    CFDG["env"] != "pendulum"
    and CFDG["reference"]["source"] == "scripted"
    and ("expert" if cfdg_is_bullet() else "behaviour") not in CFDG
):
    raise ValueError(
        "config cfdg.reference: source 'scripted' measures the expert's return: it needs cfdg.expert on a "
        "Bullet env (the pinned pretrained policy), cfdg.behaviour on a MuJoCo env (its expert gait)."
    )
if (
    "behaviour" in CFDG
    and CFDG["behaviour"]["elites"] > CFDG["behaviour"]["population"]
):
    raise ValueError(
        "config cfdg.behaviour.elites must not exceed cfdg.behaviour.population."
    )
if len(CFDG["seeds"]) < 2:
    raise ValueError(
        "config cfdg.seeds: at least 2 seeds are needed for the confidence intervals of the return claims."
    )


# The seed groups of the quality and o2o steps: all seeds in one job (one ensemble) at tiny and smoke scale, one
# job per seed at paper scale (seed_groups, workflow/rules/common.smk); the figures and claims steps read every
# group's files in seed order.
CFDG_SEED_GROUPS = seed_groups(CFDG["seeds"])


def cfdg_offline_files():
    names = sorted(CFDG["datasets"])
    return {n: f"{CFDG_OUT}/data/offline_{n}.npz" for n in names}


def cfdg_o2o_files(ext):
    """{offline dataset: [the seed groups' files]} of the o2o step."""
    return {
        n: [f"{CFDG_OUT}/o2o/{n}_{g}.{ext}" for g in CFDG_SEED_GROUPS]
        for n in CFDG_O2O_DATASETS
    }


def cfdg_quality_files(name, ext):
    """[the seed groups' files] of the quality step."""
    return [f"{CFDG_OUT}/quality/{name}_{g}.{ext}" for g in CFDG_SEED_GROUPS]


def cfdg_figures():
    return [f"{CFDG_OUT}/figures/returns.png", f"{CFDG_OUT}/figures/projection.png"]


def _minari_root():
    """Where minari keeps its datasets (its own default unless MINARI_DATASETS_PATH is set)."""
    return Path(
        os.environ.get("MINARI_DATASETS_PATH") or Path.home() / ".minari" / "datasets"
    )


def cfdg_data_prerequisites(wildcards):
    """The files the data step reads that no job of the workflow writes, at paper scale D4RL's successors
    through minari (or a local D4RL-layout .npz where a dataset names one). A missing one fails the dry run
    already, named with its fix."""
    specs = {
        **{f"cfdg.datasets.{n}": CFDG["datasets"][n] for n in sorted(CFDG["datasets"])},
        **{f"cfdg.quality.online.{k}": v for k, v in CFDG["quality"]["online"].items()},
    }
    paths = []
    for key, spec in specs.items():
        if spec["source"] == "minari":
            check = prerequisite(
                str(_minari_root() / spec["id"]),
                f"the minari dataset {spec['id']} ({key})",
                f"On the submit host: `pip install minari && minari download {spec['id']}` (it writes to "
                f"$MINARI_DATASETS_PATH, default ~/.minari/datasets, which the compute nodes must see).",
            )
        elif spec["source"] == "npz":
            check = prerequisite(
                spec["path"],
                f"the D4RL-layout .npz file of {key}",
                f"Put the file there (arrays observations, actions, rewards, next_observations, terminals) or "
                f"change {key}.path.",
            )
        else:
            continue
        found = check(wildcards)
        paths += [found] if isinstance(found, str) else list(found)
    return paths
