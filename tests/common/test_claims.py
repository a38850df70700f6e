"""Claims machinery: criterion language, verdict logic, templates, schema, atomic write."""
import json
import math

import jsonschema
import pytest

from methods.common import claims as C

DECL = {
    "paper": "demo",
    "title": "Demo paper",
    "arxiv": "0000.00000",
    "claims": [
        {"id": "a_beats_b", "statement": "A is below B", "paper_value": {"value": 1.0, "source": "Table 1"},
         "criterion": "a < b", "evidence": ["metrics.json"]},
    ],
}


def test_expression_arithmetic_and_logic():
    v = {"x": 2.0, "y": 3.0}
    assert C.evaluate_expression("x < y", v) is True
    assert C.evaluate_expression("x * 2 > y and not y < x", v) is True
    assert C.evaluate_expression("abs(x - y) <= 1", v) is True
    assert C.evaluate_expression("1 < x < y < 4", v) is True
    assert C.evaluate_expression("1 < x > y", v) is False
    assert C.evaluate_expression("mean(x, y) == 2.5", v) is True
    assert C.evaluate_expression("max(x, y) / min(x, y) == 1.5", v) is True


@pytest.mark.parametrize("expr", ["__import__('os').system('true')", "x.real", "[x][0]", "x ** 2", "lambda: 1"])
def test_expression_rejects_everything_else(expr):
    with pytest.raises(ValueError, match="criterion"):
        C.evaluate_expression(expr, {"x": 1.0})


def test_unknown_metric_is_named():
    with pytest.raises(KeyError, match="'zeta'"):
        C.evaluate_expression("zeta < 1", {"x": 1.0})


@pytest.mark.parametrize("outcomes, verdict", [
    ([True, True, True], "reproduced"),
    ([False, False], "not_reproduced"),
    ([True, False, True], "inconclusive"),
    ([True, None], "inconclusive"),
    ([], "inconclusive"),
])
def test_verdict_from_outcomes(outcomes, verdict):
    assert C.verdict_from_outcomes(outcomes) == verdict


def test_claim_is_checked_seed_by_seed_with_scalars_broadcast():
    decl = DECL["claims"][0]
    row = C.evaluate_claim(decl, {"a": [1.0, 2.0, 3.0], "b": 2.5}, "tiny")
    assert row["per_seed"] == [True, True, False]
    assert row["verdict"] == "inconclusive"
    assert row["measured"]["a"]["mean"] == pytest.approx(2.0)
    assert row["measured"]["a"]["std"] == pytest.approx(1.0)  # sample std of 1, 2, 3
    assert C.evaluate_claim(decl, {"a": [1.0, 2.0], "b": [3.0, 4.0]}, "tiny")["verdict"] == "reproduced"
    assert C.evaluate_claim(decl, {"a": [5.0, 6.0], "b": [3.0, 4.0]}, "tiny")["verdict"] == "not_reproduced"


def test_nan_measurement_is_inconclusive_and_stored_as_null():
    row = C.evaluate_claim(DECL["claims"][0], {"a": [1.0, math.nan], "b": 2.0}, "tiny")
    assert row["verdict"] == "inconclusive"
    assert row["measured"]["a"]["values"] == [1.0, None]


def test_mismatched_seed_counts_are_an_error():
    with pytest.raises(ValueError, match="different numbers of seeds"):
        C.evaluate_claim(DECL["claims"][0], {"a": [1.0, 2.0], "b": [1.0, 2.0, 3.0]}, "tiny")


def test_missing_metric_names_the_claim_and_metric():
    with pytest.raises(KeyError, match="a_beats_b.*'b'"):
        C.evaluate_claim(DECL["claims"][0], {"a": 1.0}, "tiny")


def test_untestable_claim_is_inconclusive_even_if_criterion_holds():
    decl = {**DECL["claims"][0], "testable_if": "c > 0"}
    assert C.evaluate_claim(decl, {"a": 1.0, "b": 2.0, "c": 0.0}, "tiny")["verdict"] == "inconclusive"
    assert C.evaluate_claim(decl, {"a": 1.0, "b": 2.0, "c": 1.0}, "tiny")["verdict"] == "reproduced"


def test_for_each_expands_one_claim_per_value():
    decl = {"id": "low_{ds}", "for_each": "ds", "statement": "low on {ds}", "paper_value": {"value": "x", "source": "T1"},
            "criterion": "err_{ds} < 1", "evidence": ["fig_{ds}.png"]}
    out = C.expand_claims([decl], {"ds": ["p", "q"]})
    assert [c["id"] for c in out] == ["low_p", "low_q"]
    assert out[1]["criterion"] == "err_q < 1" and out[1]["evidence"] == ["fig_q.png"]
    assert "for_each" not in out[0]
    with pytest.raises(KeyError, match="for_each"):
        C.expand_claims([decl], {})


def test_document_validates_and_invalid_one_is_not_written(tmp_path):
    doc = C.evaluate_claims(DECL, {"a": [1.0, 2.0], "b": [3.0, 3.0]}, "tiny")
    C.validate_claims(doc)
    path = tmp_path / "claims.json"
    C.write_claims(path, doc)
    assert json.loads(path.read_text())["claims"][0]["verdict"] == "reproduced"
    bad = json.loads(json.dumps(doc))
    bad["claims"][0]["verdict"] = "plausible"
    with pytest.raises(jsonschema.ValidationError):
        C.write_claims(tmp_path / "bad.json", bad)
    assert not (tmp_path / "bad.json").exists()
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_declaration_checks(tmp_path):
    p = tmp_path / "claims.yaml"
    p.write_text("paper: x\ntitle: t\narxiv: '1'\nclaims:\n- {id: a, statement: s, paper_value: {value: 1, source: T}, criterion: 'a <'}\n")
    with pytest.raises(ValueError, match="not a valid expression"):
        C.load_declaration(p)
    p.write_text("paper: x\ntitle: t\narxiv: '1'\nclaims:\n- {id: a, statement: s, paper_value: {value: 1, source: T}, criterion: 'a < 1', verdict: reproduced}\n")
    with pytest.raises(ValueError, match="unknown keys.*verdict"):
        C.load_declaration(p)


def test_markdown_table_lists_every_claim():
    doc = C.evaluate_claims(DECL, {"a": [1.0, 2.0], "b": 3.0}, "tiny")
    table = C.claims_table_markdown(doc)
    assert "a_beats_b" in table and "**reproduced**" in table and "1.5 ± 0.71 (n=2)" in table


def test_a_noise_band_makes_a_tie_inconclusive_and_never_flips_the_verdict():
    """speedup > 1 with a 10% band: 1.2 reproduces, 0.8 refutes, anything in between is a tie."""
    decl = {"id": "faster", "statement": "A is faster", "paper_value": {"value": 1.65, "source": "abstract"},
            "criterion": "speedup >= 1.1", "refuted_if": "speedup <= 0.9", "evidence": []}
    verdict = lambda v: C.evaluate_claim(decl, {"speedup": v}, "tiny")["verdict"]  # noqa: E731
    assert verdict([1.2, 1.3]) == "reproduced"
    assert verdict([0.8, 0.85]) == "not_reproduced"
    # noise of +-0.08 around 1.0 moves the value but never across the band
    for jitter in (-0.08, -0.03, 0.0, 0.03, 0.08):
        assert verdict([1.0 + jitter]) == "inconclusive"
    row = C.evaluate_claim(decl, {"speedup": [1.0]}, "tiny")
    assert row["per_seed_refuted"] == [False] and row["refuted_if"] == "speedup <= 0.9"
    C.validate_claims({"paper": "demo", "title": "t", "arxiv": "x", "scale": "tiny", "claims": [row]})
    contradictory = {**decl, "refuted_if": "speedup >= 1.0"}
    with pytest.raises(ValueError, match="both hold"):
        C.evaluate_claim(contradictory, {"speedup": [1.2]}, "tiny")
