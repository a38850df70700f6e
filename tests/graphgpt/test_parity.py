"""Golden-value parity with the official code: alibaba/graph-gpt at v0.5.0 (commit
314e7034928c8910d07e86ec1361a22b40194876, the ICML-time release), run in a scratch checkout with the
project's torch 2.13 CPU, networkx 3.6.1 and torch_geometric 2.8.1 (no official code is in this repository).

Fixtures (numbers printed by the official functions on the inputs named in each test):
* Walks: a `torch_geometric.data.Data` whose edge_index lists every edge of the networkx graph below in
  both directions, in `graph.edges()` order; `src/utils/nx_utils.permute_nodes(data, g)` with
  `g = torch.Generator().manual_seed(seed)` gives the permutation; `graph2path_v2` then runs with its
  `random` calls recorded (the order `random.shuffle` gave the components, the index `random.choice`
  picked as start node, whether `random.random() < 0.5` chose `eulerian_path`). The walk is the path's
  node sequence mapped back to the original node names.
* Cyclic re-indexing: `get_structure_raw_node2idx_mapping([(3, 1), (1, 4), (4, 3), (3, 0)], 0, 8, 1)` with
  `random.randint` returning 4 and 6.
* SMTP: `src/utils/tokenizer_utils._mask_stacked_input_ids_v2` on a 7 x 4 stack of distinct ids with
  ratios 0.05 / 0.3 / 0.77 and mtp (0.8, 0, 0.2): the number of tokens it labels.
Tolerance: exact (integer sequences and counts).
"""

import networkx as nx
import numpy as np
import pytest
import torch

from methods.graphgpt.serialize import NODE_BASE, EulerianSerializer, FixedDraws, Vocab, shift_node_ids
from methods.graphgpt.train import smtp_corrupt


def _graph(name: str) -> nx.Graph:
    n, edges = {
        "k7": (7, list(nx.complete_graph(7).edges())),
        "petersen": (10, list(nx.petersen_graph().edges())),
        # aspirin's heavy atoms in the atom order of CC(=O)Oc1ccccc1C(=O)O
        "aspirin": (
            13,
            [
                (0, 1),
                (1, 2),
                (1, 3),
                (3, 4),
                (4, 5),
                (5, 6),
                (6, 7),
                (7, 8),
                (8, 9),
                (9, 10),
                (10, 11),
                (10, 12),
                (9, 4),
            ],
        ),
        # two components and an isolated node
        "disconnected": (9, [(0, 1), (1, 2), (2, 0), (2, 3), (4, 5), (5, 6), (6, 7), (7, 4), (4, 6)]),
    }[name]
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return g


# (graph, seed, node permutation, component order, start indices, eulerian_path?, official walk)
WALKS = [
    (
        "k7",
        0,
        [4, 0, 5, 3, 2, 6, 1],
        [0],
        [6],
        [True],
        [5, 1, 0, 6, 1, 2, 6, 3, 1, 4, 6, 5, 4, 0, 3, 4, 2, 3, 5, 0, 2, 5],
    ),
    (
        "k7",
        1,
        [0, 6, 1, 3, 5, 2, 4],
        [0],
        [1],
        [False],
        [2, 6, 4, 1, 6, 3, 4, 5, 3, 1, 5, 6, 0, 5, 2, 4, 0, 3, 2, 1, 0, 2],
    ),
    (
        "k7",
        2,
        [2, 4, 3, 0, 6, 1, 5],
        [0],
        [6],
        [False],
        [4, 6, 1, 4, 2, 6, 0, 2, 1, 0, 4, 5, 6, 3, 2, 5, 1, 3, 5, 0, 3, 4],
    ),
    (
        "petersen",
        0,
        [4, 1, 7, 5, 3, 9, 0, 8, 6, 2],
        [0],
        [6],
        [False],
        [8, 5, 0, 5, 7, 9, 7, 2, 1, 2, 3, 4, 3, 8, 6, 9, 4, 0, 1, 6],
    ),
    (
        "petersen",
        1,
        [5, 6, 1, 2, 0, 8, 9, 3, 7, 4],
        [0],
        [2],
        [False],
        [3, 8, 6, 9, 6, 1, 0, 5, 7, 5, 8, 3, 2, 1, 2, 7, 9, 4, 0, 4, 3],
    ),
    (
        "petersen",
        2,
        [8, 7, 1, 5, 6, 9, 0, 4, 2, 3],
        [0],
        [0],
        [True],
        [6, 1, 6, 8, 3, 2, 1, 0, 4, 9, 7, 2, 3, 4, 0, 5, 8, 5, 7, 9, 6],
    ),
    (
        "aspirin",
        0,
        [3, 4, 0, 2, 11, 8, 12, 5, 10, 6, 9, 1, 7],
        [0],
        [6],
        [False],
        [9, 10, 12, 10, 11, 10, 9, 8, 7, 6, 5, 4, 3, 1, 0, 1, 2, 1, 3, 4, 9],
    ),
    (
        "aspirin",
        1,
        [6, 12, 7, 11, 3, 0, 5, 1, 2, 9, 8, 10, 4],
        [0],
        [2],
        [False],
        [8, 9, 10, 11, 10, 12, 10, 9, 4, 3, 1, 2, 1, 0, 1, 3, 4, 5, 6, 7, 8],
    ),
    (
        "aspirin",
        2,
        [5, 4, 7, 2, 12, 8, 1, 0, 3, 6, 10, 9, 11],
        [0],
        [0],
        [True],
        [7, 6, 5, 4, 3, 1, 0, 1, 2, 1, 3, 4, 9, 10, 11, 10, 12, 10, 9, 8, 7],
    ),
    (
        "disconnected",
        0,
        [8, 0, 2, 3, 7, 1, 4, 5, 6],
        [0, 2, 1],
        [0, 3],
        [True, True],
        [1, 0, 2, 3, 2, 1, 8, 4, 5, 6, 4, 6, 7, 4],
    ),
    (
        "disconnected",
        1,
        [4, 0, 6, 5, 7, 2, 8, 3, 1],
        [1, 2, 0],
        [2, 3],
        [True, True],
        [8, 7, 6, 5, 4, 6, 4, 7, 2, 1, 0, 2, 3],
    ),
    (
        "disconnected",
        2,
        [0, 8, 6, 3, 7, 1, 2, 5, 4],
        [1, 2, 0],
        [0, 1],
        [True, False],
        [5, 4, 6, 4, 7, 6, 5, 8, 1, 2, 3, 2, 0, 1],
    ),
]


@pytest.mark.parametrize("name, seed, perm, order, starts, coins, walk", WALKS)
def test_walk_equals_official_graph2path_v2(name, seed, perm, order, starts, coins, walk):
    g = _graph(name)
    ser = EulerianSerializer(g, Vocab.build([g], 16))
    walks = ser.walks(FixedDraws([perm, order], starts, coins))
    assert [v for w in walks for v, _, _ in w] == walk


@pytest.mark.parametrize("start, official", [(4, [4, 5, 6, 7]), (6, [6, 7, 0, 1])])
def test_cyclic_reindexing_equals_official(start, official):
    """Nodes get ranks in order of first appearance (3, 1, 4, 0 on the official path), then + start mod 8."""
    ranks = np.array([[NODE_BASE + k, 0] for k in range(4)])
    shifted = shift_node_ids(ranks, start, 8)[:, 0] - NODE_BASE
    assert shifted.tolist() == official


@pytest.mark.parametrize("ratio, official_count", [(0.05, 2), (0.3, 9), (0.77, 22)])
def test_smtp_labels_as_many_tokens_as_official(ratio, official_count):
    tokens = torch.as_tensor(np.arange(28).reshape(1, 7, 4) + 10)
    pad = torch.zeros(1, 7, dtype=torch.bool)
    _, targets, action = smtp_corrupt(tokens, pad, torch.Generator().manual_seed(0), ratio=torch.tensor([ratio]))
    assert int((targets != -100).sum()) == int((action > 0).sum()) == official_count
