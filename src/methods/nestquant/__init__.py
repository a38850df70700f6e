"""NestQuant: Nested Lattice Quantization for Matrix Products and LLMs (Savkin, Porat, Ordentlich,
Polyanskiy, ICML 2025). Quantizers in `quant` (E8 nested-lattice codec from methods.kernels, rate,
randomized Hadamard rotation, LDLQ, scalar baselines). Not yet wired into the DAG (no rule file).
"""
