"""NestQuant: Nested Lattice Quantization for Matrix Products and LLMs (Savkin, Porat, Ordentlich,
Polyanskiy, ICML 2025).

Modules: quant (E8 nested-lattice codec from methods.kernels, rate, randomized Hadamard rotation, LDLQ,
scalar baselines), hadamard (Hadamard matrices of widths that are not powers of two), model (simulated
quantization of linears and the KV cache), synthetic (the synthetic matrices step), evaluate (the
causal-LM and MiniLM steps, on the job's device), figures (the figures and the main figure's data file),
results (the claims step). The package imports nothing on its own: each step's script imports the module
of its step (workflow/rules/nestquant.smk).
"""
