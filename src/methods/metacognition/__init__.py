"""metacognition: "Position: Truly Self-Improving Agents Require Intrinsic Metacognitive Learning"
(Liu & van der Schaar, ICML 2025 position track, PMLR 267:81714-81727, arXiv 2506.05109).

The paper has no experiments, no code and no numbers. What is implemented here is the project's
operationalisation of its framework, labelled illustrative everywhere: a learner that practises task
families with learning strategies (`model.py`), driven either by fixed, human-designed (extrinsic)
loops -- round robin, practise-the-weakest -- or by an agent with the paper's three intrinsic
components (metacognitive knowledge: a self-model of its competence and of the progress each
(family, strategy) yields; planning: choosing practice from it; evaluation: noticing when practice
stops delivering the expected progress and adapting exploration and the self-model's step size), plus
one ablation per component. Every agent's own settings are tuned equally on separate seeds
(`jobs.py`: tuning, then the tuned agents per seed group); the falsification check runs the same protocol in a
stationary environment.
"""
