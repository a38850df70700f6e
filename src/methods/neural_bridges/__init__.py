"""neural_bridges: Yang, van der Meulen, Sommer, "Neural Guided Diffusion Bridges", ICML 2025,
arXiv 2502.11909. Official code: bookdiver/neuralbridge (JAX/Flax); this is an independent torch
implementation written from the paper note and a reading of that code (nothing copied).

What each module implements:

* `sde`          diffusions dX = f dt + sigma dW with constant sigma (Brownian motion with drift, OU,
                 the 2-d cell-differentiation model), linear auxiliary processes, Euler-Maruyama with
                 reparameterised noise, and the Gaussian closed forms of scalar linear SDEs (transition
                 density, bridge marginals, grad log p) used as references.
* `filter`       the backward information filter of a linear auxiliary process ("uLM" equations of
                 the official bif.py: dL = -L B, dM^dagger = -L a~ L^T, du = -L beta from T to 0, RK4),
                 giving H(t), F(t) (r~ = F - H x) and log p~(v | 0, x0).
* `bridges`      the guided proposal (drift f + a r~) with its log-likelihood weight
                 G = (f - f~)^T r~ - 1/2 tr[(a - a~)(H - r~ r~^T)]; the neural bridge (drift
                 f + a r~ + sigma theta); the variational loss E[sum (1/2|theta|^2 - G) dt] (left point,
                 differentiated through the simulated path); training (per-member gradient clipping,
                 Adam, the official EMA of the updates, best window); independent sampling. All seeds run
                 as one ensemble (`EnsembleMLP`: the official MLPSmall, input layer without activation, then
                 LipSwish or tanh layers, truncated-normal Kaiming init), members independent.
* `baselines`    importance weights and ESS of the guided proposal; pCN on the driving noise
                 (dW' = eta dW + sqrt(1 - eta^2) dZ, accept with exp(ll' - ll)); the score-matching bridge
                 of Heng et al. (denoising score matching of the Euler transitions on forward paths, then
                 the time reversal started at v); brute-force forward simulation with an endpoint box.
* `metrics`      marginal W1 between sample sets (scipy.stats.wasserstein_distance), weighted moments.
* `experiments`  the closed-form (Brownian, OU) and cell-model (normal, rare, multimodal) experiments and
                 their DAG steps (one seed group per job; the job's device).
* `groups`       merging the seed groups' files in seed order; `figures` the two figures and their step;
                 `results` the claims step; `claims.yaml` the claims.

Checked against the official code: the OU/Brownian auxiliary is a driftless Brownian motion; the cell
auxiliary is B = -I, beta = 1; theta and G at the left point of each step; the observation L = I,
Sigma = eps^2 I with small eps; pCN's eta; the optimiser chain (clip 1.0 -> Adam -> ema(0.995) of the
updates). Not checked: the paper's own numbers (no tables in the repository, paper text unreadable here).
"""
