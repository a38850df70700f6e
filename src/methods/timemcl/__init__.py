"""TimeMCL: Winner-Takes-All for Multivariate Probabilistic Time Series Forecasting.

Cortés, Rehm, Letzelter, ICML 2025, arXiv 2506.05515; official code Victorletzelter/timeMCL
(pytorch-ts / GluonTS). Read for understanding only; nothing here is copied from it.

What is implemented (module: function -> paper)
- losses.py
  hypothesis_errors: per-hypothesis squared error, mean over horizon and dims (Sec. 3).
  wta_weights / mcl_loss: WTA, relaxed WTA (Rupprecht et al. 2017) and annealed WTA
    (aMCL, Perera et al. 2024) (Sec. 3.2 and the appendix on variants).
  score_loss: BCE of the score heads against the one-hot winner (Sec. 3.2, compound loss).
  annealing_temperature: geometric temperature schedule, then pure WTA.
- model.py
  TimeMCL: LSTM encoder, K hypothesis heads (whole horizon, all dims), K score heads (Sec. 3, Fig. 1).
  DeepARGaussian: DeepAR-style autoregressive Gaussian baseline (Salinas et al. 2020).
  seasonal_naive, mean_scale (DeepAR mean scaling), count_parameters.
- train.py: train_timemcl / train_deepar (Adam, gradient clipping, seeded batches).
- evaluate.py: predict / evaluate_forecaster (distortion, CRPS-sum, CRPS, mixture RMSE, cost, collapsed heads).
- metrics.py: distortion (Sec. 5, the quantization error), exact CRPS / CRPS-sum of a weighted
  discrete forecast, RMSE of the weighted mean.
- toy.py: Brownian motion, Brownian bridge, AR(p) (Sec. 4); analytic optimal 2-quantizer of
  conditioned BM via Karhunen-Loeve; Lloyd/k-means reference quantizers; conditional sampling.
- data.py: CSV loading, log / log-return transforms, time splits, sliding windows, the GluonTS
  repository loader for the full-scale datasets and an offline stand-in writer.
- figures.py: hypothesis fans, toy heads vs optimal quantizer, distortion vs K.

Checked against the authors' code (tsExperiments/models/project_models/tMCL/, toy/, configs/)
- Relaxed WTA: they write (1 - eps K/(K-1)) err_win + eps/(K-1) sum_k err_k with eps = 0.05; the
  sum includes the winner, so the weights are 1 - eps for the winner and eps/(K-1) for the others
  (summing to 1). We use those weights.
- Annealed WTA: weights softmax(-err/T), detached. Their schedule is T = 10 * 0.95**epoch,
  switching to plain WTA once T < 5e-4 (epoch ~194 of 200). We keep the geometric shape and the
  endpoints 10 -> 5e-4, counted in steps over `anneal_fraction` of training, then pure WTA.
  Their annealed loss also averages over K (a 1/K factor); we sum over K like the other variants.
- Per-hypothesis error: they sum squared errors over dims and average over time, in mean-scaled
  units; we average over dims as well (the API contract), so our temperature T corresponds to
  their T / D. Pick t0 with this in mind when D is large.
- Score loss: torch BCE of sigmoid(score) against the one-hot winner, mean over batch and heads,
  weight 0.5 (score_loss_weight). Same here (with logits, for stability).
- Mixture weights at evaluation: sigmoid scores normalised to sum 1 over hypotheses; they then
  resample 1000 hypotheses by these weights and use GluonTS' quantile-loss CRPS-sum. We compute
  the exact CRPS of the weighted discrete forecast, sum over windows and steps divided by
  sum |sum_d y| (the TimeGrad CRPS-sum normalisation), which both of theirs approximate.
- Scaling: DeepAR/TimeGrad mean scaling, scale = mean |x| over the context per dim, the loss
  computed on target / scale and predictions multiplied back. All-zero contexts get scale 1.
- Optimiser: Adam lr 1e-3, gradient clipping 10, 2-layer LSTM with 40 cells (their defaults).

Deliberate differences from the authors' code
- Their heads are per-step linear maps on an autoregressive DeepAR backbone, teacher forced in
  training and unrolled once per head at inference; ours predict the whole horizon from the
  encoder state in one pass (the trajectories the quantization view of Sec. 4 is about).
- They feed lags (1, 24, 168, ...) and Fourier time features to the RNN; we do not, and instead
  offer `ModelConfig.linear_skip` (a linear map of the scaled context added to each head, on by
  default), without which a 2x40 LSTM does not pick up a daily cycle within a few hundred steps.
- The LSTM also receives log(scale) at every step (as DeepAR's static feature), so the network
  knows the level the scaled window came from.
"""
