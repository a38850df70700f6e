"""Banyan (Opper & Siddharth, ICML 2025, arXiv 2407.17771): entangled trees with diagonal message passing.

Reading order: `Forest` (one batch as a DAG of nodes), `DiagonalFunctions` / `DenseFunctions` (composition
and decomposition, Section 3 of the paper), `TreeAutoencoder` (greedy-merge encoder, top-down decoder,
reconstruction loss), `MeanAutoencoder` (the bag-of-embeddings baseline).

States are (N, E) with E = c * e: c channels of size e. The diagonal functions act on every channel with
the same e-vectors, so they hold 7e parameters (14 at e = 2) whatever E is.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Forest:
    """One encoded batch. Nodes 0..n_leaves-1 are leaves; internal node n has children left[n], right[n]
    (both -1 for leaves) and every child has a smaller id than its parents (a topological order)."""

    states: torch.Tensor  # (N, E) encoder states
    left: torch.Tensor  # (N,) long, -1 for leaves
    right: torch.Tensor  # (N,) long, -1 for leaves
    leaf_tokens: torch.Tensor  # (n_leaves,) token id of each leaf node
    roots: torch.Tensor  # (B,) root node of each sentence

    @property
    def n_leaves(self) -> int:
        return len(self.leaf_tokens)


class DiagonalFunctions(nn.Module):
    """Diagonal composition parent = sigma(w_l)*left + sigma(w_r)*right + b and decomposition
    child_side = sigma(d_side)*parent + b_side, each e-vector shared by the c channels (paper, Section 3)."""

    def __init__(self, channels: int, channel_size: int, dropout: float):
        super().__init__()
        self.c, self.e = channels, channel_size
        u = lambda: nn.Parameter(torch.empty(channel_size).uniform_(0.6, 0.9))  # noqa: E731
        z = lambda: nn.Parameter(torch.zeros(channel_size))  # noqa: E731
        self.w_l, self.w_r, self.b = u(), u(), z()
        self.d_l, self.d_r, self.b_dl, self.b_dr = u(), u(), z(), z()
        self.drop = nn.Dropout(dropout)

    def _ch(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], self.c, self.e)  # (n, c, e)

    def compose(self, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        p = self._ch(left) * torch.sigmoid(self.w_l) + self._ch(right) * torch.sigmoid(self.w_r) + self.b
        return self.drop(p.reshape(left.shape))

    def decompose(self, parent: torch.Tensor, side: torch.Tensor) -> torch.Tensor:
        """Message to the left (side 0) or right (side 1) child of each parent row."""
        scale = torch.sigmoid(torch.stack([self.d_l, self.d_r]))[side]  # (n, e)
        bias = torch.stack([self.b_dl, self.b_dr])[side]  # (n, e)
        c = self._ch(parent) * scale[:, None, :] + bias[:, None, :]
        return self.drop(c.reshape(parent.shape))


class DenseFunctions(nn.Module):
    """Ablation: full linear composition (2E -> E) and decomposition (E -> 2E), Self-StrAE style."""

    def __init__(self, channels: int, channel_size: int, dropout: float):
        super().__init__()
        dim = channels * channel_size
        self.comp = nn.Linear(2 * dim, dim)
        self.decomp = nn.Linear(dim, 2 * dim)
        self.drop = nn.Dropout(dropout)

    def compose(self, left, right):
        return self.drop(self.comp(torch.cat([left, right], dim=-1)))

    def decompose(self, parent, side):
        both = self.decomp(parent).view(parent.shape[0], 2, -1)  # (n, 2, E)
        return self.drop(both[torch.arange(parent.shape[0], device=parent.device), side])


def pad_sequences(seqs: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, L) node ids padded with -1, and the lengths (on the device of the sequences)."""
    device = seqs[0].device
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long, device=device)
    out = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=-1)
    return out, lengths


def merge_positions(states: torch.Tensor, seq: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Index j of the adjacent pair (j, j+1) with the highest cosine similarity in each row (greedy merge,
    on detached states; positions past the row's length get -inf; ties go to the leftmost pair)."""
    x = F.normalize(states.detach()[seq.clamp(min=0)], dim=-1)  # (B, L, E)
    cos = (x[:, :-1] * x[:, 1:]).sum(-1)  # (B, L-1)
    valid = torch.arange(cos.shape[1], device=seq.device)[None, :] < (lengths - 1)[:, None]
    return cos.masked_fill(~valid, float("-inf")).argmax(dim=1)


def replace_pair(seq: torch.Tensor, j: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
    """Each row with its entries j, j+1 replaced by the single entry `new` (shifted left, padded -1)."""
    L = seq.shape[1]
    pos = torch.arange(L, device=seq.device)[None, :]
    src = pos + (pos > j[:, None]).long()  # skip the merged right child
    out = seq.gather(1, src.clamp(max=L - 1)).masked_fill(src > L - 1, -1)
    out[torch.arange(len(seq), device=seq.device), j] = new
    return out


class TreeAutoencoder(nn.Module):
    """Banyan and its tree ablations: greedy cosine merges bottom-up, messages top-down, token reconstruction.

    entangle=True: one leaf per token type in the batch and one node per distinct (left, right) pair, so
    identical subtrees across the batch are one node (the entangled tree); a node with several parents
    averages their messages. entangle=False: one independent tree per sentence (no sharing at all)."""

    def __init__(
        self,
        vocab_size: int,
        channels: int,
        channel_size: int,
        dropout: float = 0.1,
        composition: str = "diagonal",
        entangle: bool = True,
    ):
        super().__init__()
        dim = channels * channel_size
        self.embedding = nn.Embedding(vocab_size, dim)
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        self.out = nn.Linear(dim, vocab_size)
        funcs = {"diagonal": DiagonalFunctions, "dense": DenseFunctions}
        if composition not in funcs:
            raise ValueError(f"composition {composition!r}: expected one of {sorted(funcs)}")
        self.funcs = funcs[composition](channels, channel_size, dropout)
        self.drop = nn.Dropout(dropout)
        self.entangle = entangle

    def non_embedding_parameters(self) -> int:
        """Parameters outside the embedding table and the output projection (paper: 14 for Banyan)."""
        return sum(p.numel() for p in self.funcs.parameters())

    def _leaves(self, sentences: list[torch.Tensor]):
        tokens = torch.cat(sentences).to(self.embedding.weight.device)
        if self.entangle:
            leaf_tokens, node_of_token = torch.unique(tokens, return_inverse=True)
        else:
            leaf_tokens, node_of_token = tokens, torch.arange(len(tokens), device=tokens.device)
        seqs = list(torch.split(node_of_token, [len(s) for s in sentences]))
        return leaf_tokens, seqs

    def encode(self, sentences: list[torch.Tensor]) -> Forest:
        """Merge every sentence's most cosine-similar adjacent pair until one root is left (paper, Section 3)."""
        leaf_tokens, seqs = self._leaves(sentences)
        chunks = [self.drop(self.embedding(leaf_tokens))]
        left, right = [-1] * len(leaf_tokens), [-1] * len(leaf_tokens)
        node_of_pair: dict[tuple[int, int], int] = {}
        seq, lengths = pad_sequences(seqs)
        states = chunks[0]
        while bool((lengths > 1).any()):
            rows = (lengths > 1).nonzero().squeeze(1)
            j = merge_positions(states, seq[rows], lengths[rows])
            l_ids = seq[rows, j].tolist()
            r_ids = seq[rows, j + 1].tolist()
            new_ids, new_l, new_r = [], [], []
            for a, b in zip(l_ids, r_ids):
                key = (a, b)
                if not self.entangle or key not in node_of_pair:
                    node_of_pair[key] = len(left)
                    left.append(a)
                    right.append(b)
                    new_l.append(a)
                    new_r.append(b)
                new_ids.append(node_of_pair[key] if self.entangle else len(left) - 1)
            if new_l:
                chunks.append(self.funcs.compose(states[new_l], states[new_r]))
                states = torch.cat(chunks)
            seq[rows] = replace_pair(seq[rows], j, torch.tensor(new_ids, device=seq.device))
            lengths[rows] -= 1
        dev = states.device
        return Forest(
            states=states,
            left=torch.tensor(left, device=dev),
            right=torch.tensor(right, device=dev),
            leaf_tokens=leaf_tokens,
            roots=seq[:, 0].clone(),
        )

    def decode(self, forest: Forest) -> torch.Tensor:
        """Top-down pass: a node without parents keeps its state; any other node gets the mean of its
        parents' decomposed messages, level by level from the tops. Returns (N, E) decoded states."""
        internal = (forest.left >= 0).nonzero().squeeze(1)
        parent = torch.cat([internal, internal])
        child = torch.cat([forest.left[internal], forest.right[internal]])
        side = torch.cat([torch.zeros_like(internal), torch.ones_like(internal)])
        depth, lefts, rights = [0] * len(forest.left), forest.left.tolist(), forest.right.tolist()
        for n in reversed(internal.tolist()):  # parents have larger ids: depth[n] is final here
            for ch in (lefts[n], rights[n]):
                depth[ch] = max(depth[ch], depth[n] + 1)
        depth = torch.tensor(depth, device=forest.left.device)
        decoded = forest.states
        for d in range(1, int(depth.max()) + 1 if len(depth) else 1):
            edges = (depth[child] == d).nonzero().squeeze(1)
            msg = self.funcs.decompose(decoded[parent[edges]], side[edges])  # (n_edges, E)
            nodes, slot = torch.unique(child[edges], return_inverse=True)
            total = msg.new_zeros(len(nodes), msg.shape[1]).index_add(0, slot, msg)
            count = torch.bincount(slot, minlength=len(nodes)).to(msg.dtype)[:, None]
            decoded = decoded.index_copy(0, nodes, total / count)
        return decoded

    def loss(self, sentences: list[torch.Tensor]) -> torch.Tensor:
        """Cross-entropy of the leaves' decoded states against their tokens, averaged over leaf nodes:
        over the batch's unique token types when entangled, over token occurrences otherwise."""
        forest = self.encode(sentences)
        decoded = self.decode(forest)
        logits = self.out(decoded[: forest.n_leaves])
        return F.cross_entropy(logits, forest.leaf_tokens)

    @torch.no_grad()
    def embed(self, sentences: list[torch.Tensor], batch_size: int = 256) -> torch.Tensor:
        """Root states (B, E) in eval mode; a one-token sentence is its token's embedding."""
        was = self.training
        self.eval()
        out = []
        for i in range(0, len(sentences), batch_size):
            f = self.encode(sentences[i : i + batch_size])
            out.append(f.states[f.roots])
        self.train(was)
        return torch.cat(out)


class MeanAutoencoder(nn.Module):
    """Baseline: the sentence is the mean of its token embeddings, trained to reconstruct each of its tokens
    through the same output projection (no composition parameters)."""

    def __init__(self, vocab_size: int, channels: int, channel_size: int, dropout: float = 0.1, **_):
        super().__init__()
        dim = channels * channel_size
        self.embedding = nn.Embedding(vocab_size, dim)
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        self.out = nn.Linear(dim, vocab_size)
        self.drop = nn.Dropout(dropout)

    def non_embedding_parameters(self) -> int:
        return 0

    def _means(self, sentences):
        device = self.embedding.weight.device
        tokens = torch.cat(sentences).to(device)
        lengths = torch.tensor([len(s) for s in sentences], device=device)
        sent = torch.repeat_interleave(torch.arange(len(sentences), device=device), lengths)
        x = self.drop(self.embedding(tokens))
        total = x.new_zeros(len(sentences), x.shape[1]).index_add(0, sent, x)
        return total / torch.bincount(sent, minlength=len(sentences))[:, None], tokens, sent

    def loss(self, sentences):
        means, tokens, sent = self._means(sentences)
        return F.cross_entropy(self.out(means[sent]), tokens)

    @torch.no_grad()
    def embed(self, sentences, batch_size: int = 256):
        was = self.training
        self.eval()
        out = self._means(sentences)[0]
        self.train(was)
        return out


VARIANTS = {
    "banyan": dict(cls=TreeAutoencoder, composition="diagonal", entangle=True),
    "no_entangle": dict(cls=TreeAutoencoder, composition="diagonal", entangle=False),
    "dense": dict(cls=TreeAutoencoder, composition="dense", entangle=True),
    "mean": dict(cls=MeanAutoencoder),
}


def build_model(variant: str, vocab_size: int, channels: int, channel_size: int, dropout: float) -> nn.Module:
    """One of VARIANTS; Banyan is the diagonal, entangled tree autoencoder."""
    if variant not in VARIANTS:
        raise ValueError(f"variant {variant!r}: expected one of {sorted(VARIANTS)}")
    spec = dict(VARIANTS[variant])
    cls = spec.pop("cls")
    return cls(vocab_size, channels, channel_size, dropout, **spec)
