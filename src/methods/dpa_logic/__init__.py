"""dpa_logic: Richardson, Srikumar, Sabharwal, "Understanding the Logic of Direct Preference Alignment
through Logic", ICML 2025, arXiv 2412.17696. Official code: allenai/declarative_preference_alignment.

Source text. Only the abstract, the opening of the introduction and third-party summaries were
readable here; the official repository and the paper's per-loss tables were not. What is implemented
follows the paper's definitions as far as those sources state them (preference structure = core
formula P, conditioning constraint P_C, additional constraint P_A; semantic loss by weighted model
counting; 4^(2^n) definable losses ordered by entailment). Everything else is marked "(ours)":

* `logic`       worlds, formulas, WMC by exhaustive enumeration (log space), the compile map
                (P, P_C, P_A) -> (N, D) with N = (P & P_C) | P_A, D = (~P & P_C) | P_A and the loss
                -log WMC(N) / (WMC(N) + WMC(D)) (the P_A rule is ours: it is what makes CPO's
                overlapping counts expressible and the compile map onto 4^(2^n) pairs); the
                reference-model variants "ratio" (rho_theta - rho_ref) and "odds" (propositions
                weighted by sigma(log pi_theta - log pi_ref)); the lattice, its entailment order (ours:
                N1 <= N2 and D2 <= D1) and the count of distinct loss functions. pysdd was not needed:
                n <= 3 propositions enumerate in microseconds.
* `losses`      closed forms of DPO, CPO, ORPO, SimPO, IPO, SLiC-HF, unlikelihood, SFT from the original
                papers; their decompiled structures (ours) with the weight maps (sequence log-prob times
                beta, or length-normalised); SimPO's margin gamma as a third proposition of
                probability exp(-gamma); IPO and SLiC have no exact structure (reasons in LOSSES);
                three derived losses, each one world away from a known loss in the lattice.
* `experiments` the decompilation check and the lattice report (sizes for n = 1..3, partial order,
                monotonicity of the loss along the order).
* `tabular`     a log-linear policy over prompts x responses trained on Bradley-Terry pairs from a
                hidden reward (ours), measuring the winner-displacement effect.
* `lm`          full scale: a Hugging Face causal LM tuned with the compiled losses on a preference
                dataset (UltraFeedback in config/full.yaml), tested offline on a tiny random Llama.

Each step's function lives in the module of its work (a script imports only that module): the
semantics step `experiments.semantics_experiment`, the tabular step `tabular.tabular_experiment`, the
full-scale fetch and LM steps `lm.fetch_lm` / `lm.lm_experiment`, the figures `figures.make_figures`,
the claims `results.write_paper_claims`.
"""
