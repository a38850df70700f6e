"""Feature sets that go through the same select / interpret / validate path: the SAE (the method) and the
baselines PCA components, raw embedding dimensions and LDA topics (scikit-learn).

`compute_features` is step hypothesaes_features: every method's features of every seed of a seed group,
with the SAEs trained on the job's device (a GPU at paper scale), written to one npz that the
interpretation step (experiment.py, hours of LLM calls at paper scale, no GPU) reads.
"""

from __future__ import annotations

import time

import numpy as np

from methods.common.io import atomic_path, log, write_json

from .data import SPLITS, feature_key, load_dataset_files, per_seed_files
from .sae import SAETrainConfig, sae_features


def pca_features(emb: dict[str, np.ndarray], n_components: int, seed: int) -> dict[str, np.ndarray]:
    from sklearn.decomposition import PCA

    pca = PCA(n_components=min(n_components, emb["train"].shape[1]), random_state=seed).fit(emb["train"])
    return {s: pca.transform(x) for s, x in emb.items()}


def raw_features(emb: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {s: np.asarray(x, dtype=float) for s, x in emb.items()}


def random_direction_features(emb: dict[str, np.ndarray], n_directions: int, seed: int) -> dict[str, np.ndarray]:
    """A null for the SAE's learned dictionary: projections of the training-centred embeddings on `n_directions`
    random unit directions (isotropic Gaussian, seeded), read as dense features like the baselines."""
    rng = np.random.default_rng([seed, 7919])
    dirs = rng.standard_normal((emb["train"].shape[1], n_directions))
    dirs /= np.linalg.norm(dirs, axis=0, keepdims=True)
    mean = emb["train"].mean(0)
    return {s: (np.asarray(x, dtype=float) - mean) @ dirs for s, x in emb.items()}


def untrained_sae_features(
    emb: dict[str, np.ndarray], sizes: list[tuple[int, int]], seed: int
) -> tuple[dict[str, np.ndarray], list[dict]]:
    """A null for the SAE's training: the same TopK SAEs (sizes, initialisation and seeds of `sae_features`)
    before any training step, their random neurons read through the SAE's sparse path."""
    import torch

    from .sae import TopKSAE

    feats, infos = {s: [] for s in emb}, []
    for i, (m, k) in enumerate(sizes):
        torch.manual_seed(seed * 1000 + i)  # the seed train_sae sets before initialising the SAE
        xt = torch.as_tensor(emb["train"], dtype=torch.float32)
        sae = TopKSAE(xt.shape[1], m, k, b_pre=xt.median(dim=0).values)
        infos.append({"m_total": m, "k": k, "epochs": 0})
        for s, x in emb.items():
            with torch.no_grad():
                feats[s].append(sae.encode(torch.as_tensor(x, dtype=torch.float32)).numpy())
    return {s: np.concatenate(v, axis=1) for s, v in feats.items()}, infos


def lda_features(
    texts: list[str], idx: dict[str, np.ndarray], n_topics: int, max_iter: int, seed: int, n_jobs: int = 1
) -> dict[str, np.ndarray]:
    """Document-topic proportions of an LDA fitted on the training texts' word counts (`n_jobs` processes)."""
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(stop_words="english", min_df=2)
    counts = vec.fit_transform([texts[i] for i in idx["train"]])
    lda = LatentDirichletAllocation(
        n_components=n_topics, max_iter=max_iter, random_state=seed, learning_method="batch", n_jobs=n_jobs
    ).fit(counts)
    return {s: lda.transform(vec.transform([texts[i] for i in ix])) for s, ix in idx.items()}


def method_features(
    method: str,
    spec: dict,
    emb: dict[str, np.ndarray],
    texts: list[str],
    idx: dict[str, np.ndarray],
    seed: int,
    device="cpu",
    threads: int = 1,
) -> tuple[dict[str, np.ndarray], dict]:
    """Features per split of one method (keys of config `methods`: sae, pca, raw, lda); the SAE on `device`,
    LDA on `threads` processes."""
    if method == "sae":
        cfg = SAETrainConfig(**spec["train"])
        feats, infos = sae_features(emb, [tuple(s) for s in spec["sizes"]], cfg, seed, device)
        return feats, {"saes": infos}
    if method == "pca":
        return pca_features(emb, spec["n_components"], seed), {}
    if method == "raw":
        return raw_features(emb), {}
    if method == "lda":
        return lda_features(texts, idx, spec["n_topics"], spec["max_iter"], seed, threads), {}
    if method == "random_dirs":
        return random_direction_features(emb, spec["n_directions"], seed), {}
    if method == "untrained_sae":
        feats, infos = untrained_sae_features(emb, [tuple(s) for s in spec["sizes"]], seed)
        return feats, {"saes": infos}
    raise ValueError(
        f"config hypothesaes.methods: unknown method {method!r}; available: sae, pca, raw, lda, random_dirs, "
        "untrained_sae"
    )


def compute_features(
    data_files: list[tuple[str, str]],
    methods: dict,
    seeds: list[int],
    out_npz: str,
    out_json: str,
    threads: int = 1,
    device="cpu",
) -> None:
    """Step hypothesaes_features: per seed (on its own data file: `data.per_seed_files`) and method, the
    features of every split, in one npz (`feature_key`), and per (seed, method) the method's training info
    and seconds in the JSON."""
    import torch

    torch.set_num_threads(threads)
    arrays, rows = {}, []
    for seed, (npz, meta) in zip(seeds, per_seed_files(data_files, seeds)):
        ds = load_dataset_files(npz, meta)
        for method, spec in methods.items():
            t0 = time.perf_counter()
            feats, info = method_features(method, spec, ds["emb"], ds["texts"], ds["idx"], seed, device, threads)
            seconds = time.perf_counter() - t0
            arrays.update({feature_key(seed, method, s): feats[s] for s in SPLITS})
            rows.append(
                {
                    "seed": seed,
                    "method": method,
                    "n_features": int(feats["train"].shape[1]),
                    "feature_seconds": seconds,
                    "info": info,
                }
            )
            log(f"seed {seed} {method}: {feats['train'].shape[1]} features in {seconds:.1f} s")
    with atomic_path(out_npz) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
    write_json(out_json, {"device": str(device), "features": rows})
