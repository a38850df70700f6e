"""WinWinLay (Li, Hu, Liu, Wang, ICML 2025, arXiv 2506.15563): non-local attention energy and adaptive
Langevin update for training-free layout control. See README.md."""
