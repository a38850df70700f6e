"""TimeMCL: Winner-Takes-All for Multivariate Probabilistic Time Series Forecasting.

Cortés, Rehm, Letzelter, ICML 2025, arXiv 2506.05515; official code Victorletzelter/timeMCL
(pytorch-ts / GluonTS). Read for understanding only; nothing here is copied from it.

What is implemented (module: function -> paper)
- losses.py
  hypothesis_errors: per-hypothesis cost, squared error summed over dims and averaged over time (Sec. 3).
  wta_weights / mcl_loss: WTA, relaxed WTA (Rupprecht et al. 2017) and annealed WTA
    (aMCL, Perera et al. 2024) (Sec. 3.2 and the appendix on variants).
  score_loss: BCE of the score heads against the one-hot winner (Sec. 3.2, compound loss).
  annealing_temperature: geometric temperature schedule, then pure WTA.
- model.py
  TimeMCL (real data; Sec. 3, Fig. 1): autoregressive DeepAR/TimeGrad LSTM backbone (LaggedLSTM:
    inputs x_{t-l}/scale for l in `lags`, plus log scale), K per-step linear hypothesis heads
    (hidden -> D) and K per-step score heads (hidden -> 1, sigmoid), a hypothesis' score being
    the time average of its per-step sigmoid. Trained teacher forced over the unrolled context
    and horizon (`training_forward`); at inference each head is rolled out on its own predictions
    (`forward`, the K rollouts batched as B*K rows).
  TimeMCLOneShot (synthetic processes; Sec. 4): LSTM encoder, K one-shot heads emitting whole
    future paths, K score heads; what the toy quantization figure is about.
  DeepARGaussian: the same backbone with a diagonal Gaussian per step (Salinas et al. 2020).
  seasonal_naive, mean_scale (DeepAR mean scaling), count_parameters.
- train.py: train_timemcl (either TimeMCL class) / train_deepar (Adam, gradient clipping, seeded
  batches) on the caller's device; checkpoints for every model class; train_model, the training
  step (one model per seed of a seed group, one group checkpoint).
- evaluate.py: predict / evaluate_forecaster (distortion, CRPS-sum, CRPS, mixture RMSE, cost, collapsed
  heads); evaluate_models, the evaluation step of a seed group.
- metrics.py: distortion (Sec. 5, the quantization error), exact CRPS / CRPS-sum of a weighted
  discrete forecast, RMSE of the weighted mean.
- toy.py: Brownian motion, Brownian bridge, AR(p) (Sec. 4); analytic optimal 2-quantizer of
  conditioned BM via Karhunen-Loeve; Lloyd/k-means reference quantizers; conditional sampling.
- official_toy.py: the authors' Brownian toy (network, training, evaluation).
- experiments.py: the synthetic steps (toy processes per seed group; the authors' toy).
- data.py: CSV loading, log / log-return transforms, time splits, sliding windows, the GluonTS
  repository loader for the full-scale datasets and an offline stand-in writer; the download and
  data-preparation steps and load_windows.
- figures.py: hypothesis fans, toy heads vs optimal quantizer, distortion vs K, the authors' toy; the
  steps that draw them (the only modules that import the plotting code).
- results.py: the claims step (per-seed metrics from every seed group, verdicts).

Windows. `ModelConfig.context_length` is C, the context steps the LSTM is unrolled over (and the
mean scale is computed over); every model reads a context tensor of C + max(lags) steps, the
first max(lags) of them only as lag inputs (GluonTS' history_length = context_length + max(lags)).
data.load_windows builds windows that way from the dataset spec's `lags` (default [1]).

Checked against the authors' code (tsExperiments/models/project_models/tMCL/, toy/, configs/)
- Backbone and heads: their timeMCLNetwork unrolls a 2-layer, 40-cell LSTM (dropout 0.1) on the
  lagged, mean-scaled targets over context + prediction steps (teacher forcing, begin state None),
  and their tMCL module applies K Linear heads and K Linear+Sigmoid score heads at every step,
  the score averaged over time. Same here (`LaggedLSTM`, `TimeMCL`, ModelConfig.dropout = 0.1).
- Inference: for each hypothesis they unroll the decoder for prediction_length steps on that
  head's own outputs, and take its per-step sigmoid score; their forecast generator averages it
  over the prediction steps and normalises over hypotheses. Same here: score_logits is the logit
  of the mean over the rollout steps of sigmoid(score head), so evaluate.score_weights
  (sigmoid, then normalise) gives their weights. Note that training fits the average over
  context + horizon steps and inference averages over the horizon only; the per-step scores are
  not pinned one by one by the BCE of their average, so the inference weights are not
  calibrated probabilities of the Voronoi cells (tests/timemcl/test_model.py shows a case).
- Per-hypothesis error: sum over dims of the squared error, mean over the context + prediction
  steps, in mean-scaled units (the mean-scaler branch of compute_loss_min_ext_sum). Same here, so
  the temperature T has their meaning.
- Relaxed WTA: they write (1 - eps K/(K-1)) err_win + eps/(K-1) sum_k err_k; the sum includes the
  winner, so the weights are 1 - eps for the winner and eps/(K-1) for the others (summing to 1).
  We use those weights (eps = 0.1 on real data in their train.sh, 0.05 in their toy code).
- Annealed WTA: weights softmax(-err/T), detached. Their schedule is T = 10 * 0.95**epoch,
  switching to plain WTA once T < 5e-4, i.e. from epoch 194 of 200. We keep the geometric shape
  and the endpoints 10 -> 5e-4, counted in optimiser steps over anneal_fraction = 0.97 of
  training (194/200), then pure WTA. Their annealed loss also averages over K (a 1/K factor); we
  sum over K like the other variants.
- Score loss: torch BCE of the time-averaged sigmoid score against the one-hot winner, mean over
  batch and heads, weight 0.5 (score_loss_weight). Same here (computed from logits in log space).
- Mixture weights at evaluation: they then resample 1000 hypotheses by these weights and use
  GluonTS' quantile-loss CRPS-sum. We compute the exact CRPS of the weighted discrete forecast,
  sum over windows and steps divided by sum |sum_d y| (the TimeGrad CRPS-sum normalisation),
  which both of theirs approximate.
- Scaling: mean scaling, scale = mean |x| over the C unrolled context steps per dim, the loss
  computed on target / scale and predictions multiplied back. All-zero contexts get scale 1.
- Optimiser: Adam lr 1e-3, gradient clipping 10 (their defaults; their weight decay 1e-8 is left out).

Deliberate differences from the authors' code
- Rollouts are reset per hypothesis: every head starts from the same post-context LSTM state. In
  their sampling loop the LSTM state returned by rollout k is the begin state of rollout k+1, so
  hypothesis k+1 depends on the path of hypothesis k; this looks unintended and we do not copy it.
- No Fourier time features (their inputs also carry hour/day-of-week features) and no per-dim
  embedding (their embedding_dimension is 0 in the timeMCL config anyway). Lags are set per
  dataset in the config (theirs come from the frequency: 1, 24, 168 hourly; 1, 7, 14 daily).
- The LSTM also receives log(scale) at every step (DeepAR's static feature); theirs does not.
- Their LSTM output goes through a shared Linear(40 -> 100) (`conditioning_length`) before the
  K Linear(100 -> D) heads; the composition is a linear map hidden -> D per head, which is what
  ours are (same function class, fewer parameters).
- The DeepAR baseline is a diagonal Gaussian DeepAR on the same backbone, not their DeepVAR with
  a rank-1 LowRankMultivariateNormal; it is trained by NLL over the same unrolled steps.
- The toy model is an LSTM over the observed path with one-shot heads; theirs is an MLP
  (1 -> 200 -> 200 -> 200) on the conditioning values with K = 10 one-shot heads, trained with a
  sum (not a mean) over time of the squared error.
- Training length is counted in optimiser steps (config), not 200 epochs x 30 batches of 200;
  no ReduceLROnPlateau and no best-on-validation checkpoint selection.
"""
