"""Issue 30 [X3]: the statements of the theory papers that their own rows left untested, gathered as
one claims table (results/x3audit/claims.json).

The experiments live in the paper packages they belong to (binary_denoising.exact: exact enumeration
of the one-stage sampler on a small hypercube); this package only reads their JSON outputs, draws the
figure and computes the verdicts, so it imports no paper package (tests/x3audit).
"""
