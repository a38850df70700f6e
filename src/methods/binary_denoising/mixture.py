"""Mixtures of product Bernoulli laws on {-1, 1}^d: sampling, q_alpha and the analytic posterior.

p(x) = sum_k w_k prod_i (1 + x_i mu_ki) / 2 with component means mu_k in (-1, 1)^d. Given the
natural parameter h = alpha * (y_1 + .. + y_m) of m measurements, each component's posterior is
again a product law with means tanh(atanh(mu_ki) + h_i), and the component posterior is
P(k | h) ∝ w_k prod_i (1 + mu_ki tanh h_i) cosh h_i (the cosh cancels across k).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class BernoulliMixture:
    weights: torch.Tensor  # (K,)
    means: torch.Tensor  # (K, d), E[x | component k]

    @property
    def d(self) -> int:
        return self.means.shape[1]

    def sample(self, n: int, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """n draws x (n, d) and their components (n,)."""
        k = torch.multinomial(self.weights, n, replacement=True, generator=generator)
        u = torch.rand((n, self.d), generator=generator)
        x = torch.where(u < (1 + self.means[k]) / 2, 1.0, -1.0)
        return x, k

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """log p(x) for x (B, d)."""
        return torch.logsumexp(self.component_log_lik(x) + self.weights.log()[None], dim=1)

    def component_log_lik(self, x: torch.Tensor) -> torch.Tensor:
        """log prod_i (1 + x_i mu_ki) / 2, shape (B, K)."""
        return torch.log((1 + x[:, None, :] * self.means[None]) / 2).sum(-1)

    def component_posterior(self, h: torch.Tensor) -> torch.Tensor:
        """P(k | h), shape (B, K), for natural parameters h (B, d)."""
        logits = self.weights.log()[None] + torch.log1p(self.means[None] * torch.tanh(h)[:, None, :]).sum(-1)
        return torch.softmax(logits, dim=1)

    def posterior_mean(self, h: torch.Tensor) -> torch.Tensor:
        """Analytic E[x | h] (B, d): the exact denoiser of (T) for this prior."""
        post = self.component_posterior(h)  # (B, K)
        comp = torch.tanh(torch.atanh(self.means)[None] + h[:, None, :])  # (B, K, d)
        return (post[:, :, None] * comp).sum(1)

    def sample_posterior(self, h: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Exact draw x ~ p(x | h): a component from P(k | h), then independent bits."""
        post = self.component_posterior(h)
        k = torch.multinomial(post, 1, generator=generator)[:, 0]
        comp = torch.tanh(torch.atanh(self.means)[k] + h)
        return torch.where(torch.rand(h.shape, generator=generator) < (1 + comp) / 2, 1.0, -1.0).to(h.dtype)

    def log_q(self, y: torch.Tensor, alpha: float) -> torch.Tensor:
        """log q_alpha(y) of (Q) for y in {-1,1}^d: sum over components of product laws."""
        t = np.tanh(alpha)
        per_comp = torch.log((1 + t * y[:, None, :] * self.means[None]) / 2).sum(-1)
        return torch.logsumexp(per_comp + self.weights.log()[None], dim=1)


def random_mixture(d: int, n_components: int, sharpness: float, generator: torch.Generator) -> BernoulliMixture:
    """A random mixture: each component a random prototype in {-1,1}^d, bits agreeing with it w.p.
    (1 + sharpness) / 2; weights from a Dirichlet(2) draw (unequal, so weight recovery means something)."""
    proto = torch.where(torch.rand((n_components, d), generator=generator) < 0.5, 1.0, -1.0)
    gam = torch.distributions.Gamma(torch.full((n_components,), 2.0), torch.ones(n_components))
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
    w = gam.sample()
    return BernoulliMixture(weights=w / w.sum(), means=sharpness * proto)
