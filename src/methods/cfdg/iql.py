"""Implicit Q-learning (Kostrikov, Nair, Levine 2022), the base algorithm CFDG augments, as an ensemble of E
independent agents trained side by side.

Losses (IQL paper eqs. 5-7; defaults of its reference implementation: tau = 0.7, beta = 3, gamma = 0.99,
target rate 0.005, advantage weights clipped at 100, Gaussian policy with tanh mean and a state-independent
log-std clamped to [-5, 2]):
  L_V   = E[ L2_tau(min_i Q_target_i(s, a) - V(s)) ],   L2_tau(u) = |tau - 1(u < 0)| u^2
  L_Q   = E[ sum_i (r + gamma (1 - d) V(s') - Q_i(s, a))^2 ]
  L_pi  = -E[ min(exp(beta (Q_target(s, a) - V(s))), 100) log pi(a | s) ]
Online fine-tuning keeps the same losses on batches drawn from the offline and online buffers.

Device: the networks live on `device` (the job's; the CPU by default), initialised and sampled from a CPU
generator (draws moved to the device), so a seed's agent does not depend on where it runs; actions come
back as numpy arrays for the (CPU) simulator.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .nets import EnsembleMLP

BATCH_KEYS = ("obs", "act", "rew", "next_obs", "done")


def expectile_loss(u: torch.Tensor, tau: float) -> torch.Tensor:
    """L2_tau(u) = |tau - 1(u < 0)| u^2 elementwise (IQL eq. 5)."""
    weight = torch.where(u < 0, 1.0 - tau, tau)
    return weight * u**2


class IQLEnsemble:
    def __init__(
        self,
        n_members: int,
        obs_dim: int,
        act_dim: int,
        cfg: dict,
        generator: torch.Generator,
        device: torch.device | None = None,
    ):
        h = list(cfg["hidden"])
        self.E, self.act_dim, self.cfg, self.gen = n_members, act_dim, cfg, generator
        self.device = device or torch.device("cpu")
        self.q1 = EnsembleMLP(n_members, obs_dim + act_dim, h, 1, generator).to(self.device)
        self.q2 = EnsembleMLP(n_members, obs_dim + act_dim, h, 1, generator).to(self.device)
        self.q1_t = EnsembleMLP(n_members, obs_dim + act_dim, h, 1, generator).to(self.device)
        self.q2_t = EnsembleMLP(n_members, obs_dim + act_dim, h, 1, generator).to(self.device)
        self.q1_t.load_state_dict(self.q1.state_dict())
        self.q2_t.load_state_dict(self.q2.state_dict())
        self.v = EnsembleMLP(n_members, obs_dim, h, 1, generator).to(self.device)
        self.pi = EnsembleMLP(n_members, obs_dim, h, act_dim, generator).to(self.device)
        self.log_std = torch.nn.Parameter(torch.zeros(n_members, 1, act_dim, device=self.device))
        lr = float(cfg["lr"])
        # One Adam over all trained parameters: the three losses touch disjoint parameters (targets and advantages
        # are detached), so one backward of their sum gives each loss's own gradients, with a third of the overhead.
        self.opt = torch.optim.Adam(
            [*self.q1.parameters(), *self.q2.parameters(), *self.v.parameters(), *self.pi.parameters(), self.log_std],
            lr=lr,
        )

    def modules(self) -> dict:
        return {"q1": self.q1, "q2": self.q2, "q1_t": self.q1_t, "q2_t": self.q2_t, "v": self.v, "pi": self.pi}

    def state(self) -> dict:
        out = {k: m.state_dict() for k, m in self.modules().items()}
        out["log_std"] = self.log_std.detach().clone()
        return out

    def load_members(self, other: "IQLEnsemble", index: np.ndarray) -> None:
        """Member e of self <- member index[e] of other (networks only; optimisers start fresh)."""
        idx = torch.as_tensor(index, dtype=torch.long, device=other.device)
        for name, mod in self.modules().items():
            src = getattr(other, name).state_dict()
            mod.load_state_dict({k: v[idx].clone() for k, v in src.items()})
        with torch.no_grad():
            self.log_std.copy_(other.log_std[idx])

    def _dist_mean_std(self, obs: torch.Tensor):
        mean = torch.tanh(self.pi(obs))
        std = self.log_std.clamp(-5.0, 2.0).exp()
        return mean, std

    def log_prob(self, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        """log pi(a | s) of the diagonal Gaussian policy, (E, B)."""
        mean, std = self._dist_mean_std(obs)
        z = (act - mean) / std
        return (-0.5 * z**2 - std.log() - 0.5 * math.log(2 * math.pi)).sum(-1)

    @torch.no_grad()
    def act(self, obs: np.ndarray, deterministic: bool) -> np.ndarray:
        """Actions for obs (E, n, obs_dim): the mean, or a sample clipped to [-1, 1]."""
        o = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        mean, std = self._dist_mean_std(o)
        if deterministic:
            return mean.cpu().numpy()
        a = mean + std * torch.randn(mean.shape, generator=self.gen).to(self.device)
        return a.clamp(-1.0, 1.0).cpu().numpy()

    def update(self, batch: dict) -> dict:
        """One IQL step on batch tensors of shape (E, B, .) (moved to the agent's device); losses are per-member
        means summed over members."""
        tau, beta, gamma = float(self.cfg["expectile"]), float(self.cfg["beta"]), float(self.cfg["discount"])
        s, a, r, s2, d = (batch[k].to(self.device) for k in BATCH_KEYS)
        sa = torch.cat([s, a], -1)
        with torch.no_grad():
            q_t = torch.minimum(self.q1_t(sa), self.q2_t(sa)).squeeze(-1)
            target = r + gamma * (1.0 - d) * self.v(s2).squeeze(-1)
        v = self.v(s).squeeze(-1)
        adv = q_t - v
        loss_v = expectile_loss(adv, tau).mean(1).sum()

        loss_q = (
            ((self.q1(sa).squeeze(-1) - target) ** 2).mean(1) + ((self.q2(sa).squeeze(-1) - target) ** 2).mean(1)
        ).sum()

        weight = torch.exp(beta * adv.detach()).clamp(max=100.0)
        loss_pi = -(weight * self.log_prob(s, a)).mean(1).sum()
        self.opt.zero_grad(set_to_none=True)
        (loss_v + loss_q + loss_pi).backward()
        self.opt.step()

        rate = float(self.cfg["target_rate"])
        with torch.no_grad():
            for net, tgt in ((self.q1, self.q1_t), (self.q2, self.q2_t)):
                for p, pt in zip(net.parameters(), tgt.parameters()):
                    pt.lerp_(p, rate)
        return {"v": loss_v.item() / self.E, "q": loss_q.item() / self.E, "pi": loss_pi.item() / self.E}
