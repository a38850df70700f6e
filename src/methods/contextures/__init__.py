"""contextures: "Contextures: Representations from Contexts" (Zhai, Yang, Varici, Tsai, Kolter,
Ravikumar; ICML 2025, arXiv 2505.01557). No official code for the metric; definitions read from the
June-2025 arXiv text (see ../shared/papers/contextures.md).

- `spectral.py`: KNN and RBF contexts (A = X), the exact singular decomposition of the expectation
  operator (Section 2), Nystrom extension, the context-quality metric tau (Eq. 4, Section 5.2), the
  ridge probe and err_{d*} (Section 5.3), mean CCA.
- `encoder.py`: the low-rank (spectral) objective (Section 3) and MLP encoders trained on it.
- `pipeline.py`: per dataset, every context on every split seed (tau vs err_{d*}, Pearson); the
  scaling experiment (CCA of learned encoders to the exact top-d functions vs width, Section 4.2).

Tiny scale uses the tabular sets bundled with scikit-learn (breast_cancer is the paper's breast-w in
another version; wine, digits, diabetes are stand-ins for its 28 OpenML sets); full scale the paper's
OpenML sets through `sklearn.datasets.fetch_openml` is not wired: see README.
"""
