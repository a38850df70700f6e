"""Step gaprompt_data: the pre-training (source) clouds and the downstream train/test splits."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.io import log, save_arrays, write_json


def data_job(data: dict, out_npz: str, out_json: str, bunny_wheel: str | None = None) -> None:
    """Pre-training (source) clouds and the downstream train/test splits (procedural, or the paper's datasets,
    Sec. 4.1). At the procedural scale the source set also holds `data.bunny.copies` random views of the
    Stanford bunny read from `bunny_wheel` (PyGSP's wheel)."""
    from .shapes import (
        SOURCE_FAMILIES,
        TARGET_FAMILIES,
        bunny_views,
        load_datasets_split,
        load_h5_split,
        make_split,
        read_bunny,
    )

    n = data["n_points"]
    kind = data["kind"]
    if kind == "procedural":
        x_src, _ = make_split(data["seed"], SOURCE_FAMILIES, data["source_per_family"], n, None)
        copies = data.get("bunny", {}).get("copies", 0)
        if copies:
            if bunny_wheel is None:
                raise ValueError("gaprompt.data.bunny.copies > 0 needs the PyGSP wheel (rule gaprompt_download)")
            views = bunny_views(read_bunny(bunny_wheel), copies, n, data["seed"] + 3)
            x_src = np.concatenate([x_src, views])
        x_tr, y_tr = make_split(data["seed"] + 1, TARGET_FAMILIES, data["train_per_class"], n, data["perturb"])
        x_te, y_te = make_split(data["seed"] + 2, TARGET_FAMILIES, data["test_per_class"], n, data["perturb"])
        classes = list(TARGET_FAMILIES)
    elif kind == "h5":
        for key in ("train", "test"):
            if not Path(data["h5"][key]).is_file():
                raise FileNotFoundError(
                    f"gaprompt.data.h5.{key}: {data['h5'][key]} not found; ScanObjectNN is "
                    "distributed after its licence form (hkust-vgd.github.io/scanobjectnn): place "
                    "the h5 files there or point the key at them"
                )
        x_tr, y_tr = load_h5_split(data["h5"]["train"], n)
        x_te, y_te = load_h5_split(data["h5"]["test"], n)
        x_src, classes = x_tr[:0], [str(c) for c in range(int(max(y_tr.max(), y_te.max())) + 1)]
    else:  # datasets
        x_tr, y_tr = load_datasets_split(data["datasets"], "train", n)
        x_te, y_te = load_datasets_split(data["datasets"], "test", n)
        x_src, classes = x_tr[:0], [str(c) for c in range(int(max(y_tr.max(), y_te.max())) + 1)]
    log(f"data ({kind}): source {x_src.shape}, train {x_tr.shape}, test {x_te.shape}, {len(classes)} classes")
    save_arrays(out_npz, {"source": x_src, "x_train": x_tr, "y_train": y_tr, "x_test": x_te, "y_test": y_te})
    n_bunny = data.get("bunny", {}).get("copies", 0) if kind == "procedural" else 0
    write_json(
        out_json,
        {
            "kind": kind,
            "classes": classes,
            "n_source": len(x_src),
            "n_bunny_views": n_bunny,
            "n_train": len(x_tr),
            "n_test": len(x_te),
            "n_points": n,
        },
    )
