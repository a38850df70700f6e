"""Data-step invariants: bond queries, random structure graphs, per-seed splits, pools decode back."""

import networkx as nx
import numpy as np
import pytest

from methods.common.io import read_json
from methods.graphgpt import graphs as G
from methods.graphgpt.data import prepare_structure, serialize_domain
from methods.graphgpt.finetuning import _seed_split
from methods.graphgpt.serialize import QUERY, Vocab, decode, same_graph


def test_bond_queries_remove_one_bond_and_share_the_graph():
    mols = [G.smiles_to_graph(s) for s in ("CC(=O)Oc1ccccc1C(=O)O", "CCN(CC)CC", "c1ccncc1")]
    out = G.bond_queries(mols, np.random.default_rng(0))
    assert len(out) == 6 and [lab for *_, lab in out] == [1, 0] * 3
    for k, g in enumerate(mols):
        (hp, (u, v), _), (hn, (u2, w), _) = out[2 * k], out[2 * k + 1]
        assert hp is hn and u == u2
        assert g.has_edge(u, v) and not hp.has_edge(u, v) and hp.number_of_edges() == g.number_of_edges() - 1
        assert not g.has_edge(u, w) and w != v


def test_structure_domain_sizes_and_labels(tmp_path):
    path = tmp_path / "s.json"
    prepare_structure(str(path), 0, 30, 10, [6, 9], [15, 18], 2.0, 4)
    doc = read_json(path)
    task = doc["tasks"]["triangles"]
    sizes = [len(r["x"]) for r in task["graphs"]]
    assert all(6 <= n <= 9 for n in sizes[:40]) and all(15 <= n <= 18 for n in sizes[40:])
    assert task["test_ood"] == list(range(40, 50)) and len(doc["pretrain"]) == 30
    g = G.record_to_graph(task["graphs"][0], (), ())
    assert task["y"][0] == min(G.triangle_count(g), 3)
    split = _seed_split(task, 0.2, seed=1)
    parts = [set(split[k].tolist()) for k in ("train", "val", "test", "test_ood")]
    assert sum(map(len, parts)) == 50 and len(set().union(*parts)) == 50
    assert not (set(split["train"]) & set(range(30, 50)))
    assert not np.array_equal(split["val"], _seed_split(task, 0.2, seed=2)["val"])

    serialize_domain(str(path), "eulerian", 32, 3, 0, str(tmp_path / "p.pt"), str(tmp_path / "p.json"))
    stats = read_json(tmp_path / "p.json")
    assert stats["roundtrip_fraction"] == 1.0 and stats["n_channels"] == 2
    assert 0.5 < stats["distinct_views_fraction"] <= 1.0  # random serializations differ


def test_query_decodes_to_the_right_pair():
    g = G.smiles_to_graph("CCO")
    h = g.copy()
    h.remove_edge(1, 2)
    from methods.graphgpt.serialize import EulerianSerializer

    vocab = Vocab.build([g], 16, G.MOL_NODE_KEYS, G.MOL_EDGE_KEYS)
    positions, order = EulerianSerializer(h, vocab)(np.random.default_rng(0), query=(1, 2), return_order=True)
    d = decode(positions, vocab, multigraph=False)
    a, b = (int(p[0][1:]) for p in positions if p[1] == QUERY)
    assert order[a] == 1 and order[b] == 2
    assert d.nodes[b]["atom"] == "O" and d.degree(b) == 0 and d.degree(a) == 1
    assert same_graph(h, d, order)


def test_a_vocabulary_beyond_int16_is_refused_before_serializing():
    """Pools store token ids as int16; a larger vocabulary is named with its fix, not wrapped around."""
    from methods.graphgpt.data import _pool

    g = nx.path_graph(3)
    with pytest.raises(ValueError, match="graphgpt.n_node_ids"):
        _pool([g], None, Vocab.build([g], 40000), "eulerian", 1, np.random.default_rng(0))
