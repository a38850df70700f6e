"""SLiM: One-shot Quantization and Sparsity with Low-rank Approximation for LLM Weight Compression.

Mozaffari, Yazdanbakhsh, Mehri Dehnavi, ICML 2025 (arXiv 2410.09615). Implemented from the paper; the
authors' code (Paramathic/slim) was read to check details, nothing was copied.

Modules (in the order of the method):
- quant.py    SLiM-Quant (Section 3.1: the probabilistic clip search on the |W| histogram, error
              integral = rounding error below alpha + clipping error above, coarse then fine search, one
              symmetric scale per matrix); AbsMax and per-group RTN baselines; 8-bit input quantization.
- prune.py    2:4 masks from magnitude and Wanda (|W| * ||X_j||), SparseGPT (OBS sweep over H = X^T X / n).
- lora.py     SLiM-LoRA (Section 3.3: saliency F(E) = E diag(sqrt(mean x^2)), SVD of F(W) - F(Q(P(W))),
              mapped back with F^-1, base re-compressed as Q(P(W - L R))); Naive-LoRA (SVD of the raw error);
              adapter quantization (per-group RTN); layer output error tr(D H D^T) / tr(W H W^T).
- layer.py    SlimLinear: the compressed layer, backed by the compiled op `methods.kernels.sparse24_int4_linear`.
- recipe.py   a recipe (one rung of the ladder) and its check: an option it does not read is an error.
- compress.py recipes applied to every linear of a transformer.
- peft.py     optional PEFT of the adapters only (Adafactor), Section 3.5.
- ladder.py   the ladder steps: every recipe on the causal LM and on MiniLM, one calibration seed each.
- speed.py    per-layer speed at LLaMA-2-7B shapes, decode tokens/s, memory of the compressed format (the step).
- figures.py  the ladder and speed figures, the ladder's data file; results.py: the claims step.
The package imports nothing on its own: each step's script imports the module of its step.

Checked against the authors' code: SLiM-Quant's error integral is evaluated on the histogram's bin
centres and searched in 10 coarse steps then between the neighbours of the coarse minimum, as theirs;
their rounding term floors to alpha / 2^b levels, ours rounds to the nearest of the 2^(b-1)-1 symmetric
levels the quantizer actually uses (the paper's formula). Their saliency and SVD follow the same
order (error of the compressed weight in the F-space, SVD, F^-1 on the factor, base re-quantized).
Deviations: calibration statistics are captured once on the dense model (the authors propagate the
calibration batch through the already-compressed blocks); the PEFT loss of the sentence encoder is the
cosine distance to the dense embeddings (the paper only fine-tunes causal LMs, on next-token loss);
8-bit inputs are int8 per token (their code uses fp8 for 8 bits).
"""
