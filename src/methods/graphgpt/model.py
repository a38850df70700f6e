"""GET, the Graph Eulerian Transformer: a standard transformer over graph token sequences
(GraphGPT, Section 3.2), as a decoder (causal attention, for next-token prediction) or an
encoder (bidirectional, for scheduled masked-token prediction); rotary position embeddings as in
the Llama backbone the paper builds on. Input positions are stacks of K tokens (the "short"
layout of the official code, see serialize.py) whose embeddings are summed; the pre-training
head predicts each of the K tokens of a position with its own output layer. Fine-tuning reads
the `<gsum>` position. Plus the baseline GNN: GIN with edge attributes (GINE), PyTorch Geometric's `GINEConv`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

# The models compared; config `graphgpt.tasks.<task>.models` picks among them. All GET models are
# the same transformer: an encoder where pre-trained with SMTP or not pre-trained, a decoder with NTP.
MODELS = {
    "get_smtp": {"serialization": "eulerian", "pretrain": "smtp", "reindex": True},  # GraphGPT headline
    "get_ntp": {"serialization": "eulerian", "pretrain": "ntp", "reindex": True},  # NTP instead of SMTP
    "get_noreindex": {"serialization": "eulerian", "pretrain": "smtp", "reindex": False},  # no cyclic re-indexing
    "get_scratch": {"serialization": "eulerian", "pretrain": None, "reindex": True},  # no pre-training
    "edgelist_smtp": {"serialization": "edgelist", "pretrain": "smtp", "reindex": True},  # random edge order
    "gin": {"serialization": None, "pretrain": None, "reindex": False},  # GINE baseline
}


def model_spec(model_name: str, where: str) -> dict:
    """MODELS[model_name], or an error naming the config key (`where`) and the known models."""
    if model_name not in MODELS:
        raise ValueError(f"{where}: unknown model {model_name!r}; known: {sorted(MODELS)}")
    return MODELS[model_name]


@dataclass
class GETConfig:
    vocab_size: int
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 128
    dropout: float = 0.0
    causal: bool = True  # decoder (NTP) or encoder (SMTP)
    n_channels: int = 1  # tokens stacked per position
    rope_base: float = 10000.0


@functools.lru_cache(maxsize=256)
def _rope_tables(T: int, hs: int, base: float, device: torch.device, dtype: torch.dtype):
    """cos and sin (T, hs/2) of the rotary angles: constants of the sequence length, computed once per
    length (every layer's queries and keys of every step reuse them)."""
    inv = base ** (-torch.arange(0, hs, 2, device=device, dtype=torch.float32) / hs)
    ang = torch.arange(T, device=device, dtype=torch.float32)[:, None] * inv[None]  # (T, hs/2)
    return ang.cos().to(dtype), ang.sin().to(dtype)


def rope(x: torch.Tensor, base: float) -> torch.Tensor:
    """Rotary position embedding of (B, nh, T, hs) queries or keys."""
    cos, sin = _rope_tables(x.shape[-2], x.shape[-1], float(base), x.device, x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class Block(nn.Module):
    """Pre-norm transformer block: self-attention then a GELU MLP."""

    def __init__(self, cfg: GETConfig):
        super().__init__()
        self.cfg = cfg
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(), nn.Linear(cfg.d_ff, cfg.d_model))
        self.drop = nn.Dropout(cfg.dropout)

    def attend(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        nh = self.cfg.n_heads
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, nh, C // nh).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        q, k = rope(q, self.cfg.rope_base), rope(k, self.cfg.rope_base)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = x + self.drop(self.attend(self.ln1(x), mask))
        return x + self.drop(self.mlp(self.ln2(x)))


class GET(nn.Module):
    """Stacked token ids (B, T, K) -> hidden states (B, T, d); `lm_logits` -> (B, T, K, vocab)."""

    def __init__(self, cfg: GETConfig):
        super().__init__()
        assert cfg.d_model % cfg.n_heads == 0, "d_model must be a multiple of n_heads"
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.n_channels * cfg.vocab_size)
        nn.init.normal_(self.embed.weight, std=0.02)

    def attention_mask(self, pad: torch.Tensor) -> torch.Tensor:
        """(B, 1, T, T) boolean: attend to non-pad keys, and only to the past in a decoder."""
        B, T = pad.shape
        allowed = (~pad)[:, None, None, :].expand(B, 1, T, T)
        if self.cfg.causal:
            allowed = allowed & torch.ones(T, T, dtype=torch.bool, device=pad.device).tril()
        # a pad query row with nothing allowed would give NaN: let it see itself
        return allowed | torch.eye(T, dtype=torch.bool, device=pad.device)

    def forward(self, tokens: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        mask = self.attention_mask(pad)
        x = self.embed(tokens).sum(2)  # the K tokens of a position, summed
        for block in self.blocks:
            x = block(x, mask)
        return self.ln_f(x)

    def lm_logits(self, h: torch.Tensor) -> torch.Tensor:
        return self.lm_head(h).unflatten(-1, (self.cfg.n_channels, self.cfg.vocab_size))


class GETPredictor(nn.Module):
    """Fine-tuning: GET + an MLP head on the `<gsum>` position, the last of each sequence (a
    decoder sees the whole graph there; an encoder everywhere)."""

    def __init__(self, backbone: GET, n_out: int):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Sequential(
            nn.Linear(backbone.cfg.d_model, backbone.cfg.d_model), nn.GELU(), nn.Linear(backbone.cfg.d_model, n_out)
        )

    def forward(self, tokens: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        h = self.backbone(tokens, pad)  # (B, T, d)
        last = (~pad).sum(1) - 1
        return self.head(h[torch.arange(h.shape[0], device=h.device), last])


# --- baseline GNN -----------------------------------------------------------------------------


class GINE(nn.Module):
    """GIN with edge attributes (Hu et al. 2020 GINE), PyTorch Geometric's `GINEConv` per layer:
    h_v <- MLP((1+eps) h_v + sum_u ReLU(h_u + e_uv)), eps learnt per layer (from 0), a residual from the
    second layer on; sum pooling over nodes for graph tasks, h_u * h_v for a node-pair (edge) query."""

    def __init__(self, n_tokens: int, n_out: int, d: int = 64, n_layers: int = 3):
        super().__init__()
        from torch_geometric.nn import GINEConv

        # node / edge features: sums of embeddings of their attribute-token ids (id 0, <pad>, = no attribute)
        self.node_embed = nn.Embedding(n_tokens, d)
        self.edge_embed = nn.Embedding(n_tokens, d)
        convs = []
        for _ in range(n_layers):
            mlp = nn.Sequential(nn.Linear(d, d), nn.BatchNorm1d(d), nn.ReLU(), nn.Linear(d, d))
            drawn = {k: v.clone() for k, v in mlp.state_dict().items()}
            # GINEConv re-initialises the MLP it is given; keep the weights drawn above and the random
            # stream after them, so the initialisation is the one of the plain-torch layer it replaced
            with torch.random.fork_rng(devices=[]):
                conv = GINEConv(mlp, train_eps=True)
            mlp.load_state_dict(drawn)
            convs.append(conv)
        self.convs = nn.ModuleList(convs)
        self.head = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, n_out))

    def node_states(self, x, edge_index, edge_attr):
        """x (N, a) node attribute ids, edge_index (2, E) both directions (row 0 source, row 1 target),
        edge_attr (E, b) -> (N, d)."""
        h = self.node_embed(x).sum(1)
        e = self.edge_embed(edge_attr).sum(1)
        for i, conv in enumerate(self.convs):
            h_new = conv(h, edge_index, e)
            h = F.relu(h_new) + h if i else F.relu(h_new)
        return h

    def forward(self, x, edge_index, edge_attr, batch, n_graphs, query=None):
        h = self.node_states(x, edge_index, edge_attr)
        if query is not None:  # (B, 2) global node indices of each graph's node pair
            return self.head(h[query[:, 0]] * h[query[:, 1]])
        pooled = torch.zeros(n_graphs, h.shape[1], dtype=h.dtype, device=h.device).index_add_(0, batch, h)
        return self.head(pooled)
