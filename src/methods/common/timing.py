"""Wall-clock timing shared by the papers' speed measurements (medians, as the benchmarks report)."""

from __future__ import annotations

import statistics
import time
from typing import Callable


def median_time(fn: Callable[[], object], repeats: int, warmup: int = 1) -> float:
    """Median wall time in seconds of `repeats` calls of `fn`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError(f"median_time: repeats must be >= 1, got {repeats}")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
