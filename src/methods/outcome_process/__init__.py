"""outcome_process: Jia, Rakhlin, Xie, "Do We Need to Verify Step by Step? Rethinking Process
Supervision from a Theoretical Perspective", ICML 2025, arXiv 2502.10581. Theory paper, no code.

Source text. Only the abstract and third-party summaries of the paper were reachable here; the
body (algorithm boxes, the lemma's exact constants, the Q^mu lower-bound instance) was not. What
is implemented is therefore the construction those sources describe, stated below; where a detail
had to be chosen it is marked "(ours)".

What each module implements, and which statement it serves:

* `mdp`        tabular episodic MDPs in layered form: deterministic trees and chains (de Bruijn
               graphs), random stochastic MDPs, the fork counterexample; exact policy evaluation
               (`evaluate_policy`), planning (`plan`), occupancies, sampling with Bernoulli step
               labels, Monte Carlo evaluation (the reference of the exact evaluator in the tests).
* `coverage`   behaviour policies with controlled coverage (eps-mixture of the worst policy and
               uniform); exact state-action coverage C_sa and trajectory coverage C_traj, both
               all-policy and for a given pi (Section 3's coverage assumptions); the exact
               change-of-trajectory-measure ratio kappa(pi, mu) = sup_f E_pi[(sum f)^2] / E_mu[(sum f)^2]
               (`second_moment`, `trajectory_measure_ratio`) -- the quantity the Change of
               Trajectory Measure Lemma bounds by poly(H) C_sa.
* `reduction`  the outcome-to-process transformation (main theorem, Section 3): split the outcome
               data in halves, fit step rewards r_hat by least squares of returns over the tabular
               class [0, 1]^{H x S x A} on the first half (`fit_step_rewards`), relabel the second
               half (`relabel`), run an offline process-supervised algorithm on it. The algorithm
               is tabular pessimistic value iteration with a Hoeffding-style count bonus
               beta (H - h) / sqrt(N) (PEVI / VI-LCB; beta = 0 is FQI) (our choice of algorithm;
               the paper allows any process-supervised one). Also the trajectory-level baseline
               `best_observed_trajectory` (conventional wisdom's outcome learner, ours).
* `prm`        Section 4: advantage A^mu of any policy mu as process reward (optimal by the
               performance-difference lemma; telescoping identity on deterministic MDPs) vs Q^mu
               (sub-optimal; the fork instance is ours), exact and from Monte Carlo rollouts.
* `experiments` rate (sub-optimality vs n), coverage sweeps (horizon: C_traj = A^H grows, C_sa
               fixed; eps: C_sa grows), the sample complexity along the horizon sweep (trajectories
               needed to reach a per-step accuracy vs C_traj), the lemma check, the PRM comparison.
* `preference` the preference-based (Bradley-Terry) version of the reduction: BT maximum-likelihood
               step rewards from trajectory comparisons on the first half, the same planner on the
               second half (the lemma's preference-based application, as third-party summaries state it).
* `jobs` (the experiment steps), `summary` (seed groups merged, the claims' metrics), `figures`, `claims`
  (the claims step), `claims.yaml` (computed verdicts).

Checked: no authors' code exists. Exact evaluation against Monte Carlo, the least-squares fit against
the true rewards under full coverage, the coverage coefficients against hand-computed values, and the
telescoping identity are in tests/outcome_process/.
"""
