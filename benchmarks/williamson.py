"""Williamson sequences for NestQuant's Hadamard order 156 = 4 x 39: the search, timed (n = 43, for order 172,
outgrows 24 GB of memory with this search).

Runs `methods.nestquant.hadamard.williamson_search(n)` for each n, checks that the matrix of order 4n they
give is Hadamard, and prints the four first rows that `hadamard.WILLIAMSON` tabulates. The search is
exhaustive over symmetric sequences up to the sign of each, so None means that no Williamson sequences of
that order exist.

    python benchmarks/williamson.py [n ...] [--out benchmarks/results/williamson.json]
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import torch

from methods.common.provenance import cpu_model
from methods.nestquant.hadamard import williamson_hadamard, williamson_search

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int, nargs="*", default=[39])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "williamson.json")
    args = ap.parse_args(argv)
    result = {"machine": cpu_model(), "orders": {}}
    for n in args.n:
        start = time.perf_counter()
        rows = williamson_search(n)
        seconds = time.perf_counter() - start
        entry = {"seconds": round(seconds, 1), "sequences": rows}
        if rows is not None:
            h = williamson_hadamard(*[[1.0 if c == "+" else -1.0 for c in r] for r in rows])
            entry["hadamard"] = bool(torch.equal(h @ h.T, 4 * n * torch.eye(4 * n, dtype=torch.float64)))
        result["orders"][str(n)] = entry
        print(f"n = {n} (order {4 * n}): {seconds:.1f} s, Hadamard {entry.get('hadamard')}")
        for r in rows or ():
            print(f'        "{r}",')
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out} (peak RSS {result['peak_rss_mb']} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
