"""Point-MAE backbone and the ways to adapt it: linear probe, VPT-deep prompt tokens, adapters,
GAPrompt (Point Prompt, Point Shift Prompter, Prompt Propagation) and full fine-tuning.

Module names of the backbone follow Point-MAE (encoder.first_conv, pos_embed, blocks.blocks.i.attn.qkv,
...), so a Point-MAE checkpoint loads with only its prefixes stripped (`load_pointmae_checkpoint`).
Everything an adaptation method adds lives outside `PointTransformer`, so freezing the backbone is
freezing one module.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .geometry import gather, group, idw_interpolate, nerf_encoding

METHODS = ("linear", "vpt", "adapter", "gaprompt", "full")
PROPAGATION_INDEXING = ("official", "patch")
SHAPE_INTO_ADAPTER_LAYERS = 6  # official Block: the adapter input gets + 0.5 x shape feature only where layer_id < 6


def drop_path(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Stochastic depth per sample (dim 0), as timm 0.4.5's DropPath used by Point-MAE / GAPrompt: a sample is
    zeroed with probability p, the others are divided by 1 - p; the identity in eval mode or for p = 0."""
    if p == 0.0 or not training:
        return x
    keep = 1.0 - p
    mask = (keep + torch.rand((x.shape[0],) + (1,) * (x.dim() - 1), dtype=x.dtype, device=x.device)).floor_()
    return x.div(keep) * mask


# ---------------------------------------------------------------- backbone (Point-MAE)
class Encoder(nn.Module):
    """Mini-PointNet token embedding of one neighbourhood (Point-MAE; width 128 there)."""

    def __init__(self, dim: int, width: int):
        super().__init__()
        self.first_conv = nn.Sequential(
            nn.Conv1d(3, width, 1), nn.BatchNorm1d(width), nn.ReLU(inplace=True), nn.Conv1d(width, 2 * width, 1)
        )
        self.second_conv = nn.Sequential(
            nn.Conv1d(4 * width, 4 * width, 1),
            nn.BatchNorm1d(4 * width),
            nn.ReLU(inplace=True),
            nn.Conv1d(4 * width, dim, 1),
        )

    def forward(self, groups: torch.Tensor) -> torch.Tensor:
        B, G, k, _ = groups.shape
        f = self.first_conv(groups.reshape(B * G, k, 3).transpose(1, 2))  # (BG, 2w, k)
        f = torch.cat([f.max(-1, keepdim=True).values.expand(-1, -1, k), f], 1)  # (BG, 4w, k)
        f = self.second_conv(f).max(-1).values  # (BG, dim)
        return f.reshape(B, G, -1)


class Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).reshape(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        y = nn.functional.scaled_dot_product_attention(q, k, v)  # (B, h, T, C/h)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    """Pre-norm ViT block with stochastic depth on both residual branches (Point-MAE)."""

    def __init__(self, dim: int, heads: int, mlp_ratio: float = 4.0, drop_path: float = 0.0):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), Attention(dim, heads)
        self.norm2, self.mlp = nn.LayerNorm(dim), Mlp(dim, int(dim * mlp_ratio))
        self.drop_path = drop_path

    def forward(self, x):
        x = x + drop_path(self.attn(self.norm1(x)), self.drop_path, self.training)
        return x + drop_path(self.mlp(self.norm2(x)), self.drop_path, self.training)


def drop_path_rates(rate: float, depth: int) -> list[float]:
    """Point-MAE's stochastic-depth schedule: linspace(0, rate, depth) over the blocks."""
    return [float(r) for r in torch.linspace(0, rate, depth)]


class TransformerEncoder(nn.Module):
    def __init__(self, dim: int, depth: int, heads: int, drop_path_rate: float = 0.0):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim, heads, drop_path=r) for r in drop_path_rates(drop_path_rate, depth)])


class PointTransformer(nn.Module):
    """Point-MAE encoder: FPS + kNN groups -> mini-PointNet tokens + learned positions -> ViT blocks."""

    def __init__(
        self,
        dim: int,
        depth: int,
        heads: int,
        n_groups: int,
        group_size: int,
        encoder_width: int,
        pos_hidden: int = 128,
        drop_path_rate: float = 0.0,
    ):
        super().__init__()
        self.dim, self.depth, self.n_groups, self.group_size = dim, depth, n_groups, group_size
        self.drop_path_rate = drop_path_rate
        self.encoder = Encoder(dim, encoder_width)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.cls_pos = nn.Parameter(torch.zeros(1, 1, dim))
        init_cls(self)
        self.pos_embed = nn.Sequential(nn.Linear(3, pos_hidden), nn.GELU(), nn.Linear(pos_hidden, dim))
        self.blocks = TransformerEncoder(dim, depth, heads, drop_path_rate)
        self.norm = nn.LayerNorm(dim)

    def tokens(self, pts: torch.Tensor):
        """Group a cloud and embed it: tokens (B, G, D), centres (B, G, 3), neighbourhoods (B, G, k, 3)."""
        neighborhood, center, _, _ = group(pts, self.n_groups, self.group_size)
        return self.encoder(neighborhood), center, neighborhood


def init_cls(backbone: PointTransformer) -> None:
    """cls token and its position ~ N(0, 0.02) truncated at +-2 (timm's trunc_normal_, official init). They are
    not in Point-MAE's pre-training checkpoint, so every fine-tuning run of the official code draws them anew."""
    with torch.no_grad():
        nn.init.trunc_normal_(backbone.cls_token, std=0.02, a=-2.0, b=2.0)
        nn.init.trunc_normal_(backbone.cls_pos, std=0.02, a=-2.0, b=2.0)


def backbone_from_config(cfg: dict) -> PointTransformer:
    return PointTransformer(
        cfg["dim"],
        cfg["depth"],
        cfg["heads"],
        cfg["n_groups"],
        cfg["group_size"],
        cfg["encoder_width"],
        drop_path_rate=cfg.get("drop_path_rate", 0.0),
    )


# ---------------------------------------------------------------- Point-MAE pre-training
class MaskedAutoencoder(nn.Module):
    """Point-MAE: random masking of groups, encoder on visible tokens, light decoder with mask tokens
    predicting the masked neighbourhoods, Chamfer-L2 loss on them."""

    def __init__(
        self, backbone: PointTransformer, decoder_depth: int, heads: int, mask_ratio: float, init: str = "pointmae"
    ):
        super().__init__()
        if init not in ("pointmae", "pytorch"):
            raise ValueError(f"gaprompt.pretrain.init {init!r} is not one of ['pointmae', 'pytorch']")
        d = backbone.dim
        self.backbone, self.mask_ratio = backbone, mask_ratio
        self.mask_token = nn.Parameter(torch.zeros(1, 1, d))
        self.decoder_pos_embed = nn.Sequential(nn.Linear(3, 128), nn.GELU(), nn.Linear(128, d))
        rates = drop_path_rates(backbone.drop_path_rate, decoder_depth)  # Point-MAE: the encoder's rate
        self.decoder = nn.ModuleList([Block(d, heads, drop_path=r) for r in rates])
        self.decoder_norm = nn.LayerNorm(d)
        self.predict = nn.Conv1d(d, 3 * backbone.group_size, 1)
        if init == "pointmae":
            self._init_like_pointmae()

    def _init_like_pointmae(self) -> None:
        """Point-MAE's initialisation: the encoder (MaskTransformer._init_weights) truncated normal sd 0.02 for
        Linear and Conv1d weights, zero biases, LayerNorm 1 / 0; the decoder blocks (TransformerDecoder) Xavier
        uniform Linear weights; the mask token truncated normal sd 0.02."""

        def encoder_init(m):
            if isinstance(m, (nn.Linear, nn.Conv1d)):
                nn.init.trunc_normal_(m.weight, std=0.02, a=-2.0, b=2.0)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

        def decoder_init(m):
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

        bb = self.backbone
        for part in (bb.encoder, bb.pos_embed, bb.blocks, bb.norm):
            part.apply(encoder_init)
        self.decoder.apply(decoder_init)
        self.decoder_norm.apply(decoder_init)
        with torch.no_grad():
            nn.init.trunc_normal_(self.mask_token, std=0.02, a=-2.0, b=2.0)

    def forward(self, pts: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Chamfer-L2 between predicted and true masked neighbourhoods (mean over masked groups)."""
        from .geometry import chamfer_l2

        bb = self.backbone
        tokens, center, neighborhood = bb.tokens(pts)
        B, G, D = tokens.shape
        n_mask = int(self.mask_ratio * G)  # Point-MAE's _mask_center_rand: int(), not round()
        # drawn on the CPU generator (the same masks on every device), then moved to the tokens' device
        order = torch.rand(B, G, generator=generator).argsort(-1).to(tokens.device)
        vis_idx, mask_idx = order[:, n_mask:], order[:, :n_mask]
        x = gather(tokens, vis_idx)
        pos = bb.pos_embed(gather(center, vis_idx))
        for blk in bb.blocks.blocks:
            x = blk(x + pos)
        x = bb.norm(x)
        pos_all = self.decoder_pos_embed(torch.cat([gather(center, vis_idx), gather(center, mask_idx)], 1))
        y = torch.cat([x, self.mask_token.expand(B, n_mask, -1)], 1)
        for blk in self.decoder:
            y = blk(y + pos_all)
        y = self.decoder_norm(y[:, -n_mask:])
        pred = self.predict(y.transpose(1, 2)).transpose(1, 2).reshape(B * n_mask, -1, 3)
        true = torch.gather(neighborhood, 1, mask_idx[..., None, None].expand(-1, -1, bb.group_size, 3))
        return chamfer_l2(pred, true.reshape(B * n_mask, -1, 3))


# ---------------------------------------------------------------- adaptation modules
class QuickGELU(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class Adapter(nn.Module):
    """LN -> D->r -> QuickGELU -> dropout -> r->D, times 0.7 (official Adapter, scale fixed at 0.7)."""

    def __init__(self, dim: int, rank: int, dropout: float = 0.1, scale: float = 0.7):
        super().__init__()
        self.layer_norm = nn.LayerNorm(dim)
        self.ln1, self.act, self.drop, self.ln2 = (
            nn.Linear(dim, rank),
            QuickGELU(),
            nn.Dropout(dropout),
            nn.Linear(rank, dim),
        )
        self.scale = scale
        for m in (self.ln1, self.ln2):
            nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5))
            nn.init.normal_(m.bias, std=1e-6)

    def forward(self, x):
        return self.ln2(self.drop(self.act(self.ln1(self.layer_norm(x))))) * self.scale


class PointPrompt(nn.Module):
    """Learnable points, U(-scale, scale) times `factor`, appended to every cloud (GAPrompt Point Prompt)."""

    def __init__(self, n_points: int, scale: float = 0.01, factor: float = 5.0):
        super().__init__()
        self.points = nn.Parameter(torch.empty(1, n_points, 3).uniform_(-scale, scale))
        self.factor = factor

    def forward(self, pts):
        return torch.cat([pts, self.points.expand(pts.shape[0], -1, -1) * self.factor], 1)


class SetAbstraction(nn.Module):
    """FPS + kNN grouping of per-point features, shared 1x1 conv MLP with BN+ReLU, max over the group."""

    def __init__(self, n_groups: int, group_size: int, in_ch: int, widths: list[int]):
        super().__init__()
        self.n_groups, self.group_size = n_groups, group_size
        layers, c = [], in_ch
        for w in widths:
            layers += [nn.Conv2d(c, w, 1), nn.BatchNorm2d(w), nn.ReLU()]
            c = w
        self.mlp = nn.Sequential(*layers)

    def forward(self, xyz, feats):
        _, center, idx, _ = group(xyz, self.n_groups, self.group_size)
        f = gather(feats, idx).permute(0, 3, 2, 1)  # (B, C, k, G)
        return center, self.mlp(f).max(2).values.transpose(1, 2)  # (B, G, 3), (B, G, C')


class FeaturePropagation(nn.Module):
    """Inverse-distance interpolation (k neighbours, eps 1e-4) + skip features, 1x1 conv MLP with BN+ReLU."""

    def __init__(self, in_ch: int, widths: list[int], k: int):
        super().__init__()
        self.k = k
        layers, c = [], in_ch
        for w in widths:
            layers += [nn.Conv1d(c, w, 1), nn.BatchNorm1d(w), nn.ReLU()]
            c = w
        self.mlp = nn.Sequential(*layers)

    def forward(self, xyz_to, xyz_from, feats_to, feats_from):
        f = torch.cat([feats_to, idw_interpolate(xyz_to, xyz_from, feats_from, self.k, 1e-4)], -1)
        return self.mlp(f.transpose(1, 2)).transpose(1, 2)


class ShiftNet(nn.Module):
    """Point Shift Prompter: NeRF encoding -> two set abstractions -> two feature propagations -> MLP
    giving a per-point factor; y = x + perturbation * MLP(f) * x (multiplicative shift, official code).
    Also returns the flattened second-level features as the global shape feature."""

    def __init__(
        self,
        n_groups: int,
        group_size: int,
        levels: int = 4,
        top_dim: int = 8,
        perturbation: float = 0.8,
        interp_k: int = 32,
    ):
        super().__init__()
        c0 = 3 * (2 * levels + 1)
        self.levels, self.perturbation = levels, perturbation
        self.sa1 = SetAbstraction(n_groups, group_size, c0, [64, 32, 64])
        self.sa2 = SetAbstraction(n_groups // 2, group_size // 2, 64, [64, 32, top_dim])
        self.fp2 = FeaturePropagation(64 + top_dim, [64, 32], interp_k)
        self.fp1 = FeaturePropagation(c0 + 32, [32, 32], interp_k)
        self.mlp_position = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 3))
        for m in self.mlp_position:
            if isinstance(m, nn.Linear):
                nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5))
                nn.init.zeros_(m.bias)
        self.shape_dim = (n_groups // 2) * top_dim

    def forward(self, x):
        f0 = nerf_encoding(x, self.levels)
        c1, f1 = self.sa1(x, f0)
        c2, f2 = self.sa2(c1, f1)
        f1 = self.fp2(c1, c2, f1, f2)
        f = self.fp1(x, c1, f0, f1)
        y = x + self.perturbation * self.mlp_position(f) * x
        return y, f2.reshape(x.shape[0], -1)


class Propagation(nn.Module):
    """Prompt Propagation after attention ('permutation_after_attention'): gather the tokens of each
    second-level group, add their stochastic-depth copy (x + drop_path(x), so 2x in eval), max-pool them
    (BN, GELU, + 0.3 x the centre token) and add 0.3 x their inverse-distance interpolation to the patch tokens.

    `indexing` says which tokens the second-level indices (computed over the G patch tokens) pick:
    'official' reproduces the official Block, which applies them to the flattened (B x (P + G)) array of
    prompt and patch tokens with a batch offset of G: in prompted layers the groups pick prompt tokens and
    tokens of other clouds of the batch; 'patch' gathers the patch tokens of the same cloud (what the
    method describes). Both are the same in layers without prompts."""

    def __init__(self, dim: int, k: int = 64, weight: float = 0.3, drop_path: float = 0.0, indexing: str = "official"):
        super().__init__()
        if indexing not in PROPAGATION_INDEXING:
            raise ValueError(
                f"propagation indexing {indexing!r} is not one of {PROPAGATION_INDEXING} "
                "(gaprompt.adapt.propagation_indexing)"
            )
        self.out_transform = nn.Sequential(nn.BatchNorm1d(dim), nn.GELU())
        self.k, self.weight, self.drop_path, self.indexing = k, weight, drop_path, indexing

    def _pick(self, tokens, n_prompts, geo):
        """Neighbourhood tokens (B, G2, k2, D) and centre tokens (B, G2, D) of the second-level groups."""
        if self.indexing == "patch" or n_prompts == 0:
            patch = tokens[:, n_prompts:]
            return gather(patch, geo["level1_idx"]), gather(patch, geo["level2_idx"])
        B, T, D = tokens.shape
        flat = tokens.reshape(B * T, D)
        base = torch.arange(B, device=tokens.device) * (T - n_prompts)  # offset of G per cloud, rows of P + G
        return flat[geo["level1_idx"] + base[:, None, None]], flat[geo["level2_idx"] + base[:, None]]

    def forward(self, tokens, n_prompts, geo):
        """tokens (B, P + G, D): P prompt tokens then G patch tokens; returns them with the patch tokens updated."""
        neigh, centres = self._pick(tokens, n_prompts, geo)
        B, G2, k2, D = neigh.shape
        neigh = neigh.reshape(B * G2, k2, D)
        neigh = drop_path(neigh, self.drop_path, self.training) + neigh
        pooled = self.out_transform(neigh.reshape(B, G2, k2, D).max(2).values.transpose(1, 2)).transpose(1, 2)
        pooled = pooled + self.weight * centres
        patch = tokens[:, n_prompts:]
        patch = patch + self.weight * idw_interpolate(geo["center"], geo["level2_center"], pooled, self.k, 1e-8)
        return torch.cat([tokens[:, :n_prompts], patch], 1)


def mlp_head(in_dim: int, hidden: int, n_classes: int, dropout: float) -> nn.Sequential:
    """Point-MAE / GAPrompt classification head: two hidden layers with BN, ReLU and dropout."""
    head = nn.Sequential(
        nn.Linear(in_dim, hidden),
        nn.BatchNorm1d(hidden),
        nn.ReLU(inplace=True),
        nn.Dropout(dropout),
        nn.Linear(hidden, hidden),
        nn.BatchNorm1d(hidden),
        nn.ReLU(inplace=True),
        nn.Dropout(dropout),
        nn.Linear(hidden, n_classes),
    )
    return head


# ---------------------------------------------------------------- classifier with one adaptation method
class AdaptedClassifier(nn.Module):
    """The pre-trained backbone plus what `method` adds; `trainable_parameters` says what trains."""

    def __init__(self, backbone: PointTransformer, method: str, n_classes: int, cfg: dict):
        super().__init__()
        if method not in METHODS:
            raise ValueError(f"unknown adaptation method {method!r}; known: {METHODS}")
        self.backbone, self.method = backbone, method
        init_cls(backbone)  # not pre-trained: drawn anew for every run, as the official runners do
        D, depth = backbone.dim, backbone.depth
        self.prompt_depth = min(cfg["prompt_depth"], depth)
        self.n_prompts = cfg["n_prompt_tokens"]
        self.prompt_dropout = nn.Dropout(0.1)
        feat_dim = 2 * D
        if method in ("vpt", "gaprompt"):
            self.prompt_embeddings = nn.Parameter(torch.zeros(self.prompt_depth, self.n_prompts, D))
            if method == "vpt":  # VPT-deep: uniform init as in VPT
                bound = math.sqrt(6.0 / (3 * backbone.group_size + D))
                nn.init.uniform_(self.prompt_embeddings, -bound, bound)
        if method in ("adapter", "gaprompt"):
            self.adapters = nn.ModuleList([Adapter(D, cfg["adapter_rank"]) for _ in range(depth)])
        if method == "gaprompt":
            self.point_prompt = PointPrompt(cfg["n_point_prompts"])
            self.shift_net = ShiftNet(backbone.n_groups, backbone.group_size, perturbation=cfg["perturbation"])
            self.shape_feature_mlp = nn.Sequential(
                nn.Linear(self.shift_net.shape_dim, 16), nn.GELU(), nn.Dropout(0.25), nn.Linear(16, D)
            )
            self.prompt_cor = nn.Parameter(torch.zeros(self.n_prompts, 3))
            nn.init.trunc_normal_(self.prompt_cor, std=0.06, a=-2.0, b=2.0)  # timm trunc_normal_, official
            indexing = cfg.get("propagation_indexing", "official")
            self.propagation = nn.ModuleList(
                [
                    Propagation(D, cfg["propagation_k"], drop_path=blk.drop_path, indexing=indexing)
                    for blk in backbone.blocks.blocks
                ]
            )
            feat_dim = 3 * D
        if method == "linear":
            self.head = nn.Linear(feat_dim, n_classes)
        else:
            dropout = (
                cfg.get("head_dropout_gaprompt", cfg["head_dropout"]) if method == "gaprompt" else cfg["head_dropout"]
            )
            self.head = mlp_head(feat_dim, cfg["head_hidden"], n_classes, dropout)

    # -- what trains
    def trainable_parameters(self) -> dict[str, nn.Parameter]:
        """Everything outside the backbone, plus (official runner: the names cls_token / cls_pos are in its list
        of trainable names) the cls token and its position for the prompt and adapter methods; the linear probe
        trains its linear layer only, full fine-tuning everything."""
        names = {n: p for n, p in self.named_parameters()}
        if self.method == "full":
            return names
        keep = {n: p for n, p in names.items() if not n.startswith("backbone.")}
        if self.method in ("vpt", "adapter", "gaprompt"):
            keep.update({"backbone.cls_token": self.backbone.cls_token, "backbone.cls_pos": self.backbone.cls_pos})
        return keep

    def freeze(self) -> None:
        train = set(self.trainable_parameters())
        for n, p in self.named_parameters():
            p.requires_grad_(n in train)

    # -- forward
    def shift(self, pts):
        """GAPrompt input stage: shifted cloud and shape feature (B, D)."""
        y, g = self.shift_net(pts)
        return y, self.shape_feature_mlp(g)

    def forward(self, pts: torch.Tensor) -> torch.Tensor:
        bb, B = self.backbone, pts.shape[0]
        shape = None
        if self.method == "gaprompt":
            pts, shape = self.shift(pts)
            pts = self.point_prompt(pts)
        tokens, center, _ = bb.tokens(pts)
        geo = self._second_level(center) if self.method == "gaprompt" else None
        x = torch.cat([bb.cls_token.expand(B, -1, -1), tokens], 1)
        pos = torch.cat([bb.cls_pos.expand(B, -1, -1), bb.pos_embed(center)], 1)
        for i, blk in enumerate(bb.blocks.blocks):
            x = self._layer(i, blk, x + pos, shape, geo)
        x = bb.norm(x)
        feats = [x[:, 0], x[:, 1:].max(1).values] + ([shape] if shape is not None else [])
        return self.head(torch.cat(feats, -1))

    def _second_level(self, center):
        """Second-level groups over the token centres (G/2 groups of k/2 tokens), fixed per forward."""
        G2, k2 = max(1, self.backbone.n_groups // 2), max(1, self.backbone.group_size // 2)
        _, c2, idx, c2_idx = group(center, G2, min(k2, center.shape[1]))
        return {"center": center, "level2_center": c2, "level1_idx": idx, "level2_idx": c2_idx}

    def _layer(self, i, blk, x, shape, geo):
        """One block of the official prompt_MAE.Block order: insert prompts, attention + MLP, propagation,
        adapter (its input + 0.5 x shape feature in the prompted layers below 6), remove prompts."""
        B, n_p = x.shape[0], 0
        if self.method in ("vpt", "gaprompt") and i < self.prompt_depth:  # prompts re-inserted each layer
            p = self.prompt_dropout(self.prompt_embeddings[i].expand(B, -1, -1))
            if self.method == "gaprompt":
                p = p + 0.5 * shape[:, None, :] + self.backbone.pos_embed(self.prompt_cor)[None]
            x = torch.cat([x[:, :1], p, x[:, 1:]], 1)
            n_p = self.n_prompts
        x = blk(x)
        if self.method == "gaprompt":
            cls, rest = x[:, :1], self.propagation[i](x[:, 1:], n_p, geo)
            with_shape = i < self.prompt_depth and i < SHAPE_INTO_ADAPTER_LAYERS
            rest = rest + self.adapters[i](rest + 0.5 * shape[:, None, :] if with_shape else rest)
            return torch.cat([cls, rest[:, n_p:]], 1)
        if self.method == "adapter":
            x = x + self.adapters[i](x)
        if n_p:
            x = torch.cat([x[:, :1], x[:, 1 + n_p :]], 1)
        return x


def count_parameters(model: AdaptedClassifier) -> dict:
    """Trainable and total parameter counts (the paper's 'trainable parameters' column and its share)."""
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.trainable_parameters().values())
    return {"trainable": trainable, "total": total, "fraction": trainable / total}


def load_pointmae_checkpoint(backbone: PointTransformer, path: str) -> dict:
    """Load a Point-MAE pre-training checkpoint (torch file with 'base_model', keys under 'module.' and
    'MAE_encoder.') into the backbone; the backbone's own keys must all be present."""
    from methods.common.io import load_torch

    ckpt = load_torch(path)
    if not isinstance(ckpt, dict) or not any(k in ckpt for k in ("base_model", "model")):
        raise ValueError(
            f"{path}: not a Point-MAE checkpoint (no 'base_model' entry); point "
            "gaprompt.backbone.checkpoint at Point-MAE's pretrain.pth"
        )
    state = ckpt.get("base_model", ckpt.get("model"))
    clean = {}
    for k, v in state.items():
        k = k.replace("module.", "")
        for prefix in ("MAE_encoder.", "base_model."):
            if k.startswith(prefix):
                k = k[len(prefix) :]
        clean[k] = v
    own = backbone.state_dict()
    missing = [k for k in own if k not in clean and k not in ("cls_token", "cls_pos")]
    if missing:
        raise ValueError(
            f"{path}: checkpoint lacks backbone weights {missing[:5]} ...; is it a Point-MAE "
            f"checkpoint with the architecture of gaprompt.backbone (dim/depth/encoder_width)?"
        )
    backbone.load_state_dict({k: clean.get(k, own[k]) for k in own})
    return {"loaded": len(own), "ignored": sorted(set(clean) - set(own))[:20]}
