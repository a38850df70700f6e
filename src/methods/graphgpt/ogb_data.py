"""Full scale: the paper's datasets through the `ogb` loaders, as domain documents (see data).

- PCQM4Mv2 (`ogb.lsc.PCQM4Mv2Dataset`, SMILES + HOMO-LUMO gap): molecules featurized like the
  tiny-scale ones (RDKit, `graphs.mol_to_graph`); train = a sample of the official train split,
  test = a sample of the official validation split (the paper reports validation MAE).
- ogbl-ppa (`ogb.linkproppred.LinkPropPredDataset`): link prediction as in the paper, on a subgraph
  sampled around each queried node pair (the pair plus up to `max_nodes` of their neighbours, the
  queried edge removed), node attribute = the protein's species; positives from the split, negatives
  from its `edge_neg` (random pairs for training). Metric here: accuracy, not Hits@100.

`download` runs the same loaders once on the submit host (rule graphgpt_ogb_download), so that the
compute node's data job finds every file in place and needs no internet.

The ogb files hold numpy arrays; they are read in torch's weights-only mode with numpy's array
classes allowed (`methods.common.io.numpy_safe_globals`), so a shared file can never run code.
"""

from __future__ import annotations

import contextlib
import os
import os.path as osp
from pathlib import Path

import networkx as nx
import numpy as np

from methods.common.io import load_torch, numpy_safe_globals, write_json

from . import graphs as G


@contextlib.contextmanager
def _ogb_loading():
    """ogb's own torch.load calls (weights-only by default) may rebuild numpy arrays; no online version check."""
    import torch

    os.environ.setdefault("OUTDATED_IGNORE", "1")
    with torch.serialization.safe_globals(list(numpy_safe_globals())):
        yield


def download(dataset: str, root: str, manifest: str) -> None:
    """Fetch one ogb dataset (`pcqm4mv2` or `ppa`) into `root` through ogb's own loader (download,
    unpack, its light pre-processing; nothing when the files are there) and write a manifest of its
    files (path relative to `root`, bytes)."""
    with _ogb_loading():
        if dataset == "pcqm4mv2":
            from ogb.lsc import PCQM4Mv2Dataset

            folder = PCQM4Mv2Dataset(root=root, only_smiles=True).folder
        elif dataset == "ppa":
            from ogb.linkproppred import LinkPropPredDataset

            folder = LinkPropPredDataset(name="ogbl-ppa", root=root).root
        else:
            raise ValueError(f"ogb dataset {dataset!r}: expected pcqm4mv2 or ppa (graphgpt.domains.<domain>.source)")
    files = sorted(p for p in Path(folder).rglob("*") if p.is_file())
    write_json(
        manifest,
        {"dataset": dataset, "root": str(root), "files": [[str(p.relative_to(root)), p.stat().st_size] for p in files]},
    )


def _sample(idx, k, rng):
    idx = np.asarray(idx)
    return np.sort(rng.choice(idx, size=min(k, len(idx)), replace=False)) if k else idx


def prepare_pcqm4mv2(root: str, spec: dict, rng: np.random.Generator) -> dict:
    with _ogb_loading():
        from ogb.lsc import PCQM4Mv2Dataset

        ds = PCQM4Mv2Dataset(root=root, only_smiles=True)
    split = load_torch(osp.join(ds.folder, "split_dict.pt"), numpy_safe_globals())
    k = spec.get("max_graphs")
    train, test = _sample(split["train"], k, rng), _sample(split["valid"], k // 10 if k else 0, rng)
    idx = np.concatenate([train, test])
    graphs = [G.smiles_to_graph(ds[int(i)][0]) for i in idx]
    y = [float(ds[int(i)][1]) for i in idx]
    keys = (G.MOL_NODE_KEYS, G.MOL_EDGE_KEYS)
    return {
        "domain": "pcqm4mv2",
        "node_keys": list(keys[0]),
        "edge_keys": list(keys[1]),
        "pretrain": [["pcqm4mv2", i] for i in range(len(idx))],
        "tasks": {
            "pcqm4mv2": {
                "kind": "regression",
                "n_out": 1,
                "graphs": [G.graph_to_record(g, *keys) for g in graphs],
                "y": y,
                "test": list(range(len(train), len(idx))),
            }
        },
    }


def _pair_subgraph(adj, species, u: int, v: int, max_nodes: int, rng) -> tuple[nx.Graph, tuple[int, int]]:
    """Induced subgraph on u, v and up to max_nodes - 2 of their neighbours; the edge (u, v) removed."""
    neigh = np.setdiff1d(np.union1d(adj[u].indices, adj[v].indices), [u, v])
    if len(neigh) > max_nodes - 2:
        neigh = rng.choice(neigh, size=max_nodes - 2, replace=False)
    nodes = [u, v] + sorted(int(n) for n in neigh)
    sub = adj[nodes][:, nodes].tocoo()
    g = nx.Graph()
    for i, n in enumerate(nodes):
        g.add_node(i, species=str(int(species[n])))
    g.add_edges_from((int(a), int(b)) for a, b in zip(sub.row, sub.col) if a < b)
    if g.has_edge(0, 1):
        g.remove_edge(0, 1)
    return g, (0, 1)


def prepare_ppa(root: str, spec: dict, rng: np.random.Generator) -> dict:
    import scipy.sparse as sp

    with _ogb_loading():
        from ogb.linkproppred import LinkPropPredDataset

        ds = LinkPropPredDataset(name="ogbl-ppa", root=root)
    graph = ds[0]
    n = int(graph["num_nodes"])
    ei = np.asarray(graph["edge_index"])
    adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0], ei[1])), shape=(n, n))
    adj = ((adj + adj.T) > 0).astype(np.int8).tocsr()
    species = np.asarray(graph["node_feat"]).argmax(1)
    split_dir = osp.join(ds.root, "split", ds.meta_info["split"])
    parts = {name: load_torch(osp.join(split_dir, f"{name}.pt"), numpy_safe_globals()) for name in ("train", "test")}
    k = spec.get("max_graphs") or 10_000
    pairs, labels = [], []
    pos = np.asarray(parts["train"]["edge"])
    pos = pos[rng.choice(len(pos), size=min(k, len(pos)), replace=False)]
    neg = rng.integers(n, size=(len(pos), 2))
    pairs += list(map(tuple, pos)) + list(map(tuple, neg))
    labels += [1] * len(pos) + [0] * len(neg)
    n_train = len(pairs)
    tpos, tneg = np.asarray(parts["test"]["edge"]), np.asarray(parts["test"]["edge_neg"])
    kt = max(1, k // 10)
    tpos = tpos[rng.choice(len(tpos), size=min(kt, len(tpos)), replace=False)]
    tneg = tneg[rng.choice(len(tneg), size=min(kt, len(tneg)), replace=False)]
    pairs += list(map(tuple, tpos)) + list(map(tuple, tneg))
    labels += [1] * len(tpos) + [0] * len(tneg)
    subs = [_pair_subgraph(adj, species, int(u), int(v), spec.get("max_nodes", 32), rng) for u, v in pairs]
    return {
        "domain": "ppa",
        "node_keys": ["species"],
        "edge_keys": [],
        "pretrain": [["ppa", i] for i in range(n_train)],
        "tasks": {
            "ppa": {
                "kind": "classification",
                "n_out": 2,
                "graphs": [G.graph_to_record(g, ["species"], []) for g, _ in subs],
                "y": [float(v) for v in labels],
                "test": list(range(n_train, len(pairs))),
                "queries": [list(q) for _, q in subs],
            }
        },
    }
