"""Merging the outputs of the seed groups of one experiment (the `{seeds}` wildcard of the linear and cell
steps): one group of all seeds at tiny and smoke scale, one group per seed at paper scale. The figures and
claims steps read every group's files in seed order and merge them here, so they see the same per-seed
lists and arrays whichever way the seeds were grouped.
"""

from __future__ import annotations

import numpy as np

from methods.common.io import load_arrays, read_json

# arrays that do not depend on the seed (the grid, the closed form), or that show the group's first seed
# only (brute force: its paths are kept for the figure from the first seed): taken from the first group
SHARED_ARRAYS = ("ts", "cf_mean", "cf_var", "brute_mean", "brute_sd", "brute_paths")


def merge_metrics(docs: list[dict]) -> dict:
    """One metrics dict from the groups' JSON documents (in seed order): per-seed lists (one entry per seed
    of the group) are concatenated; a value every group shares is kept; any other value (a timing measured
    once per job) becomes a list with one entry per group, which needs one seed per group."""
    if len(docs) == 1:
        return docs[0]
    out = {"seeds": [s for d in docs for s in d["seeds"]]}
    for key in docs[0]:
        if key == "seeds":
            continue
        values = [d[key] for d in docs]
        if key != "spec" and all(isinstance(v, list) and len(v) == len(d["seeds"]) for v, d in zip(values, docs)):
            out[key] = [x for v in values for x in v]
        elif all(v == values[0] for v in values):
            out[key] = values[0]
        elif all(len(d["seeds"]) == 1 for d in docs):
            out[key] = values
        else:
            raise ValueError(
                f"neural_bridges: {key!r} differs between seed groups {[d['seeds'] for d in docs]} "
                f"and is not a per-seed list; merge groups of one seed each"
            )
    return out


def read_metrics(paths: list[str]) -> dict:
    """merge_metrics of the groups' JSON files (paths in seed order)."""
    return merge_metrics([read_json(p) for p in paths])


def merge_arrays(groups: list[dict]) -> dict:
    """One array dict from the groups' arrays (in seed order): SHARED_ARRAYS from the first group, every
    other array concatenated along its leading (seed) axis."""
    if len(groups) == 1:
        return groups[0]
    out = {}
    for key, value in groups[0].items():
        out[key] = value if key in SHARED_ARRAYS else np.concatenate([g[key] for g in groups])
    return out


def read_arrays(paths: list[str]) -> dict:
    """merge_arrays of the groups' .npz files (paths in seed order)."""
    return merge_arrays([load_arrays(p) for p in paths])
