"""Plans of the CPU int4 / 2:4 products (csrc/cpu/plan.h) and their tuner (methods.kernels.tuning).

Every plan a tuner may pick is checked against the PyTorch reference on awkward shapes (odd N, a partial last
group, batches across the chunk and tile boundaries); then the tuner's cache: its key, invalidation when the key
changes, an unreadable file, the ICML25_CPU_TUNING override (off, a plan file, a malformed plan file), and the
fallback when the VNNI path is switched off. No timing is asserted."""

import json
import warnings

import pytest
import torch

from methods.kernels import reference as R
from methods.kernels import tuning

from .test_cpu_dispatch import close, quantized_act, vnni_taken
from .test_reference import random_24

OPS = lambda: torch.ops.icml25  # noqa: E731

PLANS = {
    "int4": [("default", 0), ("rows", 2), ("rows", 4), ("kmajor", 0), ("kmajor", 4), ("kmajor", 8)],
    "sparse24": [("default", 0), ("rows", 2), ("rows", 4), ("kmajor", 0)],
}
SHAPES = [(13, 300, 64), (33, 640, 128), (7, 1000, 256)]
BATCHES = [1, 2, 5, 8, 9, 17, 40]


@pytest.fixture
def fresh(ext, tmp_path, monkeypatch):
    """An empty cache folder, tuning on, no plan set; everything cleared again afterwards."""
    monkeypatch.setenv("ICML25_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ICML25_CPU_TUNING", raising=False)
    monkeypatch.delenv("ICML25_CPU_VNNI", raising=False)
    tuning.reset()
    yield tmp_path
    tuning.reset()


def need_vnni(sparse24):
    if not vnni_taken(sparse24, 128, 640):
        pytest.skip("no AVX-512 VNNI (+ VBMI for 2:4) on this CPU: the plans only steer the VNNI paths")


def int4_weight(ext, n, k, gs, seed):
    g = torch.Generator().manual_seed(seed)
    return ext.quantize_int4_rtn(torch.randn(n, k, generator=g), gs, False)


def s24_weight(ext, n, k, gs, seed):
    q = random_24(n, k, seed=seed)
    return ext.pack_sparse24_int4(
        q, torch.rand(n, -(-k // gs), generator=torch.Generator().manual_seed(seed)) + 0.1, gs
    )


@pytest.mark.parametrize("m", BATCHES)
@pytest.mark.parametrize("n,k,gs", SHAPES)
@pytest.mark.parametrize("op,plan", [(op, p) for op, ps in PLANS.items() for p in ps])
def test_every_plan_matches_reference(fresh, ext, op, plan, n, k, gs, m):
    need_vnni(op == "sparse24")
    OPS().set_cpu_plan(op, n, k, gs, 1, 64, plan[0], plan[1])
    assert tuple(OPS().cpu_plan(op, n, k, gs, m)) == plan
    x = torch.randn(m, k, generator=torch.Generator().manual_seed(m + k))
    xq, _ = quantized_act(x, k, gs)
    if op == "int4":
        w = int4_weight(ext, n, k, gs, m)
        got = OPS().int4_linear(x, w.packed, w.scales, w.zeros, gs, k)
        close(got, R.int4_linear(xq, w.packed, w.scales, w.zeros, gs, k), rel=1e-5)
        close(got, R.int4_linear(x, w.packed, w.scales, w.zeros, gs, k))
    else:
        w = s24_weight(ext, n, k, gs, m)
        got = OPS().sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k)
        close(got, R.sparse24_int4_linear(xq, w.values, w.meta, w.scales, gs, k), rel=1e-5)
        close(got, R.sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k))


def test_plan_table_matching_and_errors(fresh):
    ops = OPS()
    ops.set_cpu_plan("int4", 0, 0, 0, 5, 8, "rows", 4)  # any shape
    ops.set_cpu_plan("int4", 64, 256, 128, 5, 8, "kmajor", 8)  # this shape: set later, wins
    assert tuple(ops.cpu_plan("int4", 64, 256, 128, 8)) == ("kmajor", 8)
    assert tuple(ops.cpu_plan("int4", 65, 256, 128, 8)) == ("rows", 4)
    assert tuple(ops.cpu_plan("int4", 64, 256, 128, 9)) == ("default", 0)  # outside the batch range
    assert tuple(ops.cpu_plan("sparse24", 64, 256, 128, 8)) == ("default", 0)
    ops.clear_cpu_plans()
    assert tuple(ops.cpu_plan("int4", 64, 256, 128, 8)) == ("default", 0)
    for args, word in [
        (("int8", 0, 0, 0, 1, 2, "rows", 0), "op"),
        (("int4", 0, 0, 0, 1, 2, "fast", 0), "path"),
        (("int4", 0, 0, 0, 3, 2, "rows", 0), "batch range"),
        (("int4", 0, 0, 0, 1, 2, "kmajor", 2), "nr"),
        (("sparse24", 0, 0, 0, 1, 2, "kmajor", 4), "nr"),
        (("int4", -1, 0, 0, 1, 2, "rows", 0), "n, k and group_size"),
    ]:
        with pytest.raises(RuntimeError, match=word):
            ops.set_cpu_plan(*args)


def test_bucket_and_candidates():
    assert [tuning.bucket(m) for m in (1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33)] == [
        (1, 1), (2, 2), (3, 4), (3, 4), (5, 8), (5, 8), (9, 16), (9, 16), (17, 32), (17, 32), (33, 64)
    ]  # fmt: skip
    for op in tuning.OPS:
        for m in (1, 2, 3, 8, 12, 32, 40):
            for amx in (False, True):
                c = tuning.candidates(op, m, amx)
                assert c[0] == ("default", 0) and len(set(c)) == len(c)
                assert all(p in PLANS[op] for p in c)
    # with AMX the default from 8 rows is AMX: the VNNI default competes as an explicit plan
    assert ("kmajor", 0) in tuning.candidates("int4", 8, True) and ("kmajor", 0) not in tuning.candidates("int4", 8)
    assert ("rows", 2) in tuning.candidates("sparse24", 9, True) and ("rows", 2) not in tuning.candidates("sparse24", 9)
    assert tuning.candidates("int4", 1) == [("default", 0)]  # batch 1: today's DRAM-measured choice, untimed
    assert tuning.candidates("sparse24", 65) == [("default", 0)]  # prefill batches: untimed


def tuned_call(ext, m=8, n=40, k=512, gs=128, seed=0):
    w = int4_weight(ext, n, k, gs, seed)
    x = torch.randn(m, k, generator=torch.Generator().manual_seed(seed))
    return w, x, ext.int4_linear(x, w)


def test_first_use_tunes_caches_and_reuses(fresh, ext, monkeypatch):
    need_vnni(False)
    w, x, y = tuned_call(ext)
    f = tuning.cache_file()
    assert f.parent == fresh / "cpu-tuning" and f.exists()
    data = json.loads(f.read_text())
    assert data["key"] == tuning.cache_key()
    assert set(data["key"]) == {"cpu", "flags", "torch", "build"} and data["key"]["torch"] == torch.__version__
    (e,) = data["plans"]
    assert (e["op"], e["n"], e["k"], e["group_size"], e["batch_lo"], e["batch_hi"]) == ("int4", 40, 512, 128, 5, 8)
    assert (e["path"], e["nr"]) in PLANS["int4"]
    assert tuple(OPS().cpu_plan("int4", 40, 512, 128, 7)) == (e["path"], e["nr"])
    xq, _ = quantized_act(x, 512, 128)
    close(y, R.int4_linear(xq, w.packed, w.scales, w.zeros, 128, 512), rel=1e-5)
    # another process (reset): the plan comes from the file, nothing is timed
    tuning.reset()
    monkeypatch.setattr(tuning, "tune", lambda *a, **k: pytest.fail("re-tuned although the cache holds the plan"))
    _, _, y2 = tuned_call(ext)
    assert tuple(OPS().cpu_plan("int4", 40, 512, 128, 6)) == (e["path"], e["nr"])
    close(y2, y, rel=1e-5)


def test_changed_key_invalidates(fresh, ext, monkeypatch):
    need_vnni(False)
    tuned_call(ext)
    f = tuning.cache_file()
    data = json.loads(f.read_text())
    data["plans"][0]["path"], data["plans"][0]["nr"] = "rows", 2
    f.write_text(json.dumps(data))
    tuning.reset()
    key = dict(tuning.cache_key(), torch="0.0-other")
    monkeypatch.setattr(tuning, "cache_key", lambda: key)
    calls = []
    real = tuning.tune
    monkeypatch.setattr(tuning, "tune", lambda *a, **k: calls.append(a[1:]) or real(*a, **k))
    tuned_call(ext)
    assert len(calls) == 1  # the stale file's plan was not used
    assert json.loads(f.read_text())["key"] == key


def test_corrupt_cache_warns_and_retunes(fresh, ext):
    need_vnni(False)
    f = tuning.cache_file()
    f.parent.mkdir(parents=True)
    f.write_text("{not json")
    with pytest.warns(UserWarning, match=str(f)):
        tuned_call(ext)
    assert json.loads(f.read_text())["key"] == tuning.cache_key()  # overwritten by the new tuning


def test_override_off_and_plan_file(fresh, ext, monkeypatch):
    need_vnni(False)
    monkeypatch.setattr(tuning, "tune", lambda *a, **k: pytest.fail("timed although tuning is overridden"))
    monkeypatch.setenv("ICML25_CPU_TUNING", "off")
    w, x, y = tuned_call(ext)
    assert tuple(OPS().cpu_plan("int4", 40, 512, 128, 8)) == ("default", 0)
    assert not tuning.cache_file().exists()
    plan = fresh / "plan.json"
    plan.write_text(json.dumps({"plans": [{"op": "int4", "batch_lo": 5, "batch_hi": 8, "path": "rows", "nr": 2}]}))
    monkeypatch.setenv("ICML25_CPU_TUNING", str(plan))
    _, _, y2 = tuned_call(ext)
    assert tuple(OPS().cpu_plan("int4", 40, 512, 128, 8)) == ("rows", 2)
    assert tuple(OPS().cpu_plan("int4", 40, 512, 128, 9)) == ("default", 0)
    close(y2, y, rel=1e-5)
    monkeypatch.setenv("ICML25_CPU_TUNING", "off")  # switching back clears the file's plans
    tuned_call(ext)
    assert tuple(OPS().cpu_plan("int4", 40, 512, 128, 8)) == ("default", 0)


@pytest.mark.parametrize(
    "text", ["[1, 2]", "{oops", '{"plans": [{"op": "int4", "batch_lo": 9, "batch_hi": 8, "path": "rows"}]}']
)
def test_bad_plan_file_names_it(fresh, ext, monkeypatch, text):
    need_vnni(False)
    plan = fresh / "bad.json"
    plan.write_text(text)
    monkeypatch.setenv("ICML25_CPU_TUNING", str(plan))
    for _ in range(2):  # at every call, not only the first
        with pytest.raises(ValueError, match="ICML25_CPU_TUNING=.*bad.json"):
            tuned_call(ext)
    plan.write_text(json.dumps({"plans": [{"op": "int4", "batch_lo": 1, "batch_hi": 8, "path": "kmajor", "nr": 2}]}))
    monkeypatch.setenv("ICML25_CPU_TUNING", "off")
    tuned_call(ext)
    monkeypatch.setenv("ICML25_CPU_TUNING", str(plan))  # a changed mode: the file is read again
    with pytest.raises(ValueError, match="bad.json.*nr"):
        tuned_call(ext)
    monkeypatch.setenv("ICML25_CPU_TUNING", str(fresh / "missing.json"))
    with pytest.raises(ValueError, match="missing.json"):
        tuned_call(ext)


def test_vnni_off_falls_back_without_tuning(fresh, ext, monkeypatch):
    monkeypatch.setenv("ICML25_CPU_VNNI", "0")
    monkeypatch.setattr(tuning, "tune", lambda *a, **k: pytest.fail("tuned the fp32 fallback"))
    w, x, y = tuned_call(ext)
    close(y, R.int4_linear(x, w.packed, w.scales, w.zeros, 128, 512))
    s = s24_weight(ext, 40, 512, 128, 1)
    close(ext.sparse24_int4_linear(x, s), R.sparse24_int4_linear(x, s.values, s.meta, s.scales, 128, 512))
    assert not tuning.cache_file().exists()


def test_tuning_keeps_results(fresh, ext):
    """Tuned and untuned calls agree within the ops' tolerance at every batch bucket, both formats."""
    need_vnni(True)
    s = s24_weight(ext, 40, 512, 128, 2)
    w = int4_weight(ext, 40, 512, 128, 2)
    for m in (2, 4, 8, 16, 32):
        x = torch.randn(m, 512)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no candidate may disagree
            got = ext.int4_linear(x, w), ext.sparse24_int4_linear(x, s)
        want = (
            R.int4_linear(x, w.packed, w.scales, w.zeros, 128, 512),
            R.sparse24_int4_linear(x, s.values, s.meta, s.scales, 128, 512),
        )
        close(got[0], want[0])
        close(got[1], want[1])
    assert len(json.loads(tuning.cache_file().read_text())["plans"]) == 10


def test_plan_file_applies_from_a_first_batch_1_call(fresh, ext, monkeypatch):
    """Batch 1 skips the tuner's checks once the mode is settled; a plan file is still loaded by the first call."""
    need_vnni(False)
    plan = fresh / "plan.json"
    plan.write_text(json.dumps({"plans": [{"op": "int4", "batch_lo": 1, "batch_hi": 1, "path": "rows", "nr": 2}]}))
    monkeypatch.setenv("ICML25_CPU_TUNING", str(plan))
    w, x, y = tuned_call(ext, m=1)
    assert tuple(OPS().cpu_plan("int4", 40, 512, 128, 1)) == ("rows", 2)
    xq, _ = quantized_act(x, 512, 128)
    close(y, R.int4_linear(xq, w.packed, w.scales, w.zeros, 128, 512), rel=1e-5)
    monkeypatch.setenv("ICML25_CPU_TUNING", "off")
    tuned_call(ext, m=1)
    assert tuple(OPS().cpu_plan("int4", 40, 512, 128, 1)) == ("default", 0)


def test_save_merges_plans_of_another_process(fresh, ext):
    """Two processes tuning different shapes: the second write keeps the first one's plans."""
    need_vnni(False)
    tuned_call(ext, n=40)
    tuning.reset()  # as another process: it has not read the file's plan of n = 40
    tuning._disk = {}
    tuned_call(ext, n=48)
    shapes = {e["n"] for e in json.loads(tuning.cache_file().read_text())["plans"]}
    assert shapes == {40, 48}


def test_bad_cached_plan_is_dropped_with_a_warning_naming_the_file(fresh, ext):
    """A plan the op refuses (nr 3: no such tile) must not crash every call of that batch bucket."""
    need_vnni(False)
    tuned_call(ext)
    f = tuning.cache_file()
    data = json.loads(f.read_text())
    data["plans"][0]["path"], data["plans"][0]["nr"] = "rows", 3
    f.write_text(json.dumps(data))
    tuning.reset()
    with pytest.warns(UserWarning, match=rf"{f}: cached CPU plan \('rows', 3\).*invalid"):
        w, x, y = tuned_call(ext)
    xq, _ = quantized_act(x, 512, 128)
    close(y, R.int4_linear(xq, w.packed, w.scales, w.zeros, 128, 512), rel=1e-5)
    assert json.loads(f.read_text())["plans"][0]["nr"] != 3  # re-tuned and saved


def test_unwritable_cache_keeps_plans_in_memory_with_one_warning(fresh, ext, monkeypatch):
    """A cache folder that cannot be created (here: under a file; on a cluster, a read-only $HOME)."""
    need_vnni(False)
    blocker = fresh / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("ICML25_CACHE_DIR", str(blocker / "cache"))
    tuning.reset()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        tuned_call(ext, m=8)
        tuned_call(ext, m=16)  # another bucket: tuned, kept in memory, no second warning
        tuned_call(ext, m=8)
    about_cache = [w for w in seen if "cannot write the CPU tuning cache" in str(w.message)]
    assert len(about_cache) == 1 and str(blocker) in str(about_cache[0].message)
    assert tuning._memo, "the plans were not kept in memory"


def test_emulated_amx_neither_tunes_nor_writes_the_cache(fresh, ext, monkeypatch):
    need_vnni(False)
    monkeypatch.setenv("ICML25_CPU_AMX", "emulate")
    monkeypatch.setattr(tuning, "tune", lambda *a, **k: pytest.fail("tuned under the emulated AMX backend"))
    tuned_call(ext)
    assert not tuning.cache_file().exists()


def test_plan_validation_is_relative_to_the_output_scale():
    want = torch.full((4, 8), 1e-3)
    assert not tuning.agrees(want * 1.01, want), "a 1 % error on a small output passed"
    assert tuning.agrees(want * (1 + 1e-7), want)
    assert tuning.agrees(torch.zeros(2, 2), torch.zeros(2, 2))
