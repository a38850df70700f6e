"""The GINE baseline on PyTorch Geometric's `GINEConv`: equal, on fixed cases, to the plain-torch layer
and model it replaced (Hu et al. 2020: h_v <- MLP((1 + eps) h_v + sum_u ReLU(h_u + e_uv)))."""
import networkx as nx
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.nn import GINEConv

torch.set_num_threads(1)


def _hand_written_layer(h, edge_index, e, mlp, eps):
    """The layer as this project wrote it before the swap (sum of ReLU(h_src + e) at each target)."""
    src, dst = edge_index
    msg = torch.zeros_like(h).index_add_(0, dst, F.relu(h[src] + e))
    return mlp((1 + eps) * h + msg)


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
    (ours ** 2).sum().backward()
    (lib ** 2).sum().backward()
    assert torch.allclose(h2.grad, h.grad, rtol=1e-5, atol=1e-7)
    assert torch.allclose(conv.eps.grad, eps.grad.reshape(1), rtol=1e-5)
    for (name, p), q in zip(mlp.named_parameters(), conv.nn.parameters()):
        assert torch.allclose(q.grad, p.grad, rtol=1e-5, atol=1e-7), name
    assert not torch.allclose(lib[5], torch.zeros(d))  # the isolated node still goes through the MLP
