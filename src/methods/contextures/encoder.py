"""Learning the contexture with a neural encoder: the low-rank (spectral) objective (Section 3).

For encoders Phi (of x) and Psi (of a) with d outputs, centred under P_X and P_A,

    L(Phi, Psi) = -2 E_{(x, a) ~ P+}[Phi(x)^T Psi(a)] + E_{x ~ P_X} E_{a ~ P_A}[(Phi(x)^T Psi(a))^2],

whose minimisers satisfy Phi Psi^T = the rank-d truncation of P+(a|x) / P_A(a) - 1, i.e. span Phi =
span of the top-d non-constant singular functions mu_1..mu_d of the expectation operator. Full batch
on the n pretraining points (A = X, so both encoders read the same inputs).
"""

from __future__ import annotations

import numpy as np
import torch


def spectral_loss(phi: torch.Tensor, psi: torch.Tensor, p_plus: torch.Tensor) -> torch.Tensor:
    """The objective above for phi (n, d) on the inputs and psi (m, d) on the anchors, P+ (n, m) row-stochastic."""
    n = phi.shape[0]
    p_a = p_plus.mean(0)  # (m,)
    phi_c = phi - phi.mean(0, keepdim=True)
    psi_c = psi - (p_a[:, None] * psi).sum(0, keepdim=True)
    cross = (p_plus * (phi_c @ psi_c.T)).sum() / n  # E_{P+}[phi^T psi]
    cov_psi = psi_c.T @ (p_a[:, None] * psi_c)  # E_{P_A}[psi psi^T]   (d, d)
    second = ((phi_c @ cov_psi) * phi_c).sum() / n  # E_x E_a[(phi^T psi)^2]
    return -2.0 * cross + second


def mlp(d_in: int, width: int, d_out: int, depth: int) -> torch.nn.Sequential:
    layers, d = [], d_in
    for _ in range(depth):
        layers += [torch.nn.Linear(d, width), torch.nn.GELU()]
        d = width
    layers.append(torch.nn.Linear(d, d_out))
    return torch.nn.Sequential(*layers)


def train_encoder(
    x: np.ndarray, p_plus: np.ndarray, d: int, width: int, depth: int, steps: int, lr: float, seed: int, device="cpu"
) -> np.ndarray:
    """Train Phi and Psi (MLPs of the given width) on the spectral objective, on `device`; return Phi(x) (n, d).
    The weights are initialised on the CPU (the seed gives the same initial encoders on every device)."""
    torch.manual_seed(seed)
    xt = torch.as_tensor(x, dtype=torch.float32, device=device)
    pt = torch.as_tensor(p_plus, dtype=torch.float32, device=device)
    phi_net = mlp(x.shape[1], width, d, depth).to(device)
    psi_net = mlp(x.shape[1], width, d, depth).to(device)
    opt = torch.optim.Adam([*phi_net.parameters(), *psi_net.parameters()], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = spectral_loss(phi_net(xt), psi_net(xt), pt)
        loss.backward()
        opt.step()
    with torch.no_grad():
        return phi_net(xt).cpu().numpy().astype(np.float64)
