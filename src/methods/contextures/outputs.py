"""The step outputs the figures and claims steps read back: one file per seed group (all split seeds at tiny
scale, one seed each at paper scale), merged here in seed order."""

from __future__ import annotations

from methods.common.io import read_json


def merge_datasets(paths: list[str]) -> list[dict]:
    """Per dataset (in the order the files name them first), its runs over every seed group, in seed order."""
    docs: dict[str, dict] = {}
    for p in paths:
        doc = read_json(p)
        if doc["dataset"] in docs:
            docs[doc["dataset"]]["runs"] += doc["runs"]
        else:
            docs[doc["dataset"]] = doc
    for doc in docs.values():
        doc["runs"].sort(key=lambda r: r["seed"])
        seeds = [r["seed"] for r in doc["runs"]]
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"contextures {doc['dataset']}: seed(s) {seeds} repeated across the seed groups' files")
    return list(docs.values())


def merge_scaling(paths: list[str]) -> dict:
    """The scaling step's CCA by width over every seed group: {seed: [one value per width]}, in seed order
    (`cca_pca`, where the step wrote it: {seed: the PCA encoder's CCA})."""
    docs = [read_json(p) for p in paths]
    keys = [k for k in ("cca", "cca_untrained", "cca_pca") if k in docs[0]]
    out = {k: v for k, v in docs[0].items() if k not in keys}
    for key in keys:
        merged = {s: v for doc in docs for s, v in doc[key].items()}
        out[key] = {s: merged[s] for s in sorted(merged, key=int)}
    return out
