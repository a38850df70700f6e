"""The GINE baseline on PyTorch Geometric's `GINEConv`: equal, on fixed cases, to the plain-torch layer
and model it replaced (Hu et al. 2020: h_v <- MLP((1 + eps) h_v + sum_u ReLU(h_u + e_uv)))."""

import networkx as nx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.nn import GINEConv

from methods.graphgpt.model import GINE

torch.set_num_threads(1)


def _hand_written_layer(h, edge_index, e, mlp, eps):
    """The layer as this project wrote it before the swap (sum of ReLU(h_src + e) at each target)."""
    src, dst = edge_index
    msg = torch.zeros_like(h).index_add_(0, dst, F.relu(h[src] + e))
    return mlp((1 + eps) * h + msg)


class PlainGINE(nn.Module):
    """The plain-torch GINE model this project used before `GINEConv` (same layers, same order)."""

    def __init__(self, n_tokens, n_out, d=64, n_layers=3):
        super().__init__()
        self.node_embed = nn.Embedding(n_tokens, d)
        self.edge_embed = nn.Embedding(n_tokens, d)
        self.layers = nn.ModuleList(
            nn.Sequential(nn.Linear(d, d), nn.BatchNorm1d(d), nn.ReLU(), nn.Linear(d, d)) for _ in range(n_layers)
        )
        self.eps = nn.Parameter(torch.zeros(n_layers))
        self.head = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, n_out))

    def forward(self, x, edge_index, edge_attr, batch, n_graphs):
        h = self.node_embed(x).sum(1)
        e = self.edge_embed(edge_attr).sum(1)
        for i, mlp in enumerate(self.layers):
            h_new = _hand_written_layer(h, edge_index, e, mlp, self.eps[i])
            h = F.relu(h_new) + h if i else F.relu(h_new)
        pooled = torch.zeros(n_graphs, h.shape[1]).index_add_(0, batch, h)
        return self.head(pooled)


def _graph():
    """A triangle with a pendant path and an isolated node; edges in both directions (row 0: source)."""
    g = nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4)])
    g.add_node(5)
    src = [u for u, v in g.edges] + [v for u, v in g.edges]
    dst = [v for u, v in g.edges] + [u for u, v in g.edges]
    return torch.tensor([src, dst]), g.number_of_nodes()


def test_gineconv_equals_the_hand_written_layer_values_and_gradients():
    torch.manual_seed(0)
    edge_index, n = _graph()
    d = 8
    mlp = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))
    conv = GINEConv(nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d)), train_eps=True)
    conv.nn.load_state_dict(mlp.state_dict())
    with torch.no_grad():
        conv.eps.fill_(0.3)
    eps = torch.tensor(0.3, requires_grad=True)
    h = torch.randn(n, d, requires_grad=True)
    e = torch.randn(edge_index.shape[1], d)
    ours = _hand_written_layer(h, edge_index, e, mlp, eps)
    h2 = h.detach().clone().requires_grad_(True)
    lib = conv(h2, edge_index, e)
    assert torch.allclose(lib, ours, rtol=1e-6, atol=1e-7)
    (ours**2).sum().backward()
    (lib**2).sum().backward()
    assert torch.allclose(h2.grad, h.grad, rtol=1e-5, atol=1e-7)
    assert torch.allclose(conv.eps.grad, eps.grad.reshape(1), rtol=1e-5)
    for (name, p), q in zip(mlp.named_parameters(), conv.nn.parameters()):
        assert torch.allclose(q.grad, p.grad, rtol=1e-5, atol=1e-7), name
    assert not torch.allclose(lib[5], torch.zeros(d))  # the isolated node still goes through the MLP


@pytest.mark.parametrize("n_layers", [1, 3])
def test_the_gineconv_model_starts_and_computes_as_the_plain_torch_model(n_layers):
    """Same seed -> the same initial weights and the same random stream after construction, the same
    outputs in train (BatchNorm batch statistics) and eval mode."""
    torch.manual_seed(1)
    plain = PlainGINE(7, 3, d=8, n_layers=n_layers)
    after_plain = torch.rand(3)
    torch.manual_seed(1)
    lib = GINE(7, 3, d=8, n_layers=n_layers)
    assert torch.equal(torch.rand(3), after_plain)
    assert torch.equal(lib.node_embed.weight, plain.node_embed.weight)
    assert torch.equal(lib.edge_embed.weight, plain.edge_embed.weight)
    for i in range(n_layers):
        for (name, a), b in zip(plain.layers[i].state_dict().items(), lib.convs[i].nn.state_dict().values()):
            assert torch.equal(a, b), (i, name)
        assert float(lib.convs[i].eps.detach()) == float(plain.eps[i].detach()) == 0.0
    for a, b in zip(plain.head.parameters(), lib.head.parameters()):
        assert torch.equal(a, b)
    edge_index, n = _graph()
    x = torch.randint(7, (n, 2))
    ea = torch.randint(7, (edge_index.shape[1], 1))
    batch = torch.tensor([0, 0, 0, 1, 1, 1])
    for train in (True, False):
        plain.train(train), lib.train(train)
        assert torch.allclose(
            lib(x, edge_index, ea, batch, 2), plain(x, edge_index, ea, batch, 2), rtol=1e-6, atol=1e-7
        )
