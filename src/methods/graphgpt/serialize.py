"""Graph <-> token sequence, reversibly (GraphGPT, Section 3.1 "Graph to sequence").

A graph is a `networkx.Graph` or `networkx.MultiGraph` (self-loops and parallel edges allowed)
whose nodes carry string attributes (e.g. `atom`, `hs`) and whose edges carry string attributes
(e.g. `bond`). The sequence uses the "short" stacked layout of the official code's headline runs:
one position per node visit, and at each position a stack of K tokens whose embeddings are summed,

    [node id, link, node attr 1..a, edge attr 1..b]

- `node id`: `n<k>`, k the node's rank of first appearance (cyclic re-indexing, `shift_node_ids`,
  adds a random offset mod n_node_ids at training time);
- `link`: how the position is reached: `<start>` (first node), `<jump>` (first node of another
  component), `<edge>` (over an original edge, walked for the first time; its attributes fill the
  edge slots), `<rep>` (over an edge already walked or a duplicate added by eulerization);
- a last position `<gsum>`, the graph-level read-out token; an edge-level query `(u, v)` adds two
  positions `[u, <query>]`, `[v, <query>]` before it. Empty slots hold `<none>`.

Eulerian serialization, as the official code (`src/utils/nx_utils.py`: `permute_nodes`,
`graph2path_v2`, `connected_graph2path`, `shorten_path`): every draw first relabels the nodes by a
random permutation (the official `permute_nodes=True`) and builds the networkx graph the way
torch_geometric's `to_networkx(..., to_undirected="upper").to_undirected()` does, so the adjacency
order, and with it the Eulerian walk networkx finds, changes from draw to draw; each connected
component that is not Eulerian is eulerized (`networkx.eulerize`, semi-Eulerian ones too), the walk
starts at a random node and is `eulerian_path` or `eulerian_circuit` with probability 1/2 each, and
it is cut as soon as every edge has been walked; components come in random order.
`permute_nodes=False` keeps the input order on every draw (then only the start node and the
path/circuit coin vary). `rng=None` gives a deterministic serialization (for tests).
`encode_edgelist` is the baseline (edges in random order and orientation, one `u v` segment each).
`decode` reads both back.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

PAD, MASK, GSUM, NONE = "<pad>", "<mask>", "<gsum>", "<none>"
START, EDGE, REP, JUMP, QUERY = "<start>", "<edge>", "<rep>", "<jump>", "<query>"
SPECIAL = (PAD, MASK, GSUM, NONE, START, EDGE, REP, JUMP, QUERY)
PAD_ID, MASK_ID, GSUM_ID = 0, 1, 2
NODE_BASE = len(SPECIAL)  # id of node token n0
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
            check_graph(g, n_node_ids, node_keys, edge_keys)
            for _, d in g.nodes(data=True):
                node_tokens.update(node_attr_token(k, d[k]) for k in node_keys)
            for _, _, d in g.edges(data=True):
                edge_tokens.update(edge_attr_token(k, d[k]) for k in edge_keys)
        tokens = list(SPECIAL) + [node_token(i) for i in range(n_node_ids)] + sorted(node_tokens) + sorted(edge_tokens)
        return cls(tokens, n_node_ids, tuple(node_keys), tuple(edge_keys))

    def to_dict(self) -> dict:
        return {
            "tokens": self.tokens,
            "n_node_ids": self.n_node_ids,
            "node_keys": list(self.node_keys),
            "edge_keys": list(self.edge_keys),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Vocab":
        return cls(list(d["tokens"]), int(d["n_node_ids"]), tuple(d["node_keys"]), tuple(d["edge_keys"]))

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def n_channels(self) -> int:
        """Tokens stacked at one position: node id, link, node attributes, edge attributes."""
        return 2 + len(self.node_keys) + len(self.edge_keys)

    def id(self, token: str) -> int:
        try:
            return self.index[token]
        except KeyError:
            raise ValueError(
                f"token {token!r} is not in the vocabulary ({len(self)} tokens); the vocabulary is "
                "built from the domain's graphs: rebuild it with the graphs that contain it"
            ) from None

    def encode(self, positions: list[list[str]]) -> np.ndarray:
        """Stacked token strings (L positions x K) -> int array (L, K)."""
        return np.array([[self.id(t) for t in p] for p in positions], dtype=np.int64).reshape(-1, self.n_channels)

    def decode_ids(self, ids) -> list[list[str]]:
        return [[self.tokens[int(i)] for i in row] for row in np.asarray(ids).reshape(-1, self.n_channels)]


def check_graph(g, n_node_ids: int, node_keys, edge_keys) -> None:
    """Clear errors for what the serialization does not support, before any work is done."""
    if g.is_directed():
        raise ValueError(
            "directed graphs are not supported: the serialization walks undirected edges; pass g.to_undirected()"
        )
    if g.number_of_nodes() > n_node_ids:
        raise ValueError(
            f"graph has {g.number_of_nodes()} nodes but the vocabulary has only {n_node_ids} "
            "node-id tokens; raise graphgpt.n_node_ids in config.yaml"
        )
    for v, d in g.nodes(data=True):
        _check_attrs(d, node_keys, f"node {v!r}", "node")
    for *uv, d in g.edges(data=True):
        _check_attrs(d, edge_keys, f"edge {tuple(uv)!r}", "edge")


def _check_attrs(d: dict, keys, where: str, kind: str) -> None:
    extra, missing = set(d) - set(keys), [k for k in keys if k not in d]
    if extra:
        raise ValueError(
            f"unsupported {kind} attribute(s) {sorted(extra)} on {where}: the vocabulary encodes only "
            f"{kind} attributes {list(keys)}; drop them or build the vocabulary with these keys"
        )
    if missing:
        raise ValueError(
            f"{where} lacks {kind} attribute(s) {missing} that the vocabulary encodes; "
            "every graph must carry the same attribute keys"
        )


def _multi(g) -> nx.MultiGraph:
    """A MultiGraph view-copy with the original edge keys (a simple graph gets key 0 everywhere)."""
    return g.copy() if g.is_multigraph() else nx.MultiGraph(g)


class Draws:
    """The random choices of one serialization, taken from `rng` (None: the identity / first choice):
    a node permutation, a component order, a start-node index and a path-or-circuit coin per
    component (the official code's `torch.randperm`, `random.shuffle`, `random.choice`, `random.random`)."""

    def __init__(self, rng: np.random.Generator | None):
        self.rng = rng

    def permutation(self, n: int) -> np.ndarray:
        return np.arange(n) if self.rng is None else self.rng.permutation(n)

    def index(self, n: int) -> int:
        return 0 if self.rng is None else int(self.rng.integers(n))

    def path_not_circuit(self) -> bool:
        return True if self.rng is None else bool(self.rng.random() < 0.5)


class FixedDraws(Draws):
    """Given choices, consumed in order (parity tests against the official code): the permutations
    (the node permutation, then the component order), start-node indices, path-or-circuit coins."""

    def __init__(self, permutations, starts, coins):
        super().__init__(None)
        self._perms = [np.asarray(p) for p in permutations]
        self._starts, self._coins = list(starts), list(coins)

    def permutation(self, n: int) -> np.ndarray:
        perm = self._perms.pop(0)
        if len(perm) != n:
            raise ValueError(f"FixedDraws: a permutation of {n} was asked for, the next given has {len(perm)}")
        return perm

    def index(self, n: int) -> int:
        return int(self._starts.pop(0))

    def path_not_circuit(self) -> bool:
        return bool(self._coins.pop(0))


def networkx_graph(g: nx.MultiGraph, perm: np.ndarray):
    """The graph the official code walks, nodes relabelled `perm[i]` for the i-th node of `g`: nodes
    0..n-1, then one edge per edge of `g` in its order (the "upper" half of an edge_index that lists
    each edge in both directions), then `.to_undirected()`, exactly as torch_geometric's
    `to_networkx(data, to_undirected="upper").to_undirected()`. A simple graph gives an `nx.Graph`
    (as the official code); parallel edges (not in the official code) give an `nx.MultiGraph`."""
    nodes = list(g.nodes)
    new = {v: int(perm[i]) for i, v in enumerate(nodes)}
    simple = not any(k for _, _, k in g.edges(keys=True))
    h = nx.Graph() if simple else nx.MultiGraph()
    h.add_nodes_from(range(len(nodes)))
    h.add_edges_from(tuple(sorted((new[u], new[v]))) for u, v in g.edges())
    if not simple:
        return h.to_undirected()
    # `.to_undirected()` of a Graph rebuilds it in adjacency order (without attributes to copy here)
    out = nx.Graph()
    out.add_nodes_from(range(len(nodes)))
    out.add_edges_from((a, b) for a, nbrs in h._adj.items() for b in nbrs)
    return out


def component_path(comp, draws: Draws, multiplicity: dict) -> list[tuple]:
    """Node pairs of one component's walk (official `connected_graph2path` + `shorten_path`, Section
    3.1): eulerize unless Eulerian, random start node, `eulerian_path` or `eulerian_circuit` with
    probability 1/2, cut once every edge has been walked (`multiplicity`: edges per node pair)."""
    if comp.number_of_edges() == 0:
        return []
    if not nx.is_eulerian(comp):
        comp = nx.eulerize(comp)
    nodes = list(comp.nodes())
    source = nodes[draws.index(len(nodes))]
    walk = (
        nx.eulerian_path(comp, source=source) if draws.path_not_circuit() else nx.eulerian_circuit(comp, source=source)
    )
    need, seen, out = sum(multiplicity.values()), {}, []
    for a, b in walk:
        out.append((a, b))
        key = frozenset((a, b))
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= multiplicity[key]:
            need -= 1
            if need == 0:
                break
    return out


class EulerianSerializer:
    """GraphGPT's serialization of one graph; every call draws a fresh random serialization
    (node permutation, component order, start nodes, path or circuit: `Draws`)."""

    def __init__(self, g, vocab: Vocab, permute_nodes: bool = True):
        check_graph(g, vocab.n_node_ids, vocab.node_keys, vocab.edge_keys)
        if g.number_of_nodes() == 0:
            raise ValueError("graph without nodes: nothing to serialize")
        self.g, self.vocab, self.permute_nodes = _multi(g), vocab, permute_nodes
        self.nodes = list(self.g.nodes)
        self.tokens = _TokenCache(self.g, vocab)

    def walks(self, draws: Draws) -> list[list[tuple]]:
        """Steps (node, link, edge or None) of each component's walk, in original node names; the
        j-th walk over a node pair is `<edge>` with the pair's j-th edge while the pair has one left,
        `<rep>` after that (an edge walked again or one added by eulerization)."""
        n = len(self.nodes)
        perm = draws.permutation(n) if self.permute_nodes else np.arange(n)
        name = {int(perm[i]): v for i, v in enumerate(self.nodes)}
        new = {v: k for k, v in name.items()}
        h = networkx_graph(self.g, perm)
        comps = [h] if nx.is_connected(h) else [h.subgraph(c).copy() for c in nx.connected_components(h)]
        edges_of = {}
        for u, v, k in self.g.edges(keys=True):
            edges_of.setdefault(frozenset((new[u], new[v])), []).append((u, v, k))
        out = []
        for i in draws.permutation(len(comps)):
            comp = comps[int(i)]
            mult = {pair: len(edges_of[pair]) for pair in edges_of if next(iter(pair)) in comp}
            pairs = component_path(comp, draws, mult)
            if not pairs:
                out.append([(name[next(iter(comp.nodes))], None, None)])
                continue
            steps, used = [(name[pairs[0][0]], None, None)], {}
            for a, b in pairs:
                key = frozenset((a, b))
                j = used.get(key, 0)
                used[key] = j + 1
                steps.append((name[b], EDGE, edges_of[key][j]) if j < len(edges_of[key]) else (name[b], REP, None))
            out.append(steps)
        return out

    def __call__(
        self, rng: np.random.Generator | None, query=None, return_order: bool = False, draws: Draws | None = None
    ):
        """Stacked tokens of one serialization; with `return_order` also the nodes in order of
        first appearance (node `order[k]` is token n<k>)."""
        return _positions(self.tokens, self.walks(draws or Draws(rng)), query, return_order)


class _TokenCache:
    """Attribute tokens of every node and edge of a graph, computed once."""

    def __init__(self, g: nx.MultiGraph, vocab: Vocab):
        self.n_channels = vocab.n_channels
        self.node = {v: [node_attr_token(k, d[k]) for k in vocab.node_keys] for v, d in g.nodes(data=True)}
        self.edge = {
            (u, v, k): [edge_attr_token(key, d[key]) for key in vocab.edge_keys]
            for u, v, k, d in g.edges(keys=True, data=True)
        }
        self.none_edge = [NONE] * len(vocab.edge_keys)
        for toks in list(self.node.values()) + list(self.edge.values()):
            for t in toks:
                vocab.id(t)  # an attribute value the vocabulary lacks: a clear error now, not later

    def edge_attrs(self, edge) -> list[str]:
        if edge is None:
            return self.none_edge
        u, v, k = edge
        return self.edge[(u, v, k)] if (u, v, k) in self.edge else self.edge[(v, u, k)]


class EdgelistSerializer:
    """The baseline: every edge as its own `u v` segment, in random order and orientation."""

    def __init__(self, g, vocab: Vocab):
        check_graph(g, vocab.n_node_ids, vocab.node_keys, vocab.edge_keys)
        self.g, self.vocab = _multi(g), vocab
        self.tokens = _TokenCache(self.g, vocab)

    def __call__(self, rng: np.random.Generator | None, query=None, return_order: bool = False):
        walks = []
        for u, v, k in self.g.edges(keys=True):
            if rng is not None and rng.random() < 0.5:
                u, v = v, u
            walks.append([(u, None, None), (v, EDGE, (u, v, k))])
        walks += [[(v, None, None)] for v in self.g.nodes if self.g.degree(v) == 0]
        if rng is not None:
            walks = [walks[i] for i in rng.permutation(len(walks))]
        return _positions(self.tokens, walks, query, return_order)


def _positions(cache: _TokenCache, walks: list[list[tuple]], query=None, return_order: bool = False):
    """Stacked tokens of the walks (nodes named by rank of first appearance), query, `<gsum>`."""
    order = list(dict.fromkeys(v for w in walks for v, _, _ in w))
    rank = {v: i for i, v in enumerate(order)}
    out = []
    for i, walk in enumerate(walks):
        for v, link, edge in walk:
            if link is None:
                link = JUMP if i else START
            out.append([node_token(rank[v]), link] + cache.node[v] + cache.edge_attrs(edge))
    if query is not None:
        for v in query:
            out.append([node_token(rank[v]), QUERY] + [NONE] * (cache.n_channels - 2))
    out.append([GSUM] + [NONE] * (cache.n_channels - 1))
    return (out, order) if return_order else out


def encode_eulerian(g, vocab: Vocab, rng: np.random.Generator | None, query=None) -> list[list[str]]:
    """GraphGPT's serialization of one graph (random where `rng` is given, deterministic where None)."""
    return EulerianSerializer(g, vocab)(rng, query)


def encode_edgelist(g, vocab: Vocab, rng: np.random.Generator | None, query=None) -> list[list[str]]:
    return EdgelistSerializer(g, vocab)(rng, query)


SERIALIZERS = {"eulerian": EulerianSerializer, "edgelist": EdgelistSerializer}


def same_graph(g, decoded, order: list) -> bool:
    """Exact round-trip check without an isomorphism search: `decoded` (nodes 0..n-1) relabelled by
    `order` has the nodes, node attributes and edge multiset (with attributes) of `g`."""
    if decoded.number_of_nodes() != g.number_of_nodes() or sorted(decoded.nodes) != list(range(len(order))):
        return False
    if any(dict(decoded.nodes[k]) != dict(g.nodes[v]) for k, v in enumerate(order)):
        return False

    def edge_multiset(h, name):
        return sorted(
            (tuple(sorted((str(name(u)), str(name(v))))), tuple(sorted(d.items()))) for u, v, d in h.edges(data=True)
        )

    return edge_multiset(decoded, lambda k: order[k]) == edge_multiset(g, lambda v: v)


def shift_node_ids(ids: np.ndarray, offset: int, n_node_ids: int) -> np.ndarray:
    """Cyclic re-indexing: node token n<k> -> n<(k + offset) mod n_node_ids> (channel 0 only)."""
    ids = np.array(ids, copy=True)
    col = ids[:, 0]
    is_node = (col >= NODE_BASE) & (col < NODE_BASE + n_node_ids)
    col[is_node] = NODE_BASE + (col[is_node] - NODE_BASE + offset) % n_node_ids
    return ids


def decode(positions: list[list[str]], vocab: Vocab, multigraph: bool = True):
    """Stacked tokens -> graph (MultiGraph, or Graph with `multigraph=False`): nodes named by their
    node-id tokens, one edge per `<edge>` step. Stops at `<query>` / `<gsum>`; ValueError when malformed."""
    g = nx.MultiGraph() if multigraph else nx.Graph()
    nk, ek = vocab.node_keys, vocab.edge_keys
    prev = None
    for p in positions:
        if len(p) != vocab.n_channels:
            raise ValueError(f"position {p} has {len(p)} tokens, the layout has {vocab.n_channels}")
        node, link = p[0], p[1]
        if node == PAD:
            continue
        if node == GSUM or link == QUERY:
            break
        if not (node.startswith(NODE_PREFIX) and node[len(NODE_PREFIX) :].isdigit()):
            raise ValueError(f"expected a node-id token at a walk position, got {node!r}")
        v = int(node[len(NODE_PREFIX) :])
        attrs = {k: t.partition("=")[2] for k, t in zip(nk, p[2 : 2 + len(nk)])}
        if v in g and dict(g.nodes[v]) != attrs:
            raise ValueError(f"node {v} carries attributes {attrs} after {dict(g.nodes[v])}")
        g.add_node(v, **attrs)
        if link in (EDGE, REP) and prev is None:
            raise ValueError(f"{link} at the first position: no node before it")
        if link == EDGE:
            eattrs = {k: t[len(EDGE_PREFIX) :].partition("=")[2] for k, t in zip(ek, p[2 + len(nk) :])}
            if not multigraph and g.has_edge(prev, v):
                raise ValueError(f"edge {prev}-{v} twice: decode with multigraph=True")
            g.add_edge(prev, v, **eattrs)
        elif link not in (START, JUMP, REP):
            raise ValueError(f"unknown link token {link!r}")
        prev = v
    return g
