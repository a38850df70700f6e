"""Feature sets that go through the same select / interpret / validate path: the SAE (the method) and the
baselines PCA components, raw embedding dimensions and LDA topics (scikit-learn)."""
from __future__ import annotations

import numpy as np

from .sae import SAETrainConfig, sae_features


def pca_features(emb: dict[str, np.ndarray], n_components: int, seed: int) -> dict[str, np.ndarray]:
    from sklearn.decomposition import PCA

    pca = PCA(n_components=min(n_components, emb["train"].shape[1]), random_state=seed).fit(emb["train"])
    return {s: pca.transform(x) for s, x in emb.items()}


def raw_features(emb: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {s: np.asarray(x, dtype=float) for s, x in emb.items()}


def lda_features(texts: list[str], idx: dict[str, np.ndarray], n_topics: int, max_iter: int,
                 seed: int) -> dict[str, np.ndarray]:
    """Document-topic proportions of an LDA fitted on the training texts' word counts."""
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(stop_words="english", min_df=2)
    counts = vec.fit_transform([texts[i] for i in idx["train"]])
    lda = LatentDirichletAllocation(n_components=n_topics, max_iter=max_iter, random_state=seed,
                                    learning_method="batch").fit(counts)
    return {s: lda.transform(vec.transform([texts[i] for i in ix])) for s, ix in idx.items()}


def method_features(method: str, spec: dict, emb: dict[str, np.ndarray], texts: list[str],
                    idx: dict[str, np.ndarray], seed: int) -> tuple[dict[str, np.ndarray], dict]:
    """Features per split of one method (keys of config `methods`: sae, pca, raw, lda)."""
    if method == "sae":
        cfg = SAETrainConfig(**spec["train"])
        feats, infos = sae_features(emb, [tuple(s) for s in spec["sizes"]], cfg, seed)
        return feats, {"saes": infos}
    if method == "pca":
        return pca_features(emb, spec["n_components"], seed), {}
    if method == "raw":
        return raw_features(emb), {}
    if method == "lda":
        return lda_features(texts, idx, spec["n_topics"], spec["max_iter"], seed), {}
    raise ValueError(f"config hypothesaes.methods: unknown method {method!r}; available: sae, pca, raw, lda")
