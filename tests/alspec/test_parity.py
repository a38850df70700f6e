"""Golden values from the official ALSpec speculative attention, and the tile alignment it uses.

Official code: mcj-group/ALSpec (a TT-Metal fork; `fetch` had no snapshot, so the op's PyTorch reference
`get_speculative_flash_decode_expected` of its speculative flash-decode test, as indexed, was run in a
scratch folder on the CPU). It returns the exact output o, the speculative ô (attention over the first
S keys and the chunk [P - S, P), P = position + 1 rounded up to the 32-token tile, later keys masked),
‖o − ô‖₂ and ‖o‖₂ over all heads and head dims of a user, and the test accepts iff ‖o − ô‖ < λ‖o‖.
Inputs: its `fa_rand` (normal + 10 x normal x Bernoulli(0.001)) drawn from a generator seeded 1234 in the
order K (2, 2, 512, 64), V, Q (1, 2, 8, 64); 8 query heads over 2 KV heads, S = 128, scale 64^-0.5,
positions 319 (P = 320: the chunk is the last 128 keys), 300 (P = 320: 109 real keys) and 200
(the chunk [96, 224) overlaps the first S keys, so keys 96..127 enter the official ô twice).
Tolerance 1e-5 relative (float32), 5e-7 absolute on entries near 0 (SDPA sums in another order).
"""

import pytest
import torch

from methods.alspec.engine import verify
from methods.kernels import decode_attention

GOLD = {  # position: (‖o − ô‖ per user, ‖o‖ per user, o[user 0, head 0, :4], ô[user 0, head 0, :4])
    319: (
        [6.13572359085083, 8.498580932617188],
        [6.615927696228027, 8.632360458374023],
        [0.010814533568918705, 0.13602913916110992, 0.15222345292568207, -0.0916391983628273],
        [0.0049666110426187515, 0.0785396546125412, 0.15306787192821503, -0.10855434834957123],
    ),
    300: (
        [6.2460551261901855, 8.510140419006348],
        [6.703356742858887, 8.649930953979492],
        [0.02086789347231388, 0.14221860468387604, 0.15619008243083954, -0.08547424525022507],
        [0.016690369695425034, 0.08280070871114731, 0.1578664928674698, -0.10209639370441437],
    ),
}


def _fa_rand(g, *shape):
    return torch.randn(shape, generator=g) + torch.randn(shape, generator=g) * 10 * torch.bernoulli(
        torch.full(shape, 0.001), generator=g
    )


def _inputs():
    g = torch.Generator().manual_seed(1234)
    k, v, q = _fa_rand(g, 2, 2, 512, 64), _fa_rand(g, 2, 2, 512, 64), _fa_rand(g, 1, 2, 8, 64)
    return q[0], k.repeat_interleave(4, dim=1), v.repeat_interleave(4, dim=1)  # GQA: 4 query heads per KV head


def tile_window(position: int, chunk: int, tile: int = 32) -> int:
    """Real keys in the official last chunk [P - chunk, P), P = position + 1 rounded up to the tile."""
    padded = -(-(position + 1) // tile) * tile
    return chunk - (padded - position - 1)


@pytest.mark.parametrize("position", sorted(GOLD))
def test_speculative_attention_and_verification(position):
    dist, norm, o_row, spec_row = GOLD[position]
    q, k, v = _inputs()
    t = position + 1
    o = decode_attention(q, k[:, :, :t], v[:, :, :t], t, 0, 64**-0.5)
    o_hat = decode_attention(q, k[:, :, :t], v[:, :, :t], 128, tile_window(position, 128), 64**-0.5)
    assert torch.linalg.vector_norm(o - o_hat, dim=(-2, -1)).tolist() == pytest.approx(dist, rel=1e-5)
    assert torch.linalg.vector_norm(o, dim=(-2, -1)).tolist() == pytest.approx(norm, rel=1e-5)
    assert o[0, 0, :4].tolist() == pytest.approx(o_row, rel=1e-5, abs=5e-7)
    assert o_hat[0, 0, :4].tolist() == pytest.approx(spec_row, rel=1e-5, abs=5e-7)
    for lam in (0.2, 0.93, 0.99):  # the official rule: accept iff dist < lam * norm, per user over heads
        assert verify(o, o_hat, lam).tolist() == [d < lam * n for d, n in zip(dist, norm)]


def test_overlap_of_sink_and_chunk_differs():
    """Position 200: the official ô counts keys 96..127 twice (‖o − ô‖ = 0.9039 / 0.7213 for the two users);
    ours reads every key once, so ô = o exactly."""
    q, k, v = _inputs()
    t = 201
    o = decode_attention(q, k[:, :, :t], v[:, :, :t], t, 0, 64**-0.5)
    o_hat = decode_attention(q, k[:, :, :t], v[:, :, :t], 128, tile_window(200, 128), 64**-0.5)
    assert torch.allclose(o, o_hat, atol=1e-6)
    assert tile_window(200, 128) == 105 and tile_window(319, 128) == 128 and tile_window(300, 128) == 109
