"""`icml25-explain PAPER CLAIM`: a claim's verdict in words, from its recorded numbers."""

import subprocess
import sys
from pathlib import Path

from methods.common import claims as C
from methods.common import explain as E
from methods.common.io import read_json, write_json

DECL = {
    "paper": "demo",
    "title": "Demo",
    "arxiv": "0",
    "claims": [
        {
            "id": "beats_k1",
            "kind": "headline",
            "setting": "toy",
            "statement": "K heads beat one",
            "paper_value": {"value": "lower", "source": "Table 1"},
            "criterion": "err < err_deepar",
            "nulls": [
                {"name": "k1", "kind": "ablation", "sub": {"err": "err_k1"}},
                {"name": "deepar", "kind": "ablation", "sub": {"err": "err_deepar"}},
            ],
            "testable_if": "err_deepar > 0",
        }
    ],
}


def _results(tmp_path):
    measured = {"err": [1.0, 1.1, 1.0], "err_deepar": [2.0, 2.0, 2.1], "err_k1": [1.5, 2.5, 1.8]}
    write_json(tmp_path / "results" / "demo" / "claims.json", C.evaluate_claims(DECL, measured, "tiny"))
    return tmp_path / "results"


def test_substituted_puts_each_value_in_place_of_its_name():
    assert E.substituted("a < ab + 1", {"a": 1.5, "ab": 2.0}) == "1.5 < 2 + 1"


def test_explain_shows_the_seeds_the_failing_null_and_the_rule(tmp_path):
    row = read_json(_results(tmp_path) / "demo" / "claims.json")["claims"][0]
    text = E.explain(row)
    assert "seed 0: 1 < 2 -> holds" in text
    assert "null k1 (strongest) [ablation]: err -> err_k1" in text
    assert "seed 0: 1.5 < 2 -> holds" in text and "seed 1: 2.5 < 2 -> fails" in text
    assert "null deepar [ablation, self-tie]" in text and "seed 2: 2.1 < 2.1 -> fails" in text
    assert "premise (testable_if): err_deepar > 0 -> met" in text
    assert "verdict: inconclusive - " in text and "'k1'" in text


def test_explain_script_names_an_unknown_claim(tmp_path):
    results = _results(tmp_path)
    exe = Path(sys.executable).parent / "icml25-explain"
    ok = subprocess.run([str(exe), "demo", "beats_k1", "--run", str(results)], capture_output=True, text=True)
    assert ok.returncode == 0 and "verdict: inconclusive" in ok.stdout
    bad = subprocess.run([str(exe), "demo", "nope", "--run", str(results)], capture_output=True, text=True)
    assert bad.returncode != 0 and "no claim 'nope'" in bad.stderr and "beats_k1" in bad.stderr


def test_explain_shows_a_timing_measured_on_the_reference_ops_as_no_measurement():
    check = {
        "id": "layer_speedup",
        "kind": "check",
        "statement": "faster",
        "criterion": "speedup > 1.1",
        "valid_if": "compiled_kernels > 0",
    }
    text = E.explain(C.evaluate_claim(check, {"speedup": 0.01, "compiled_kernels": 0.0}, "tiny"))
    assert "measured validly if (valid_if): compiled_kernels > 0 -> NOT met" in text
    assert "seed 0: 0 > 0" in text and "verdict: inconclusive - not a measurement of the method" in text
