"""ALSpec: Attention-Level Speculation (Cai, Vora, Zhang, O'Connor, Jeffrey; ICML 2025).

Official code: mcj-group/ALSpec (a TT-Metal fork for Tenstorrent n300); read for understanding,
nothing copied. The speculative attention kernel is `methods.kernels.spec_decode_attention` (the
compiled op or its PyTorch reference); this package never re-implements it.

What is implemented (module: function -> paper)
- engine.py
  SpecDecoder: prefill + KV-cache decode of any transformers LlamaForCausalLM through its own
    modules, with exact attention, the static sink+window approximation (baseline, Sec. 2/5),
    or ALSpec (Sec. 3): speculative output ô from the first `sink` and last `window` keys, the
    rest of the layer executed on ô before o is known, verification ‖o − ô‖₂ < λ‖o‖₂ per layer
    or per head (`verify`), commit on a hit and rollback (re-execution from o) on a miss.
- tasks.py: synthetic long-context tasks (local Markov continuation, multi-query key-value recall,
    copying from far back) and the small Llama trained on them (the alspec_train step).
- evaluate.py: accuracy / perplexity, hit rate, fraction of attention approximated, greedy
    agreement with exact decoding (teacher forced and free running) for every mode (the
    alspec_evaluate and alspec_evaluate_lm steps, on the job's device).
- workers.py: the two-worker execution (Sec. 4 execution paradigm, on two CPU processes with
    torch.distributed/gloo instead of two NPUs): exact attention on one worker, speculative
    downstream work on the other; measured decode latency vs the hit rate.
- costmodel.py: per-layer critical-path model fed with measured kernel times, extrapolated to
    128K context (decode latency and attention overhead, sequential vs ALSpec).
- timing.py: the alspec_timing step (two workers vs one, kernel times for the cost model).
- figures.py: the figures and the quality figure's data file; results.py: the claims step.
The package imports nothing on its own: each step's script imports the module of its step
(workflow/rules/alspec.smk).

Checked against the paper's text: the verification rule and λ grid {0.05, ..., 0.25}, S first and
S last keys as the speculative attention, hit rate as the fraction of verifications accepted.
"""
