"""Tjandrasuwita et al., "Understanding the Emergence of Multimodal Representation Alignment" (ICML 2025)."""
