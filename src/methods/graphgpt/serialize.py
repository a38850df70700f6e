"""Graph <-> token sequence, reversibly (GraphGPT, Section 3.1 "Graph to sequence").

A graph is a `networkx.Graph` whose nodes carry string attributes (e.g. `atom`, `hs`) and whose
edges carry string attributes (e.g. `bond`). `encode_eulerian` writes it as

    <bos>  n7 atom=C hs=3  b:bond=SINGLE  n8 atom=O hs=0 ... <jump> n11 ... <eos>

- per connected component (in random order): if the component has no Eulerian path it is
  eulerized (`networkx.eulerize`, which duplicates existing edges so that every degree is even);
  an Eulerian path is taken from a random start (an odd-degree node where the component is
  semi-Eulerian) and cut as soon as every original edge has been walked once;
- components are joined by a `<jump>` token;
- nodes are re-indexed in order of first appearance, shifted cyclically by a random offset:
  node token = (rank + offset) mod n_node_ids, so every node-id token is trained even on small graphs;
- a node's attribute tokens follow its first visit, an edge's attribute tokens precede the node
  reached by its first traversal; a second walk over an edge (a duplicate) carries no attributes.

`encode_edgelist` is the baseline serialization: the edges in random order and orientation, one
edge per segment `u [edge attrs] v <jump>`, with the same re-indexing and attribute tokens. Both are
read back by the same `decode` (an edge list is a sequence of one-edge walks).
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

PAD, BOS, EOS, MASK, JUMP, QUERY = "<pad>", "<bos>", "<eos>", "<mask>", "<jump>", "<query>"
SPECIAL = (PAD, BOS, EOS, MASK, JUMP, QUERY)
NODE_PREFIX, EDGE_PREFIX = "n", "b:"


def node_token(i: int) -> str:
    return f"{NODE_PREFIX}{i}"


def node_attr_token(key: str, value) -> str:
    return f"{key}={value}"


def edge_attr_token(key: str, value) -> str:
    return f"{EDGE_PREFIX}{key}={value}"


@dataclass
class Vocab:
    """Token strings <-> ids: special tokens, `n_node_ids` node-id tokens, then attribute tokens."""

    tokens: list[str]
    n_node_ids: int
    node_keys: tuple[str, ...]
    edge_keys: tuple[str, ...]

    def __post_init__(self):
        self.index = {t: i for i, t in enumerate(self.tokens)}
        if len(self.index) != len(self.tokens):
            raise ValueError("Vocab: duplicate tokens")

    @classmethod
    def build(cls, graphs, n_node_ids: int, node_keys=(), edge_keys=()) -> "Vocab":
        """The vocabulary of a corpus: every attribute value that occurs in `graphs`, sorted."""
        node_tokens, edge_tokens = set(), set()
        for g in graphs:
            for _, d in g.nodes(data=True):
                node_tokens.update(node_attr_token(k, d[k]) for k in node_keys)
            for _, _, d in g.edges(data=True):
                edge_tokens.update(edge_attr_token(k, d[k]) for k in edge_keys)
        tokens = list(SPECIAL) + [node_token(i) for i in range(n_node_ids)] + sorted(node_tokens) + sorted(edge_tokens)
        return cls(tokens, n_node_ids, tuple(node_keys), tuple(edge_keys))

    def to_dict(self) -> dict:
        return {"tokens": self.tokens, "n_node_ids": self.n_node_ids,
                "node_keys": list(self.node_keys), "edge_keys": list(self.edge_keys)}

    @classmethod
    def from_dict(cls, d: dict) -> "Vocab":
        return cls(list(d["tokens"]), int(d["n_node_ids"]), tuple(d["node_keys"]), tuple(d["edge_keys"]))

    def __len__(self) -> int:
        return len(self.tokens)

    def id(self, token: str) -> int:
        try:
            return self.index[token]
        except KeyError:
            raise KeyError(f"token {token!r} is not in the vocabulary ({len(self)} tokens); the vocabulary is "
                           "built from the pre-training corpus: rebuild it with the graphs that contain it") from None

    def ids(self, tokens) -> list[int]:
        return [self.id(t) for t in tokens]

    def decode_ids(self, ids) -> list[str]:
        return [self.tokens[int(i)] for i in ids]


def _check_size(g: nx.Graph, vocab: Vocab) -> None:
    if g.number_of_nodes() > vocab.n_node_ids:
        raise ValueError(f"graph has {g.number_of_nodes()} nodes but the vocabulary has only {vocab.n_node_ids} "
                         "node-id tokens; raise graphgpt.n_node_ids in config.yaml")


def eulerize_component(comp: nx.Graph) -> nx.MultiGraph:
    """The component itself if it has an Eulerian path, else `networkx.eulerize` of it (duplicated edges)."""
    if comp.number_of_edges() == 0 or nx.has_eulerian_path(comp):
        return nx.MultiGraph(comp)
    return nx.eulerize(comp)


def component_walk(multi: nx.MultiGraph, n_original: int, rng: np.random.Generator) -> list:
    """Node sequence of one (eulerized) connected component: an Eulerian path from a random valid
    start, cut as soon as all `n_original` distinct edges have been walked (Section 3.1)."""
    nodes = list(multi.nodes)
    if n_original == 0:
        return [nodes[0]]
    # the adjacency order decides which Eulerian path networkx finds: shuffle it for a random path
    edges = list(multi.edges(keys=False))
    g = nx.MultiGraph()
    g.add_nodes_from(nodes[i] for i in rng.permutation(len(nodes)))
    g.add_edges_from(edges[i] for i in rng.permutation(len(edges)))
    odd = [v for v, d in g.degree if d % 2 == 1]
    candidates = odd if odd else list(g.nodes)
    start = candidates[int(rng.integers(len(candidates)))]
    walk, covered = [start], set()
    for u, v in nx.eulerian_path(g, source=start):
        walk.append(v)
        covered.add(frozenset((u, v)))
        if len(covered) == n_original:
            break
    return walk


class EulerianSerializer:
    """Eulerizes each component of `g` once; every call draws a fresh random serialization."""

    def __init__(self, g: nx.Graph, vocab: "Vocab"):
        _check_size(g, vocab)
        self.g, self.vocab = g, vocab
        comps = [g.subgraph(c) for c in nx.connected_components(g)]
        self.components = [(eulerize_component(c), c.number_of_edges()) for c in comps]

    def __call__(self, rng: np.random.Generator, query=None) -> list[str]:
        order = rng.permutation(len(self.components))
        walks = [component_walk(*self.components[i], rng) for i in order]
        return _walks_to_tokens(self.g, walks, self.vocab, rng, query)


def _relabel(order_of_first_visit, vocab: Vocab, rng: np.random.Generator) -> dict:
    """Node -> node-id token: rank of first appearance, shifted cyclically by a random offset."""
    offset = int(rng.integers(vocab.n_node_ids))
    return {v: node_token((rank + offset) % vocab.n_node_ids) for rank, v in enumerate(order_of_first_visit)}


def _walks_to_tokens(g: nx.Graph, walks: list[list], vocab: Vocab, rng: np.random.Generator,
                     query=None) -> list[str]:
    """Tokens of the walks; `query` (a node pair) is appended after `<eos>` as `<query> u v`."""
    first = list(dict.fromkeys(v for w in walks for v in w))
    name = _relabel(first, vocab, rng)
    tokens, seen_nodes, seen_edges = [BOS], set(), set()
    for i, walk in enumerate(walks):
        if i:
            tokens.append(JUMP)
        prev = None
        for v in walk:
            if prev is not None:
                e = frozenset((prev, v))
                if e not in seen_edges:
                    seen_edges.add(e)
                    d = g.edges[prev, v]
                    tokens += [edge_attr_token(k, d[k]) for k in vocab.edge_keys]
            tokens.append(name[v])
            if v not in seen_nodes:
                seen_nodes.add(v)
                d = g.nodes[v]
                tokens += [node_attr_token(k, d[k]) for k in vocab.node_keys]
            prev = v
    tokens.append(EOS)
    if query is not None:
        tokens += [QUERY] + [name[v] for v in query]
    return tokens


def encode_eulerian(g: nx.Graph, vocab: Vocab, rng: np.random.Generator) -> list[str]:
    """GraphGPT's serialization: Eulerian path per component, `<jump>` between components."""
    return EulerianSerializer(g, vocab)(rng)


class EdgelistSerializer:
    """The baseline serialization as a callable, like EulerianSerializer."""

    def __init__(self, g: nx.Graph, vocab: "Vocab"):
        self.g, self.vocab = g, vocab

    def __call__(self, rng: np.random.Generator, query=None) -> list[str]:
        return encode_edgelist(self.g, self.vocab, rng, query)


def encode_edgelist(g: nx.Graph, vocab: Vocab, rng: np.random.Generator, query=None) -> list[str]:
    """Baseline: edges in random order and orientation, one `u v` segment per edge; isolated nodes alone."""
    _check_size(g, vocab)
    segments = []
    for u, v in g.edges:
        segments.append([u, v] if rng.random() < 0.5 else [v, u])
    segments += [[v] for v in g.nodes if g.degree(v) == 0]
    walks = [segments[i] for i in rng.permutation(len(segments))]
    return _walks_to_tokens(g, walks, vocab, rng, query)


SERIALIZERS = {"eulerian": EulerianSerializer, "edgelist": EdgelistSerializer}


def decode(tokens: list[str], vocab: Vocab) -> nx.Graph:
    """Sequence -> graph: nodes named by their node-id tokens, attributes from the tokens after them.

    Reads both serializations; stops at `<eos>` or `<query>`. Raises ValueError on a malformed sequence.
    """
    g = nx.Graph()
    current, pending = None, {}
    for t in tokens:
        if t in (BOS, PAD):
            continue
        if t in (EOS, QUERY):
            break
        if t == JUMP:
            if pending:
                raise ValueError(f"edge attributes {pending} before {JUMP}: no node follows them")
            current = None
        elif t.startswith(EDGE_PREFIX):
            key, _, value = t[len(EDGE_PREFIX):].partition("=")
            pending[key] = value
        elif t.startswith(NODE_PREFIX) and t[len(NODE_PREFIX):].isdigit():
            v = int(t[len(NODE_PREFIX):])
            g.add_node(v)
            if current is not None:
                if g.has_edge(current, v):
                    g.edges[current, v].update(pending)
                else:
                    g.add_edge(current, v, **pending)
            elif pending:
                raise ValueError(f"edge attributes {pending} with no node before them")
            current, pending = v, {}
        elif "=" in t:
            if current is None:
                raise ValueError(f"node attribute {t!r} with no node before it")
            key, _, value = t.partition("=")
            g.nodes[current][key] = value
        else:
            raise ValueError(f"unknown token {t!r}")
    return g
