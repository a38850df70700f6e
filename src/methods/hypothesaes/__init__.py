"""HypotheSAEs (Movva et al., ICML 2025, arXiv 2502.04382): sparse autoencoders for hypothesis generation."""
