"""Golden-value parity with the official code: exlab-research/Banyan at commit
7c2cd9350b97fa5df61989594a1b8d21e321df78 (`src/models.py` Banyan, `src/funcs.py` Compose / Decompose,
`src/model_utils.py`), run in a scratch checkout with the project's torch 2.13 CPU and DGL 2.1.0 from PyPI
(its unused graphbolt sampler package stubbed out for this torch); no official code is in this repository.

Inputs: vocabulary V = 12 (the official model gets one more row, its padding token 12), E = 8 with c = 4
channels of e = 2. Parameters drawn in this order from `np.random.default_rng(0)` and copied into both
models in float32: embedding rows U(-0.5, 0.5) (V x E), output weight N(0, 1) * 0.3 (V x E), output bias
N(0, 1) * 0.1 (V), then the seven e-vectors U(-1, 1) in the order w_l, w_r, b, d_l, d_r, b_dl, b_dr
(official comp_l, comp_r, cb, decomp_l, decomp_r, lb, rb). Batch: the six token sentences of SENTENCES,
padded with 12 for the official model; eval mode (no dropout). Official outputs: `Banyan.forward(seqs)`
logits and tokens, their cross-entropy and its gradients, the number of graph nodes and the frontier
sizes of `Banyan.compose(seqs)`, and the roots `Banyan.compose(seqs, roots=True)`.
Tolerance: 1e-5 relative (fp32), 1e-6 absolute for values near 0.
"""

import numpy as np
import pytest
import torch

from methods.banyan.model import TreeAutoencoder

V, C, E_CH = 12, 4, 2
SENTENCES = [[1, 2, 3, 4], [1, 2, 3, 5, 6], [7, 2, 3, 4], [8, 9, 10, 11, 0], [1, 2, 3, 4], [6, 5, 9, 2]]
LOSS = 2.588214159011841
LOGITS_ROW0 = [
    -0.17833910882472992,
    -0.6519809365272522,
    0.24595987796783447,
    -0.05984484404325485,
    0.23487526178359985,
    1.447941541671753,
    0.17081792652606964,
    -0.7345401644706726,
    -1.0195611715316772,
    0.05009069666266441,
    -0.23153024911880493,
    0.358675479888916,
]
LOGITS_SUM = -3.8225533962249756
N_NODES = 27  # 12 token leaves and 15 merge nodes (sentences 1 and 5 share every node)
FRONTIERS = [5, 6, 6, 6, 4]  # official topological frontiers from the tops (depths 0..4)
ROOTS = [
    [0.96220547, -1.17891192, 1.04970932, -1.58845925, 0.96298587, -1.65294647, 1.07012165, -1.61945248],
    [0.90724456, -1.48102951, 1.15225208, -1.88571167, 1.10767817, -1.90971327, 0.93999922, -1.89319777],
    [0.93388981, -1.25004768, 0.8720758, -1.56319189, 0.82552826, -1.56838858, 0.8761909, -1.41197586],
    [0.58544546, -0.96794993, 0.5304777, -0.93736607, 0.64553809, -1.23628211, 0.86166418, -0.82870996],
    [0.96220547, -1.17891192, 1.04970932, -1.58845925, 0.96298587, -1.65294647, 1.07012165, -1.61945248],
    [0.82300985, -1.11190081, 0.87332624, -1.56609845, 0.80705249, -1.56439424, 0.83584577, -1.42016649],
]
GRADS = {
    "w_l": [0.0035707573406398296, 0.0008429373265244067],
    "w_r": [-0.0023913849145174026, -0.011298863217234612],
    "b": [0.007923226803541183, 0.06971899420022964],
    "d_l": [-0.01668332703411579, -0.002630963921546936],
    "d_r": [0.013864954002201557, 0.007846085354685783],
    "b_dl": [0.036361780017614365, 0.2991739809513092],
    "b_dr": [-0.05306607112288475, 0.059111155569553375],
}


def _model() -> TreeAutoencoder:
    rng = np.random.default_rng(0)
    emb = rng.uniform(-0.5, 0.5, size=(V, C * E_CH))
    out_w = rng.normal(size=(V, C * E_CH)) * 0.3
    out_b = rng.normal(size=V) * 0.1
    funcs = {k: rng.uniform(-1, 1, size=E_CH) for k in ("w_l", "w_r", "b", "d_l", "d_r", "b_dl", "b_dr")}
    m = TreeAutoencoder(V, C, E_CH)
    with torch.no_grad():
        m.embedding.weight[:] = torch.tensor(emb, dtype=torch.float32)
        m.out.weight[:] = torch.tensor(out_w, dtype=torch.float32)
        m.out.bias[:] = torch.tensor(out_b, dtype=torch.float32)
        for k, v in funcs.items():
            getattr(m.funcs, k)[:] = torch.tensor(v, dtype=torch.float32)
    return m.eval()


def _batch():
    return [torch.tensor(s) for s in SENTENCES]


def test_loss_logits_and_gradients_equal_official():
    m = _model()
    forest = m.encode(_batch())
    logits = m.out(m.decode(forest)[: forest.n_leaves])
    assert forest.leaf_tokens.tolist() == list(range(V))  # official: the batch's unique tokens, sorted
    assert logits[0].tolist() == pytest.approx(LOGITS_ROW0, rel=1e-5, abs=1e-6)
    assert float(logits.sum()) == pytest.approx(LOGITS_SUM, rel=1e-5)
    loss = m.loss(_batch())
    assert float(loss.detach()) == pytest.approx(LOSS, rel=1e-5)
    loss.backward()
    for name, grad in GRADS.items():
        assert getattr(m.funcs, name).grad.tolist() == pytest.approx(grad, rel=1e-5, abs=1e-6), name


def test_entangled_graph_and_roots_equal_official():
    m = _model()
    forest = m.encode(_batch())
    assert len(forest.states) == N_NODES
    # decoding depth of every node, as the official topological frontiers from the tops
    depth = [0] * N_NODES
    for n in reversed(range(N_NODES)):
        for ch in (int(forest.left[n]), int(forest.right[n])):
            if ch >= 0:
                depth[ch] = max(depth[ch], depth[n] + 1)
    assert np.bincount(depth).tolist() == FRONTIERS
    roots = m.embed(_batch())
    np.testing.assert_allclose(roots.numpy(), np.array(ROOTS), rtol=1e-5, atol=1e-6)
