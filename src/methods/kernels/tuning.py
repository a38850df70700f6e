"""Micro-tuning of the CPU int4 / 2:4+int4 products: path and tiling measured on the running CPU, cached on disk.

The VNNI products (csrc/cpu/vnni.h) have a few ways to run a batch: register-blocked row tiles of 2 or 4 weight rows,
or k-major chunks (the batch along the vector lanes) with 4 or 8 weight rows per tile. Which is fastest depends on
the CPU (a Xeon with a 480 MiB LLC lost to torch's int4 kernel at batch 8 with the choice measured on an EPYC), so on
the first call of a shape (op, N, K, group size) in a batch bucket (1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, ...),
``plan_for`` times the candidate plans of that bucket on the call's own weights and activations (a
warm-up and the median of 5 calls each, 3 for calls over 20 ms; ~0.01-0.5 s per shape at Llama-7B sizes), checks that every candidate
gives the default's result within 1e-5 of its scale (all use the same int16 activations; they differ only in the
order of float sums), keeps the default unless another is at least 3 % faster, and sets the winner in the op's plan
table (torch.ops.icml25.set_cpu_plan). The weights are the call's, but they are timed hot in the cache, not
streamed from DRAM as in decoding. A plan does not depend on the thread count (it is timed at the count of its first
use), so that a product's result does not either: the paths differ in the order of their float sums.

Cache: one JSON file per CPU model under $ICML25_CACHE_DIR/cpu-tuning/ (default ~/.cache/icml25-repro/cpu-tuning/),
holding its key (CPU model name, the CPU flags that matter, torch version, the extension's build hash) and the
plans; a file whose key differs (another torch, a rebuilt extension) is discarded and re-tuned. A file that does not
parse is ignored with a warning naming it (and overwritten by the next tuning); a cached plan the op refuses (a
tile count it does not have) is dropped with a warning naming the file, and that shape is re-tuned. Writes go to a
temporary file and ``os.replace``; where the cache folder cannot be written (a read-only $HOME on a cluster), the
plans stay in this process's memory, with one warning. The tuning never makes an op call fail.

Under ``ICML25_CPU_AMX=emulate`` (the scalar emulation of AMX, for tests) nothing is timed and nothing is cached:
the emulation's speed says nothing about the CPU's, and its plans would land under the real hardware's key.

Override: ``ICML25_CPU_TUNING=off`` sets no plan (the default choice, no timing); ``ICML25_CPU_TUNING=<file.json>``
takes the plans from that file, ``{"plans": [{"op": "int4", "batch_lo": 5, "batch_hi": 8, "path": "rows", "nr": 4},
...]}`` (optional "n", "k", "group_size"; absent or 0 = any), and times nothing; a file that is missing or
malformed raises a ValueError naming it.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import torch

ENV = "ICML25_CPU_TUNING"
FLAGS = ("avx512f", "avx512bw", "avx512_vnni", "avx512vbmi", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16")
KEEP_DEFAULT = 0.97  # another plan must take < 97 % of the default's time to replace it
OPS = ("int4", "sparse24")

_memo: dict[tuple, tuple[str, int]] = {}  # (op, n, k, gs, lo, hi) -> plan
_applied: dict[tuple, tuple[str, int]] = {}  # (op, n, k, gs, lo, hi) -> plan now set in the C++ table
_mode: str | None = None
_disk: dict | None = None  # the cache file's plans, loaded once per process
_unwritable: list[str] = []  # the cache folder that could not be written (warned about once)


def cpu_info() -> dict:
    """CPU model name and the flags of /proc/cpuinfo that select the kernels' paths (empty where unreadable)."""
    model, flags = "", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and not model:
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return {"model": model or "unknown", "flags": [f for f in FLAGS if f in flags]}


_BUILD: list[str] = []


def cache_key() -> dict:
    """What the plans depend on: CPU model and flags, torch version, the extension's build (hash of its sources)."""
    from .paths import source_hash

    if not _BUILD:
        _BUILD.append(source_hash())
    info = cpu_info()
    return {"cpu": info["model"], "flags": info["flags"], "torch": torch.__version__, "build": _BUILD[0]}


def cache_file() -> Path:
    root = Path(os.environ.get("ICML25_CACHE_DIR") or Path.home() / ".cache" / "icml25-repro")
    slug = re.sub(r"[^A-Za-z0-9]+", "-", cpu_info()["model"]).strip("-").lower() or "cpu"
    return root / "cpu-tuning" / f"{slug}.json"


def bucket(m: int) -> tuple[int, int]:
    """The batch range a plan covers: 1, 2, 3-4, 5-8, 9-16, ... (powers of two)."""
    if m <= 2:
        return m, m
    hi = 1 << (m - 1).bit_length()
    return hi // 2 + 1, hi


def candidates(op: str, m: int, amx: bool = False) -> list[tuple[str, int]]:
    """The plans timed for a batch of m rows; the first is today's default choice. Batch 1 keeps it untimed (its
    tiling was chosen with the weights streamed from DRAM, which a hot-cache timing here would not see), and so do
    batches above 64 (prefill, where timing the row tiles would take seconds per shape). With AMX (the default from
    8 rows there), the VNNI path that is the default elsewhere competes too."""
    if m == 1 or m > 64:
        return [("default", 0)]
    if op == "int4":
        if m < 8:
            return [("default", 0), ("rows", 2)] + ([("kmajor", 8)] if m >= 4 else [])
        vnni = [("kmajor", 0)] if amx else []
        return [("default", 0)] + vnni + [("kmajor", 4 if m <= 16 else 8), ("rows", 4), ("rows", 2)]
    if m == 2:
        return [("default", 0), ("rows", 2)]
    if m < 12:
        return [("default", 0), ("rows", 4), ("kmajor", 0)] + ([("rows", 2)] if amx and m >= 8 else [])
    return [("default", 0), ("rows", 2)] + ([("kmajor", 0)] if amx else [])


def reset() -> None:
    """Forget every plan (in this process and in the op's table); the next calls re-read the mode and cache."""
    global _mode, _disk
    _memo.clear()
    _applied.clear()
    _unwritable.clear()
    _mode, _disk = None, None
    if hasattr(torch.ops, "icml25") and hasattr(torch.ops.icml25, "clear_cpu_plans"):
        torch.ops.icml25.clear_cpu_plans()


def _entry_key(e: dict) -> tuple:
    return (e["op"], e.get("n", 0), e.get("k", 0), e.get("group_size", 0), e["batch_lo"], e["batch_hi"])


def _check_entries(data, where: str) -> list[dict]:
    """The plan entries of a parsed file, each checked; ValueError naming the file and the entry otherwise."""
    if not isinstance(data, dict) or not isinstance(data.get("plans"), list):
        raise ValueError(f'{where}: expected a JSON object {{"plans": [...]}}')
    for i, e in enumerate(data["plans"]):
        ok = isinstance(e, dict) and e.get("op") in OPS and e.get("path") in ("default", "rows", "kmajor", "amx")
        ok = ok and all(isinstance(e.get(f, 0), int) for f in ("n", "k", "group_size", "batch_lo", "batch_hi", "nr"))
        ok = ok and "batch_lo" in e and "batch_hi" in e and 1 <= e["batch_lo"] <= e["batch_hi"]
        if not ok:
            raise ValueError(
                f"{where}: plan {i} is malformed ({e!r}); expected op int4|sparse24, path default|rows|kmajor|amx, "
                "integers 1 <= batch_lo <= batch_hi, nr, and optionally n, k, group_size"
            )
    return data["plans"]


def _set(op, n, k, gs, lo, hi, plan) -> None:
    torch.ops.icml25.set_cpu_plan(op, n, k, gs, lo, hi, plan[0], plan[1])
    _applied[(op, n, k, gs, lo, hi)] = plan


def _load_override(path: str) -> None:
    p = Path(path)
    try:
        entries = _check_entries(json.loads(p.read_text()), f"{ENV}={path}")
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(
            f"{ENV}={path}: cannot read the plan file ({e}); set {ENV} to off, unset it, or give a JSON plan file"
        ) from e
    for i, e in enumerate(entries):
        try:
            torch.ops.icml25.set_cpu_plan(e["op"], *_entry_key(e)[1:], e["path"], e.get("nr", 0))
        except RuntimeError as err:  # the op's check of nr
            raise ValueError(f"{ENV}={path}: plan {i}: {str(err).splitlines()[0]}") from err


def _disk_plans() -> dict:
    """The cache file's plans for this key, {(op, n, k, gs, lo, hi): (path, nr)}; {} when absent, stale or
    unreadable (a warning names an unreadable file)."""
    global _disk
    if _disk is not None:
        return _disk
    _disk = {}
    f = cache_file()
    if not f.exists():
        return _disk
    try:
        data = json.loads(f.read_text())
        entries = _check_entries(data, str(f))
    except (OSError, json.JSONDecodeError, ValueError) as e:
        warnings.warn(f"{f}: unreadable CPU tuning cache ({e}); ignored, re-tuning overwrites it", stacklevel=4)
        return _disk
    if data.get("key") != cache_key():
        return _disk  # another CPU model, torch or build: re-tune
    for e in entries:
        _disk[_entry_key(e)] = (e["path"], e.get("nr", 0))
    return _disk


def _save() -> None:
    """Write this process's plans, merged with those another process may have written since (same key)."""
    f = cache_file()
    f.parent.mkdir(parents=True, exist_ok=True)
    try:
        data = json.loads(f.read_text())
        if data.get("key") == cache_key():
            for e in _check_entries(data, str(f)):
                _disk_plans().setdefault(_entry_key(e), (e["path"], e.get("nr", 0)))
    except (OSError, json.JSONDecodeError, ValueError):
        pass  # absent or unreadable: overwritten below
    plans = [
        {"op": op, "n": n, "k": k, "group_size": gs, "batch_lo": lo, "batch_hi": hi, "path": p, "nr": nr}
        for (op, n, k, gs, lo, hi), (p, nr) in sorted(_disk_plans().items())
    ]
    fd, tmp = tempfile.mkstemp(dir=f.parent, prefix=f.name, suffix=".tmp")
    with os.fdopen(fd, "w") as out:
        json.dump({"key": cache_key(), "plans": plans}, out, indent=1)
    os.replace(tmp, f)


def agrees(y: torch.Tensor, want: torch.Tensor, rel: float = 1e-5) -> bool:
    """Whether a candidate's result equals the default's within `rel` of the output's scale (its largest |y|):
    relative, so that a 1 % error on a small output is not taken for a difference in float summation order."""
    if not want.numel():
        return True
    scale = want.abs().max().item()
    return (y - want).abs().max().item() <= rel * (scale if scale > 0 else 1.0)


def tune(op: str, call, n: int, k: int, gs: int, m: int, reps: int = 5) -> tuple[tuple[str, int], dict]:
    """Time the candidates of batch m on ``call()`` (the op on the real operands), each set for m's bucket in turn;
    returns the chosen plan and {plan: median seconds}. A candidate whose result differs from the default's by more
    than 1e-5 of its scale is dropped with a warning (it would be a kernel bug)."""
    lo, hi = bucket(m)
    cands = candidates(op, m, bool(torch.ops.icml25.cpu_amx_enabled(True)))
    if len(cands) == 1:
        return cands[0], {}
    times, want = {}, None
    for plan in cands:
        _set(op, n, k, gs, lo, hi, plan)
        t0 = time.perf_counter()
        y = call()  # warm-up
        if want is None:
            want = y
            reps = reps if time.perf_counter() - t0 < 0.02 else 3  # long calls (prefill batches): fewer
        elif not agrees(y, want):
            warnings.warn(f"cpu tuning: {op} plan {plan} disagrees with the default at {n}x{k} batch {m}; not used")
            continue
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            call()
            ts.append(time.perf_counter() - t0)
        times[plan] = statistics.median(ts)
    default = cands[0]
    best = min(times, key=times.get)
    if times[best] >= KEEP_DEFAULT * times[default]:
        best = default
    return best, times


def settled() -> bool:
    """Whether the mode of ICML25_CPU_TUNING seen last is still set (its plan file, if any, loaded)."""
    return _mode is not None and _mode == os.environ.get(ENV, "")


def plan_for(op: str, call, n: int, k: int, gs: int, m: int) -> tuple[str, int] | None:
    """Make sure the plan of this call's shape and batch bucket is set (tuned, cached, or from the override file)
    before ``call()`` runs the op; returns the plan, or None when tuning is off or a plan file rules."""
    global _mode
    mode = os.environ.get(ENV, "")
    if mode != _mode:
        reset()
        if mode not in ("", "on", "off"):
            _load_override(mode)  # a bad file raises here, and again at the next call
        _mode = mode
    if mode == "off" or mode not in ("", "on") or os.environ.get("ICML25_CPU_AMX", "") == "emulate":
        return None
    lo, hi = bucket(m)
    key = (op, n, k, gs, lo, hi)
    plan = _memo.get(key)
    if plan is None:
        plan = _disk_plans().get(key)
        if plan is not None and not _applies(key, plan):
            plan = None
        if plan is None:
            plan, _ = tune(op, call, n, k, gs, m)
            _disk_plans()[key] = plan
            _save_or_keep_in_memory()
        _memo[key] = plan
    if _applied.get(key) != plan:
        _set(op, n, k, gs, lo, hi, plan)
    return plan


def _applies(key: tuple, plan: tuple[str, int]) -> bool:
    """Set a cached plan; one the op refuses (e.g. a tile count it does not have) is dropped from the cache with
    a warning naming the file, and False tells the caller to re-tune."""
    try:
        _set(*key, plan)
        return True
    except RuntimeError as err:
        _disk_plans().pop(key, None)
        warnings.warn(
            f"{cache_file()}: cached CPU plan {plan} for {key[0]} {key[1]}x{key[2]} (group size {key[3]}, batches "
            f"{key[4]}-{key[5]}) is invalid ({str(err).splitlines()[0]}); dropped, that shape is re-tuned",
            stacklevel=4,
        )
        return False


def _save_or_keep_in_memory() -> None:
    """Write the cache; where its folder cannot be written, keep the plans in this process with one warning."""
    if _unwritable:
        return
    try:
        _save()
    except OSError as err:
        _unwritable.append(str(cache_file().parent))
        warnings.warn(
            f"{cache_file().parent}: cannot write the CPU tuning cache ({err}); the plans stay in this process's "
            f"memory (set ICML25_CACHE_DIR to a writable folder to keep them)",
            stacklevel=4,
        )


def describe() -> str:
    """One line for logs and benchmark headers: CPU model, the flags that matter, and the tuning mode."""
    info = cpu_info()
    mode = os.environ.get(ENV, "") or "on"
    where = f"cache {cache_file()}" if mode in ("on",) else "no timing"
    return f"{info['model']}; flags {' '.join(info['flags']) or '(none of ' + ', '.join(FLAGS) + ')'}; tuning {mode} ({where})"
