"""Point-cloud geometry: farthest-point sampling, kNN grouping, Chamfer distance, NeRF positional
encoding and inverse-distance interpolation (the building blocks of Point-MAE and GAPrompt)."""

from __future__ import annotations

import torch


def farthest_point_sample(xyz: torch.Tensor, n_samples: int, skip_near_origin: bool = True) -> torch.Tensor:
    """Indices (B, S) of iterative farthest-point sampling as pointnet2_ops' CUDA kernel (used by Point-MAE
    and GAPrompt) computes it: start from point 0; squared distances in float, running minimum from 1e10; the
    farthest point is the next index (first of equal distances). The kernel never selects a point with
    |p|^2 <= 1e-3 (`if (mag <= 1e-3) continue;`), i.e. none within 0.032 of the origin; `skip_near_origin`
    keeps that rule. xyz: (B, N, 3)."""
    B, N, _ = xyz.shape
    if n_samples > N:
        raise ValueError(f"farthest_point_sample: {n_samples} samples requested from {N} points")
    idx = torch.zeros(B, n_samples, dtype=torch.long, device=xyz.device)
    dist = torch.full((B, N), 1e10, device=xyz.device, dtype=xyz.dtype)
    skipped = (xyz**2).sum(-1) <= 1e-3 if skip_near_origin else torch.zeros(B, N, dtype=torch.bool, device=xyz.device)
    last = torch.zeros(B, dtype=torch.long, device=xyz.device)
    rows = torch.arange(B, device=xyz.device)
    for i in range(n_samples):
        idx[:, i] = last
        d = ((xyz - xyz[rows, last][:, None, :]) ** 2).sum(-1)  # (B, N)
        dist = torch.where(skipped, dist, torch.minimum(dist, d))
        last = torch.where(skipped, torch.full_like(dist, -1.0), dist).argmax(-1)
    return idx


def gather(points: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """points (B, N, C), idx (B, ...) -> (B, ..., C)."""
    B = points.shape[0]
    flat = idx.reshape(B, -1)
    out = torch.gather(points, 1, flat[..., None].expand(-1, -1, points.shape[-1]))
    return out.reshape(*idx.shape, points.shape[-1])


def knn(query: torch.Tensor, ref: torch.Tensor, k: int) -> torch.Tensor:
    """Indices (B, M, k) of the k nearest points of ref (B, N, 3) to each query (B, M, 3), nearest first."""
    d = torch.cdist(query, ref)
    return d.topk(k, dim=-1, largest=False).indices


def group(xyz: torch.Tensor, n_groups: int, group_size: int):
    """FPS centres and their kNN neighbourhoods in centre-relative coordinates (Point-MAE's Group).
    Returns neighbourhood (B, G, k, 3), centres (B, G, 3), neighbour idx (B, G, k), centre idx (B, G)."""
    center_idx = farthest_point_sample(xyz, n_groups)
    center = gather(xyz, center_idx)
    idx = knn(center, xyz, group_size)
    neighborhood = gather(xyz, idx) - center[:, :, None, :]
    return neighborhood, center, idx, center_idx


def chamfer_l2(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Point-MAE's ChamferDistanceL2: mean over a of the squared distance to the nearest point of b,
    plus the same from b to a, averaged over the batch. a (B, N, 3), b (B, M, 3)."""
    d = torch.cdist(a, b) ** 2
    return d.min(-1).values.mean() + d.min(-2).values.mean()


def nerf_encoding(x: torch.Tensor, levels: int) -> torch.Tensor:
    """(x, sin(2^k x), cos(2^k x) for k < levels): 3 (2 levels + 1) features per point."""
    out = [x]
    for k in range(levels):
        out += [torch.sin(2.0**k * x), torch.cos(2.0**k * x)]
    return torch.cat(out, -1)


def idw_interpolate(
    xyz_to: torch.Tensor, xyz_from: torch.Tensor, feats: torch.Tensor, k: int, eps: float
) -> torch.Tensor:
    """Inverse squared-distance weighted mean of the features of the k nearest source points.
    xyz_to (B, N, 3), xyz_from (B, S, 3), feats (B, S, C) -> (B, N, C)."""
    k = min(k, xyz_from.shape[1])
    d2 = torch.cdist(xyz_to, xyz_from) ** 2
    d2, idx = d2.topk(k, dim=-1, largest=False)
    w = 1.0 / (d2 + eps)
    w = w / w.sum(-1, keepdim=True)
    # a dense (B, N, S) weight matrix: S (centres) is small, so one bmm beats gathering (B, N, k, C)
    dense = torch.zeros(d2.shape[0], d2.shape[1], xyz_from.shape[1], dtype=w.dtype, device=w.device).scatter(-1, idx, w)
    return dense @ feats
