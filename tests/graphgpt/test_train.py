"""SMTP mask schedule statistics, masking invariants, GET attention masks, a few optimisation steps."""
import math

import networkx as nx
import numpy as np
import torch

from methods.graphgpt.model import GET, GINE, GETConfig, GETPredictor
from methods.graphgpt.serialize import SPECIAL
from methods.graphgpt.train import BOS_ID, MASK_ID, PAD_ID, TrainConfig, pad_batch, pretrain, smtp_corrupt, smtp_mask_ratio


def test_special_ids_match_vocab_order():
    assert SPECIAL[PAD_ID] == "<pad>" and SPECIAL[BOS_ID] == "<bos>" and SPECIAL[MASK_ID] == "<mask>"


def test_mask_ratio_schedule_distribution():
    """ratio = 0.5 + 0.5 cos(pi r): mean 1/2, variance 1/8, CDF F(x) = 1 - arccos(2x - 1) / pi."""
    x = smtp_mask_ratio(200_000, torch.Generator().manual_seed(0)).numpy()
    assert 0 <= x.min() and x.max() <= 1
    assert abs(x.mean() - 0.5) < 0.005
    assert abs(x.var() - 1 / 8) < 0.003
    for q in (0.1, 0.25, 0.5, 0.75, 0.9):
        assert abs(np.mean(x <= q) - (1 - math.acos(2 * q - 1) / math.pi)) < 0.005
    # not uniform: a quarter of the mass lies above 0.854 (a uniform ratio would put 14.6% there)
    assert abs(np.mean(x > 0.5 + 0.5 * math.cos(math.pi / 4)) - 0.25) < 0.005


def test_smtp_corrupt_masks_the_drawn_share_and_never_bos_or_pad():
    gen = torch.Generator().manual_seed(1)
    seqs = [[BOS_ID] + list(range(10, 10 + n)) for n in (5, 17, 30, 2)] * 50
    tokens, pad = pad_batch(seqs)
    inputs, targets, ratio = smtp_corrupt(tokens, pad, gen)
    masked = inputs == MASK_ID
    assert not masked[:, 0].any() and not (masked & pad).any()
    L = (~pad).sum(1) - 1
    assert torch.equal(masked.sum(1), torch.clamp(torch.ceil(ratio * L), min=1).long())
    assert torch.equal(targets[masked], tokens[masked]) and (targets[~masked] == -100).all()


def test_decoder_is_causal_and_ignores_padding():
    torch.manual_seed(0)
    model = GET(GETConfig(vocab_size=30, d_model=16, n_layers=2, n_heads=2, d_ff=32)).eval()
    a, _ = pad_batch([[1, 5, 6, 7, 8]])
    b = a.clone()
    b[0, 4] = 9
    ha, hb = model(a, a == 0), model(b, b == 0)
    assert torch.allclose(ha[0, :4], hb[0, :4], atol=1e-6) and not torch.allclose(ha[0, 4], hb[0, 4])
    padded, pad = pad_batch([[1, 5, 6, 7, 8], [1, 5, 6]])
    h = model(padded, pad)
    alone, _ = pad_batch([[1, 5, 6]])
    assert torch.allclose(h[1, :3], model(alone, alone == 0)[0], atol=1e-5)


def test_encoder_sees_the_future():
    torch.manual_seed(0)
    model = GET(GETConfig(vocab_size=30, d_model=16, n_layers=1, n_heads=2, d_ff=32, causal=False)).eval()
    a, _ = pad_batch([[1, 5, 6, 7]])
    b = a.clone()
    b[0, 3] = 9
    assert not torch.allclose(model(a, a == 0)[0, 0], model(b, b == 0)[0, 0])
    p = GETPredictor(model, 3)
    assert p(a, a == 0).shape == (1, 3)


def test_ntp_pretraining_lowers_loss_on_a_learnable_corpus():
    """Sequences of a fixed cyclic pattern are predictable: NTP loss falls well below log(vocab)."""
    views = [[[1] + [6 + (s + k) % 5 for k in range(12)] + [2]] for s in range(5)]
    _, hist = pretrain(views, 12, "ntp", {"d_model": 32, "n_layers": 1, "n_heads": 2, "d_ff": 64},
                       TrainConfig(steps=150, batch_size=16, lr=3e-3, warmup=10), seed=0)
    assert np.mean(hist["loss"][:5]) > 2.0 and np.mean(hist["loss"][-10:]) < 0.8


def test_gine_counts_neighbours():
    """One GINE layer with sum aggregation distinguishes degrees (sanity of the message passing)."""
    torch.manual_seed(0)
    gin = GINE(n_tokens=3, n_out=1, d=8, n_layers=1).eval()
    star = nx.star_graph(3)
    src = torch.tensor([u for u, v in star.edges] + [v for u, v in star.edges])
    dst = torch.tensor([v for u, v in star.edges] + [u for u, v in star.edges])
    x = torch.zeros(4, 1, dtype=torch.long)
    ea = torch.zeros(6, 1, dtype=torch.long)
    h = gin.node_states(x, torch.stack([src, dst]), ea)
    assert torch.allclose(h[1], h[2]) and not torch.allclose(h[0], h[1])
