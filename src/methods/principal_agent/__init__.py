"""Liu, Maiti, Tajdini, Jamieson, Ratliff, "Learning to Incentivize in Repeated Principal-Agent Problems
with Adversarial Agent Arrivals", ICML 2025, arXiv 2505.23124.

A theory paper without experiments or code: this package implements the model and the algorithms
and checks the regret rates by simulation.

Sources. The paper's full text could not be read here: the searchable copies returned only the
abstract. The algorithmic details below come from the abstract and from third-party summaries of the
paper (papernotes.org, themoonlight.io, an ICML-2025 reproducibility survey), which agree on: Theorem
2.1 (unknown greedy responses: Omega(T) regret already with K = 2, N = 3); the candidate incentives
pi^{i,j} and their merge by h: Pi -> {0,1}^K to at most min(2KN, 2^K) + 1 incentives; the reduction to
an adversarial linear bandit with features z^pi_j = U(pi, j) and rewards y_t = e_{j_t}, solved by
"EXP3 for linear bandits"; for smooth responses an eps-grid of N / eps single-arm incentives with
Tsallis-INF, discretisation error (2L + 1) eps per round and eps = N^{1/3} (2L + 1)^{-2/3} T^{-1/3};
for general incentives vertices of the response polytopes (covered by a (6KT)^K net) and, in the
smooth case, AdversarialZooming. The paper gives no pseudocode blocks in the main text (survey).
Where a detail was not available we used the standard construction and say so:
- learning rates and exploration of EXP3 for linear bandits: Lattimore & Szepesvari (2020), Thm 27.1
  (G-optimal exploration, gamma = d eta, eta = sqrt(log k / (3 d T)));
- Tsallis-INF: Zimmert & Seldin (2021), alpha = 1/2, eta_t = 2 / sqrt(t), importance-weighted losses;
- the tie-break: in the principal's favour, then the lowest arm index (fixed and deterministic);
- the Theorem 2.1 instance (model.lower_bound_instance) and the Lipschitz hard family
  (experiments.needle_response) are our constructions.
Nothing was checked against authors' code (there is none).

What is where:
- model.py        Section 2: types mu_j, rewards v, greedy response b(pi, j) with its tie-break,
                  utilities U(pi, j), the logit smooth response (Lipschitz constant 1 / temperature),
                  single-arm and general incentives, the lower-bound instance (Theorem 2.1).
- candidates.py   Section 3: threshold incentives pi^{i,j}, merge by response pattern h (known
                  greedy algorithm's candidate set); vertices of the response polytopes (multi-arm
                  extension); uniform grids; the tuned eps of the smooth model (Section 4).
- adversaries.py  oblivious (blocked, periodic, random) and adaptive arrival sequences.
- learners.py     EXP3, Exp3-linear (the paper's linear-bandit learner), Tsallis-INF (the paper's
                  learner on the eps-grid), and their unbiased estimators.
- simulate.py     the game loop and exact regret against the best fixed incentive in hindsight.
- lower_bound_known.py  the T-dependence of the known-greedy lower bound (Table 1 row (b)) on a
                  two-point family of our own (rule principal_agent_two_point).
- lower_bound_kn.py  its K and N dependence on a hidden-subset family of our own
                  (rule principal_agent_hidden_subset).
- zooming.py      smooth responses with general incentives (Table 1 row (e)): a zooming learner
                  against an adaptive adversary (rule principal_agent_zooming).
- experiments.py  the simulation experiments; analysis.py the slopes and bounds; jobs.py the
                  simulation steps; summary.py the analysis step (seed groups merged); figures.py;
                  claims.py the claims step.
"""
