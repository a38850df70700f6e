"""CFDG: offline-to-online RL with classifier-free diffusion generation (Huang et al., ICML 2025, arXiv 2508.06806)."""
