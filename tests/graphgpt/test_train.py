"""SMTP mask-ratio schedules and 80/0/20 replacement rates, masking invariants, GET attention and
read-out, pre-training on a learnable corpus, GINE message passing."""

import math

import networkx as nx
import numpy as np
import pytest
import torch

from methods.graphgpt.model import GET, GINE, GETConfig, GETPredictor
from methods.graphgpt.serialize import GSUM, MASK, PAD, SPECIAL
from methods.graphgpt.train import (
    GSUM_ID,
    MASK_ID,
    PAD_ID,
    TrainConfig,
    Views,
    pad_batch,
    pretrain,
    smtp_corrupt,
    smtp_mask_ratio,
)

torch.set_num_threads(1)  # the project's CPU budget: one thread per process (2 cores shared by many)


def _seqs(lengths, K=3, seed=0):
    """Random stacked sequences ending with the <gsum> position."""
    rng = np.random.default_rng(seed)
    out = []
    for n in lengths:
        s = rng.integers(10, 40, size=(n + 1, K))
        s[-1] = [GSUM_ID] + [3] * (K - 1)
        out.append(s)
    return out


def test_special_ids_match_vocab_order():
    assert SPECIAL[PAD_ID] == PAD and SPECIAL[MASK_ID] == MASK and SPECIAL[GSUM_ID] == GSUM


def test_mask_ratio_schedules():
    """uniform: 1 - r ~ U(0, 1), mean 1/2, variance 1/12; cosine: 0.5 + 0.5 cos(pi r), variance 1/8,
    CDF F(x) = 1 - arccos(2x - 1) / pi."""
    gen = torch.Generator().manual_seed(0)
    u = smtp_mask_ratio(200_000, "uniform", gen).numpy()
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    for q in (0.1, 0.5, 0.9):
        assert abs(np.mean(u <= q) - q) < 0.005
    c = smtp_mask_ratio(200_000, "cosine", gen).numpy()
    assert abs(c.var() - 1 / 8) < 0.003
    for q in (0.1, 0.25, 0.75):
        assert abs(np.mean(c <= q) - (1 - math.acos(2 * q - 1) / math.pi)) < 0.005
    with pytest.raises(ValueError, match="graphgpt.smtp.schedule"):
        smtp_mask_ratio(3, "linear", gen)


@pytest.mark.parametrize("unit", ["token", "position"])
def test_masked_tokens_are_mask_80_random_0_unchanged_20_within_binomial_error(unit):
    gen = torch.Generator().manual_seed(1)
    tokens, pad = pad_batch(_seqs([5, 17, 30, 2] * 500))
    inputs, targets, action = smtp_corrupt(tokens, pad, gen, "uniform", (0.8, 0.0, 0.2), vocab_size=40, unit=unit)
    masked = action > 0
    n = int(masked.sum())
    for code, p in ((1, 0.8), (2, 0.0), (3, 0.2)):
        share = float((action[masked] == code).float().mean())
        assert abs(share - p) <= 4 * math.sqrt(p * (1 - p) / n) + 1e-12, (code, share)
    assert (inputs[action == 1] == MASK_ID).all()
    assert torch.equal(inputs[action == 3], tokens[action == 3]) and torch.equal(inputs[~masked], tokens[~masked])
    if unit == "position":  # a whole position shares one decision
        assert (action == action[..., :1]).all()
    else:  # tokens of one position are chosen on their own
        partial = masked.any(-1) & ~masked.all(-1)
        assert partial.float().mean() > 0.1
    inputs2, _, action2 = smtp_corrupt(tokens, pad, gen, "uniform", (0.5, 0.3, 0.2), vocab_size=40, unit=unit)
    share = float((action2[action2 > 0] == 2).float().mean())
    assert abs(share - 0.3) < 4 * math.sqrt(0.21 / int((action2 > 0).sum()))
    assert (inputs2[action2 == 2] > GSUM_ID).all()


def test_smtp_masks_ceil_ratio_of_the_tokens_never_pad():
    """Official `_mask_stacked_input_ids_v2`: ceil(ratio * L * K) of the L * K tokens of a sequence
    (its end token included), chosen one by one; labels where chosen, -100 elsewhere."""
    gen = torch.Generator().manual_seed(2)
    tokens, pad = pad_batch(_seqs([5, 17, 30, 2] * 50))
    inputs, targets, action = smtp_corrupt(tokens, pad, gen, "uniform")
    masked = action > 0
    assert not (masked & pad[..., None]).any()
    gen = torch.Generator().manual_seed(2)
    ratio = smtp_mask_ratio(tokens.shape[0], "uniform", gen)
    cells = (~pad).sum(1) * tokens.shape[2]
    assert torch.equal(masked.sum((1, 2)), torch.clamp(torch.ceil(ratio * cells), min=1).long())
    assert torch.equal(targets[masked], tokens[masked]) and (targets[~masked] == -100).all()


def test_position_unit_never_masks_gsum():
    gen = torch.Generator().manual_seed(2)
    tokens, pad = pad_batch(_seqs([5, 17, 30, 2] * 50))
    _, _, action = smtp_corrupt(tokens, pad, gen, "uniform", unit="position")
    gsum = tokens[..., 0] == GSUM_ID
    assert not ((action > 0).any(-1) & (pad | gsum)).any()
    with pytest.raises(ValueError, match="graphgpt.smtp.unit"):
        smtp_corrupt(tokens, pad, gen, "uniform", unit="cell")


def test_decoder_is_causal_ignores_padding_and_reads_out_gsum():
    torch.manual_seed(0)
    model = GET(GETConfig(vocab_size=40, n_channels=3, d_model=16, n_layers=2, n_heads=2, d_ff=32)).eval()
    a, pad_a = pad_batch(_seqs([4]))
    b = a.clone()
    b[0, 3, 1] = 9
    ha, hb = model(a, pad_a), model(b, pad_a)
    assert torch.allclose(ha[0, :3], hb[0, :3], atol=1e-6) and not torch.allclose(ha[0, 3], hb[0, 3])
    seqs = _seqs([4, 2], seed=3)
    padded, pad = pad_batch(seqs)
    alone, pad1 = pad_batch(seqs[1:])
    assert torch.allclose(model(padded, pad)[1, :3], model(alone, pad1)[0], atol=1e-5)
    p = GETPredictor(model, 2).eval()
    assert torch.allclose(p(padded, pad)[1], p(alone, pad1)[0], atol=1e-5)  # read-out at <gsum>, padding ignored
    assert model.lm_logits(ha).shape == (1, 5, 3, 40)


def test_encoder_sees_the_future():
    torch.manual_seed(0)
    model = GET(GETConfig(vocab_size=40, n_channels=3, d_model=16, n_layers=1, n_heads=2, d_ff=32, causal=False))
    a, pad = pad_batch(_seqs([4]))
    b = a.clone()
    b[0, 3, 0] = 9
    assert not torch.allclose(model.eval()(a, pad)[0, 0], model(b, pad)[0, 0])


def _pool(seqs):
    lengths = np.array([len(s) for s in seqs])
    ends = np.cumsum(lengths)
    return {
        "tokens": torch.as_tensor(np.concatenate(seqs)),
        "bounds": torch.as_tensor(np.stack([ends - lengths, ends], 1).reshape(len(seqs), 1, 2)),
    }


@pytest.mark.parametrize("objective", ["ntp", "smtp"])
def test_pretraining_lowers_loss_on_a_learnable_corpus(objective):
    """Sequences of a fixed cyclic pattern are predictable: the loss falls well below log(vocab)."""
    seqs = [np.array([[10 + (s + k) % 5, 20 + (s + k) % 5] for k in range(12)] + [[GSUM_ID, 3]]) for s in range(5)]
    _, hist = pretrain(
        Views(_pool(seqs), 16, reindex=False),
        30,
        2,
        objective,
        {"d_model": 32, "n_layers": 1, "n_heads": 2, "d_ff": 64},
        TrainConfig(steps=80, batch_size=16, lr=3e-3, warmup=10),
        seed=0,
    )
    assert np.mean(hist["loss"][:5]) > 2.0 and np.mean(hist["loss"][-10:]) < 1.0


def test_views_reindex_only_node_tokens():
    seq = np.array([[9 + 3, 4], [9 + 15, 5], [GSUM_ID, 3]])
    v = Views(_pool([seq]), 16, reindex=True)
    drawn = v.get(0, 0, 2)
    assert drawn[:, 0].tolist() == [9 + 5, 9 + 1, GSUM_ID] and drawn[:, 1].tolist() == [4, 5, 3]
    assert np.array_equal(Views(_pool([seq]), 16, reindex=False).get(0, 0, 2), seq)


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


def test_regression_loss_is_l1_as_the_official_fine_tuning():
    from methods.graphgpt.train import task_loss

    out, y = torch.tensor([[1.0], [-2.0], [0.5]]), torch.tensor([0.0, 0.0, 0.5])
    assert float(task_loss(out, y, "regression")) == pytest.approx((1 + 2 + 0) / 3)
    assert float(task_loss(out, y, "regression", "mse")) == pytest.approx((1 + 4 + 0) / 3)
    assert TrainConfig().regression_loss == "l1"
    with pytest.raises(ValueError, match="graphgpt.finetune.regression_loss"):
        task_loss(out, y, "regression", "huber")
