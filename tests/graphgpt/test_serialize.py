"""Serialization: decode(encode(G)) is G (isomorphic, with attributes); every edge is covered; the
Eulerian walk is a walk on G; jumps separate components; node indices are a cyclic shift."""
import math

import networkx as nx
import numpy as np
import pytest

from methods.graphgpt import graphs as G
from methods.graphgpt.serialize import (BOS, EOS, JUMP, QUERY, EulerianSerializer, Vocab, component_walk, decode,
                                        encode_edgelist, encode_eulerian, eulerize_component)

same = lambda a, b: a == b  # noqa: E731


def attributed(g: nx.Graph, rng) -> nx.Graph:
    g = nx.convert_node_labels_to_integers(g)
    for v in g.nodes:
        g.nodes[v].update(a=str(rng.integers(3)), b=str(rng.integers(2)))
    for u, v in g.edges:
        g.edges[u, v]["t"] = str(rng.integers(4))
    return g


def multi_component_graph(seed: int) -> nx.Graph:
    rng = np.random.default_rng(seed)
    parts = [nx.gnp_random_graph(int(rng.integers(1, 12)), 0.3, seed=seed * 10 + i) for i in range(4)]
    return attributed(nx.disjoint_union_all(parts), rng)


def vocab_for(graphs, n_node_ids=64):
    return Vocab.build(graphs, n_node_ids, ("a", "b"), ("t",))


@pytest.mark.parametrize("encoder", [encode_eulerian, encode_edgelist])
@pytest.mark.parametrize("seed", range(25))
def test_round_trip_random_multicomponent(encoder, seed):
    g = multi_component_graph(seed)
    assert nx.number_connected_components(g) >= 1
    vocab = vocab_for([g])
    tokens = encoder(g, vocab, np.random.default_rng(seed))
    h = decode(tokens, vocab)
    assert nx.is_isomorphic(g, h, node_match=same, edge_match=same)


def test_round_trip_detects_a_changed_attribute():
    """The check above can fail: a flipped edge attribute token breaks edge-attribute isomorphism."""
    g = attributed(nx.cycle_graph(6), np.random.default_rng(0))
    for u, v in g.edges:
        g.edges[u, v]["t"] = "0"
    vocab = Vocab.build([g], 16, ("a", "b"), ("t",))
    vocab = Vocab(vocab.tokens + ["b:t=9"], 16, ("a", "b"), ("t",))
    tokens = encode_eulerian(g, vocab, np.random.default_rng(0))
    i = tokens.index("b:t=0")
    tokens[i] = "b:t=9"
    assert not nx.is_isomorphic(g, decode(tokens, vocab), node_match=same, edge_match=same)


def test_eulerization_duplicates_edges_and_walk_covers_each_once_in_attributes():
    """A star with 4 leaves has 4 odd nodes: eulerize adds edges (a multigraph); the walk still
    covers every original edge, edge attributes appear once per edge, and decoding is exact."""
    rng = np.random.default_rng(1)
    g = attributed(nx.star_graph(4), rng)
    multi = eulerize_component(g)
    assert multi.number_of_edges() > g.number_of_edges()
    assert any(multi.number_of_edges(u, v) > 1 for u, v in g.edges)
    walk = component_walk(multi, g.number_of_edges(), rng)
    steps = {frozenset(e) for e in zip(walk, walk[1:])}
    assert steps == {frozenset(e) for e in g.edges}
    assert len(walk) - 1 > g.number_of_edges()  # some edge is walked twice
    vocab = Vocab.build([g], 16, ("a", "b"), ("t",))
    tokens = encode_eulerian(g, vocab, rng)
    assert sum(t.startswith("b:") for t in tokens) == g.number_of_edges()
    assert nx.is_isomorphic(g, decode(tokens, vocab), node_match=same, edge_match=same)


@pytest.mark.parametrize("seed", range(20))
def test_walk_is_a_path_of_the_graph_covering_every_edge_and_stops_when_covered(seed):
    rng = np.random.default_rng(seed)
    g = nx.connected_watts_strogatz_graph(int(rng.integers(5, 20)), 4, 0.3, seed=seed)
    walk = component_walk(eulerize_component(g), g.number_of_edges(), rng)
    pairs = [frozenset(e) for e in zip(walk, walk[1:])]
    assert all(g.has_edge(*tuple(p)) for p in pairs)
    assert set(pairs) == {frozenset(e) for e in g.edges}
    assert pairs[-1] not in pairs[:-1]  # the last step covers a new edge: the walk stops when all are covered
    if nx.has_eulerian_path(g):
        assert len(pairs) == g.number_of_edges()  # semi-Eulerian: no duplicate walked


def test_jumps_separate_components_and_indices_are_a_cyclic_shift():
    rng = np.random.default_rng(3)
    g = multi_component_graph(3)
    vocab = vocab_for([g], n_node_ids=40)
    tokens = encode_eulerian(g, vocab, rng)
    assert tokens[0] == BOS and tokens[-1] == EOS
    assert tokens.count(JUMP) == nx.number_connected_components(g) - 1
    ids = [int(t[1:]) for t in tokens if t.startswith("n") and t[1:].isdigit()]
    first = list(dict.fromkeys(ids))
    offset = first[0]
    assert first == [(offset + r) % 40 for r in range(g.number_of_nodes())]


def test_random_offsets_cover_all_node_tokens():
    g = nx.path_graph(3)
    vocab = Vocab.build([g], 10)
    rng = np.random.default_rng(0)
    firsts = {encode_eulerian(g, vocab, rng)[1] for _ in range(200)}
    assert firsts == {f"n{i}" for i in range(10)}


def test_query_tokens_name_the_pair():
    g = nx.path_graph(4)
    vocab = Vocab.build([g], 8)
    tokens = EulerianSerializer(g, vocab)(np.random.default_rng(0), query=(0, 3))
    q = tokens.index(QUERY)
    h = decode(tokens, vocab)
    ends = [v for v in h.nodes if h.degree(v) == 1]
    assert {int(t[1:]) for t in tokens[q + 1:]} == set(ends)


def test_too_large_graph_names_the_config_key():
    with pytest.raises(ValueError, match="n_node_ids"):
        encode_eulerian(nx.path_graph(10), Vocab.build([], 5), np.random.default_rng(0))


MOLECULES = ["CC(=O)Oc1ccccc1C(=O)O", "C[N+](C)(C)C.[Cl-]", "c1ccc2ccccc2c1", "OCC1OC(O)C(O)C(O)C1O",
             "[Na+].[O-]C(=O)c1ccccc1", "C#CCO", "FC(F)(F)c1ccc(cc1)S(=O)(=O)N"]


@pytest.mark.parametrize("smiles", MOLECULES)
@pytest.mark.parametrize("encoder", [encode_eulerian, encode_edgelist])
def test_round_trip_molecules(smiles, encoder):
    g = G.smiles_to_graph(smiles)
    vocab = Vocab.build([g], 64, G.MOL_NODE_KEYS, G.MOL_EDGE_KEYS)
    for seed in range(5):
        h = decode(encoder(g, vocab, np.random.default_rng(seed)), vocab)
        assert nx.is_isomorphic(g, h, node_match=same, edge_match=same)


def test_molecule_graph_matches_rdkit():
    g = G.smiles_to_graph("C[N+](C)(C)C.[Cl-]")
    assert sorted(d["atom"] for _, d in g.nodes(data=True)) == ["C", "C", "C", "C", "Cl-", "N+"]
    assert nx.number_connected_components(g) == 2
    aspirin = G.smiles_to_graph("CC(=O)Oc1ccccc1C(=O)O")
    assert aspirin.number_of_nodes() == 13 and aspirin.number_of_edges() == 13
    assert sum(d["bond"] == "AROMATIC" for *_, d in aspirin.edges(data=True)) == 6


def test_eulerian_sequences_are_shorter_than_edge_lists():
    g = G.smiles_to_graph("CC(=O)Oc1ccccc1C(=O)O")
    vocab = Vocab.build([g], 64, G.MOL_NODE_KEYS, G.MOL_EDGE_KEYS)
    rng = np.random.default_rng(0)
    assert len(encode_eulerian(g, vocab, rng)) < len(encode_edgelist(g, vocab, rng))


def test_triangle_count_reference():
    assert G.triangle_count(nx.complete_graph(5)) == math.comb(5, 3)
    assert G.triangle_count(nx.cycle_graph(7)) == 0
