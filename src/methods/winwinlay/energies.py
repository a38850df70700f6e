"""Cross-attention layout energies: the common energy of Layout-Guidance / BoxDiff and WinWinLay's
non-local energy (common energy + rho * KL to a box-shaped prior).

Conventions: an attention map `attn` has shape (B, K, H, W): K object tokens, non-negative values on an
H x W grid; `mask` has the same shape with 1 on the cells of the token's box. Energies are returned per
sample (B,), averaged over the K objects (as Layout-Guidance's compute_ca_loss averages over objects).
"""

from __future__ import annotations

import torch

EPS = 1e-8


def box_mask(boxes: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """(B, K, H, W) 0/1 masks of fractional boxes (B, K, 4) = (x0, y0, x1, y1) in [0, 1]; the rows
    int(y0 H):int(y1 H) and columns int(x0 W):int(x1 W), as Layout-Guidance's compute_ca_loss builds them."""
    b, k, _ = boxes.shape
    mask = torch.zeros(b, k, height, width, dtype=torch.float32)
    for i in range(b):
        for j in range(k):
            x0, y0, x1, y1 = boxes[i, j].tolist()
            mask[i, j, int(y0 * height) : int(y1 * height), int(x0 * width) : int(x1 * width)] = 1.0
    return mask


def in_box_mass(attn: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(B, K) fraction of each token's attention that falls in its box."""
    return (attn * mask).sum((-2, -1)) / (attn.sum((-2, -1)) + EPS)


def common_energy(attn: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """E = (1 - sum_box A / sum A)^2 per token, mean over tokens: the energy WinWinLay shows to be biased."""
    return ((1.0 - in_box_mass(attn, mask)) ** 2).mean(-1)


def common_energy_grad(attn: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Closed-form dE_common/dA: -2 (1 - m) (mask - m) / (K sum A). It is proportional to 1/sum A on every
    in-box cell alike, so in logit coordinates (dA/dl = A (...)) cells that already hold attention grow
    fastest: the concentration bias."""
    total = attn.sum((-2, -1), keepdim=True) + EPS
    m = (attn * mask).sum((-2, -1), keepdim=True) / total
    return -2.0 * (1.0 - m) * (mask - m) / (total * attn.shape[1])


def box_prior(boxes: torch.Tensor, height: int, width: int, sigma_frac: float) -> torch.Tensor:
    """(B, K, H, W) non-local prior P_box: a Gaussian centred on the box with sd sigma_frac x box side per axis
    (cell centres on the grid), normalised to sum 1. sigma_frac = 0.35 follows a third-party
    re-implementation (assumed: the paper's body could not be read)."""
    ys = (torch.arange(height, dtype=torch.float32) + 0.5) / height
    xs = (torch.arange(width, dtype=torch.float32) + 0.5) / width
    x0, y0, x1, y1 = boxes.unbind(-1)  # (B, K)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    sx = (sigma_frac * (x1 - x0)).clamp_min(1e-3)
    sy = (sigma_frac * (y1 - y0)).clamp_min(1e-3)
    gx = torch.exp(-0.5 * ((xs[None, None, :] - cx[..., None]) / sx[..., None]) ** 2)  # (B, K, W)
    gy = torch.exp(-0.5 * ((ys[None, None, :] - cy[..., None]) / sy[..., None]) ** 2)  # (B, K, H)
    p = gy[..., :, None] * gx[..., None, :]
    return p / p.sum((-2, -1), keepdim=True)


def normalise_map(attn: torch.Tensor) -> torch.Tensor:
    """A_hat = A / sum A over the grid (a distribution per token)."""
    return attn / (attn.sum((-2, -1), keepdim=True) + EPS)


def kl_to_prior(attn: torch.Tensor, prior: torch.Tensor) -> torch.Tensor:
    """KL(A_hat || P_box) per token (B, K)."""
    a = normalise_map(attn)
    return (a * (torch.log(a + EPS) - torch.log(prior + EPS))).sum((-2, -1))


def kl_to_prior_grad(attn: torch.Tensor, prior: torch.Tensor) -> torch.Tensor:
    """Closed-form dKL(A_hat||P)/dA = (log(A_hat/P) - KL) / sum A (the +1 of d(a log a) cancels since sum A_hat = 1)."""
    total = attn.sum((-2, -1), keepdim=True) + EPS
    a = attn / total
    log_ratio = torch.log(a + EPS) - torch.log(prior + EPS)
    kl = (a * log_ratio).sum((-2, -1), keepdim=True)
    return (log_ratio - kl) / total


def nonlocal_energy(attn: torch.Tensor, mask: torch.Tensor, prior: torch.Tensor, rho: float) -> torch.Tensor:
    """WinWinLay's non-local attention energy: E_common + rho * KL(A_hat || P_box), mean over tokens."""
    return common_energy(attn, mask) + rho * kl_to_prior(attn, prior).mean(-1)


def rho_at(step: int, n_guided: int, rho0: float) -> float:
    """rho decays linearly from rho0 at the first denoising step to 0 after the last guided step (assumed
    from a third-party re-implementation)."""
    return rho0 * max(0.0, 1.0 - step / max(n_guided, 1))


# --- BoxDiff (Xie et al., ICCV 2023): inner-box, outer-box and corner constraints -----------------------------
# Read from the official code (showlab/BoxDiff at b0d5d3b, pipeline/sd_pipeline_boxdiff.py
# _compute_max_attention_per_index / _compute_loss, utils/gaussian_smoothing.py, config.py), re-written here: the
# token maps are re-normalised across the prompt's tokens with a softmax of 100 x the attention probabilities (the
# start token and the last position left out) and smoothed with a 3x3 kernel exp(-(d / (2 sigma))^2), sigma 0.5,
# normalised, after reflect padding; a box (x1, y1, x2, y2) becomes map cells by round(); per object token then
#   inner box  max(0, 1 - mean of the top int(P |box|) values of the map times the box mask),
#   outer box  max(0, mean of the top int(P |outside|) values of the map times the outside mask),
#   corners    mean over all columns (rows) of |max over rows (columns) of the map - box projection|, counting
#              only columns (rows) within L cells of x1 and of x2 (y1, y2);
# the energy is the sum of the four terms over object tokens. Defaults of config.py and the README's commands:
# P = 0.2, L = 1 (on 16x16 maps).


BOXDIFF_RES = 16  # the map resolution BoxDiff's corner margin L is given at


def corner_margin_at(margin: int, height: int) -> int:
    """BoxDiff's corner margin L (cells of a 16x16 map) at another map resolution."""
    return int(round(margin * height / BOXDIFF_RES))


def boxdiff_cells(boxes: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """(B, K, 4) integer cells (x1, y1, x2, y2) of fractional boxes, as BoxDiff converts pixel boxes:
    max(round(b / (512 / res)), 0) with Python's round (halves to even; b x res first rounded to 6 decimals so
    that a half stays a half in float arithmetic)."""
    scale = torch.tensor([width, height, width, height], dtype=torch.float64)
    cells = [[[max(round(round(v, 6)), 0) for v in (box.double() * scale).tolist()] for box in row] for row in boxes]
    return torch.tensor(cells, dtype=torch.long)


def boxdiff_mask(cells: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """(B, K, H, W) masks of BoxDiff's box cells: rows y1:y2, columns x1:x2."""
    b, k, _ = cells.shape
    mask = torch.zeros(b, k, height, width, dtype=torch.float32)
    for i in range(b):
        for j in range(k):
            x1, y1, x2, y2 = cells[i, j].tolist()
            mask[i, j, y1:y2, x1:x2] = 1.0
    return mask


def boxdiff_token_shares(text_maps: torch.Tensor, temperature: float = 100.0) -> torch.Tensor:
    """(B, N, H, W) softmax over the N text tokens of temperature x attention (BoxDiff / Attend-and-Excite)."""
    return torch.softmax(temperature * text_maps, dim=1)


def gaussian_kernel(sigma: float = 0.5, kernel_size: int = 3) -> torch.Tensor:
    """BoxDiff's GaussianSmoothing kernel: the product over the two axes of exp(-((i - c) / (2 sigma))^2)
    (note the 2 sigma inside the square, not sqrt(2) sigma), normalised to sum 1."""
    x = torch.arange(kernel_size, dtype=torch.float32) - (kernel_size - 1) / 2
    g = torch.exp(-((x / (2 * sigma)) ** 2))
    kernel = g[:, None] * g[None, :]
    return kernel / kernel.sum()


def gaussian_smooth(maps: torch.Tensor, sigma: float = 0.5, kernel_size: int = 3) -> torch.Tensor:
    """Depthwise smoothing of (B, K, H, W) maps with BoxDiff's kernel after reflect padding."""
    b, k, h, w = maps.shape
    kernel = gaussian_kernel(sigma, kernel_size).to(maps).view(1, 1, kernel_size, kernel_size)
    pad = kernel_size // 2
    flat = torch.nn.functional.pad(maps.reshape(b * k, 1, h, w), (pad, pad, pad, pad), mode="reflect")
    return torch.nn.functional.conv2d(flat, kernel).reshape(b, k, h, w)


def top_fraction_mean(values: torch.Tensor, region: torch.Tensor, frac: float) -> torch.Tensor:
    """(B, K) mean of the int(frac x |region|) largest values of `values * region`. BoxDiff's topk(0) gives the
    mean of nothing (NaN) when frac x |region| < 1; here at least one value is taken."""
    flat = (values * region).flatten(-2)
    k = (region.flatten(-2).sum(-1) * frac).long().clamp_min(1)
    ordered = flat.sort(-1, descending=True).values
    csum = ordered.cumsum(-1)
    return csum.gather(-1, (k - 1)[..., None])[..., 0] / k


def corner_mask(lo: torch.Tensor, hi: torch.Tensor, n: int, margin: int) -> torch.Tensor:
    """(B, K, n) BoxDiff's corner mask: ones on [max(e - L, 0), min(e + L + 1, n)) for e = lo and e = hi."""
    idx = torch.arange(n)
    return (((idx - lo[..., None]).abs() <= margin) | ((idx - hi[..., None]).abs() <= margin)).float()


def boxdiff_terms(
    shares: torch.Tensor, cells: torch.Tensor, top_frac: float, corner_margin: int
) -> dict[str, torch.Tensor]:
    """The three BoxDiff constraints per object token (B, K) on token shares (B, K, H, W) and box cells (B, K, 4)."""
    h, w = shares.shape[-2:]
    mask = boxdiff_mask(cells, h, w).to(shares.device)
    inner = (1.0 - top_fraction_mean(shares, mask, top_frac)).clamp_min(0.0)
    outer = top_fraction_mean(shares, 1.0 - mask, top_frac).clamp_min(0.0)
    terms = {"inner": inner, "outer": outer}
    for name, axis, lo, hi in (("corner_x", -2, 0, 2), ("corner_y", -1, 1, 3)):
        proj_map = shares.amax(axis)  # (B, K, W) for x: max over rows
        proj_box = mask.amax(axis)
        near = corner_mask(cells[..., lo], cells[..., hi], proj_box.shape[-1], corner_margin).to(shares.device)
        terms[name] = ((proj_map - proj_box).abs() * near).mean(-1)
    return terms


def boxdiff_energy(
    text_maps: torch.Tensor,
    obj_index: torch.Tensor,
    boxes: torch.Tensor,
    top_frac: float = 0.2,
    corner_margin: int = 1,
    temperature: float = 100.0,
    smooth: bool = True,
    per_token: bool = False,
) -> torch.Tensor:
    """BoxDiff's energy per sample (B,): the inner-box, outer-box and corner constraints summed over object
    tokens (per_token: the (B, K) sums of the four terms instead, and the inner-box terms (B, K) as a second
    output, for the refinement step). text_maps (B, N, H, W) are the attention probabilities of the tokens
    BoxDiff normalises over, obj_index (B, K) the object tokens' positions among them, boxes (B, K, 4)
    fractional. temperature 0 skips the re-normalisation (the tiny denoiser's maps are already shares of
    [background, objects]; a softmax of 100 x them would hand everything to the background token)."""
    shares = boxdiff_token_shares(text_maps, temperature) if temperature > 0 else text_maps
    shares = shares.gather(1, obj_index[..., None, None].expand(-1, -1, *shares.shape[-2:]))
    if smooth:
        shares = gaussian_smooth(shares)
    terms = boxdiff_terms(shares, boxdiff_cells(boxes, *shares.shape[-2:]), top_frac, corner_margin)
    if per_token:
        return sum(terms.values()), terms["inner"]
    return sum(terms.values()).sum(-1)
