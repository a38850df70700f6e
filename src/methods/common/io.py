"""One IO helper for the project: atomic writes, JSON, torch checkpoints, seeding.

Every writer goes through `atomic_path`, so a job killed midway never leaves a
half-written file at the final path (Snakemake also deletes incomplete outputs,
but scripts run outside Snakemake too).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        # mkstemp creates the file 0600; the output gets the mode any new file gets under the umask
        os.chmod(tmp, 0o666 & ~_current_umask())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def remove_orphaned_parts(folders) -> list[Path]:
    """Remove the temporary files `atomic_path` leaves when its process is killed (`.<name>.*.part`)
    under `folders`; returns what was removed. Call only when no job of this workflow is running."""
    removed = []
    for folder in folders:
        for part in Path(folder).rglob(".*.part") if Path(folder).is_dir() else []:
            if part.is_file():
                part.unlink(missing_ok=True)
                removed.append(part)
    return removed


def _to_jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None  # strict JSON has no NaN/inf; readers treat null as "not measured"
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    return obj


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write `obj` as indented JSON, atomically; numpy scalars and arrays are converted."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(_to_jsonable(obj), indent=2, allow_nan=False) + "\n")


def read_json(path: str | os.PathLike) -> Any:
    """Read JSON, naming the file when it is missing or malformed."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found (is the rule that writes it in the DAG?)")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e}); delete it and rerun the rule that writes it") from e


def save_torch(path: str | os.PathLike, obj: Any) -> None:
    """torch.save, atomically; write only what `load_torch` reads back (tensors, plain containers)."""
    import torch

    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def load_torch(path: str | os.PathLike, safe_globals: tuple = ()) -> Any:
    """torch.load in weights-only mode: tensors and plain containers, never code.

    Results are shared through DVC, so a checkpoint may come from anyone; a file that needs
    arbitrary unpickling is refused with the file named. `safe_globals` allows extra classes
    (e.g. `NUMPY_SAFE_GLOBALS` for arrays) that torch's weights-only unpickler can rebuild without running code.
    """
    import pickle

    import torch

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found (is the rule that writes it in the DAG?)")
    try:
        with torch.serialization.safe_globals(list(safe_globals)):
            return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        raise ValueError(
            f"{path}: refused to load: it holds Python objects that only a full unpickling could "
            f"rebuild, which can run arbitrary code ({str(e).splitlines()[0]}). Checkpoints here hold "
            "tensors and plain containers only; delete the file and rerun the rule that writes it, or "
            "pull it from a remote you trust."
        ) from None


def numpy_safe_globals() -> tuple:
    """numpy classes that torch's weights-only unpickler may rebuild (arrays and scalars of plain dtypes)."""
    multiarray = (np._core if hasattr(np, "_core") else np.core).multiarray

    dtypes = tuple(type(np.dtype(t)) for t in ("float64", "float32", "int64", "int32", "bool", "uint8"))
    return (multiarray._reconstruct, np.ndarray, np.dtype, multiarray.scalar, *dtypes)


def save_arrays(path: str | os.PathLike, arrays: dict, dtype=None) -> None:
    """Arrays as .npz, atomically (read back with `load_arrays`, no pickles); `dtype` casts every array."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **{k: np.asarray(v, dtype=dtype) for k, v in arrays.items()})


def load_arrays(path: str | os.PathLike) -> dict:
    """The arrays of a `save_arrays` file; an unreadable file is an error naming it and the fix."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: unreadable arrays ({e}); delete it and rerun the rule that writes it") from e


def concat_arrays(paths: list) -> dict:
    """The arrays of several `save_arrays` files (seed groups, in seed order) joined along their first axis,
    key by key: one job over all seeds gives the same arrays."""
    parts: dict[str, list[np.ndarray]] = {}
    for path in paths:
        for k, v in load_arrays(path).items():
            parts.setdefault(k, []).append(v)
    return {k: np.concatenate(v, axis=0) for k, v in parts.items()}


def log(msg: str) -> None:
    """One line to the job's log: scripts point stderr at the rule's `log:` file."""
    print(msg, file=sys.stderr, flush=True)


def set_seed(seed: int) -> None:
    """Seed python, numpy and torch (CPU) so a config gives the same numbers on the same machine."""
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
