"""Claims machinery: criterion language, verdict logic, templates, schema, atomic write."""

import json
import math
from importlib import metadata

import jsonschema
import pytest

from methods.common import claims as C

DECL = {
    "paper": "demo",
    "title": "Demo paper",
    "arxiv": "0000.00000",
    "claims": [
        {
            "id": "a_beats_b",
            "kind": "headline",
            "setting": "reduced",
            "null": {"a": "b"},
            "statement": "A is below B",
            "paper_value": {"value": 1.0, "source": "Table 1"},
            "criterion": "a < b",
            "evidence": ["metrics.json"],
        },
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


@pytest.mark.parametrize(
    "outcomes, verdict",
    [
        ([True, True, True], "reproduced"),
        ([False, False], "not_reproduced"),
        ([True, False, True], "inconclusive"),
        ([True, None], "inconclusive"),
        ([], "inconclusive"),
    ],
)
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
    decl = {
        "id": "low_{ds}",
        "for_each": "ds",
        "kind": "headline",
        "setting": "paper",
        "null": {"err_{ds}": "err_{ds}_base"},
        "statement": "low on {ds}",
        "paper_value": {"value": "x", "source": "T1"},
        "criterion": "err_{ds} < 1",
        "evidence": ["fig_{ds}.png"],
    }
    out = C.expand_claims([decl], {"ds": ["p", "q"]})
    assert [c["id"] for c in out] == ["low_p", "low_q"]
    assert out[1]["criterion"] == "err_q < 1" and out[1]["evidence"] == ["fig_q.png"]
    assert out[1]["null"] == {"err_q": "err_q_base"}
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
    passed = json.loads(json.dumps(doc))
    passed["claims"][0]["verdict"] = "passed"  # a check's verdict on a headline claim
    with pytest.raises(jsonschema.ValidationError):
        C.write_claims(tmp_path / "bad.json", passed)
    assert not (tmp_path / "bad.json").exists()
    assert sorted(tmp_path.iterdir()) == [path, tmp_path / "metrics.json"]  # no temporary file left behind


def test_declaration_checks(tmp_path):
    p = tmp_path / "claims.yaml"
    p.write_text("paper: x\ntitle: t\narxiv: '1'\nclaims:\n- {id: a, kind: check, statement: s, criterion: 'a <'}\n")
    with pytest.raises(ValueError, match="not a valid expression"):
        C.load_declaration(p)
    p.write_text(
        "paper: x\ntitle: t\narxiv: '1'\nclaims:\n- {id: a, kind: check, statement: s, criterion: 'a < 1', verdict: reproduced}\n"
    )
    with pytest.raises(ValueError, match="unknown keys.*verdict"):
        C.load_declaration(p)


def test_markdown_table_lists_every_claim():
    doc = C.evaluate_claims(DECL, {"a": [1.0, 2.0], "b": 3.0}, "tiny")
    table = C.claims_table_markdown(doc)
    assert "a_beats_b" in table and "**reproduced**" in table and "1.5 ± 0.71 (n=2)" in table


def test_a_noise_band_makes_a_tie_inconclusive_and_never_flips_the_verdict():
    """speedup > 1 with a 10% band: 1.2 reproduces, 0.8 refutes, anything in between is a tie."""
    decl = {
        "id": "faster",
        "kind": "headline",
        "setting": "stand-in",
        "null": {"speedup": "baseline_speedup"},
        "statement": "A is faster",
        "paper_value": {"value": 1.65, "source": "abstract"},
        "criterion": "speedup >= 1.1",
        "refuted_if": "speedup <= 0.9",
        "evidence": [],
    }
    verdict = lambda v: C.evaluate_claim(decl, {"speedup": v, "baseline_speedup": 1.0}, "tiny")["verdict"]  # noqa: E731
    assert verdict([1.2, 1.3]) == "reproduced"
    assert verdict([0.8, 0.85]) == "not_reproduced"
    # noise of +-0.08 around 1.0 moves the value but never across the band
    for jitter in (-0.08, -0.03, 0.0, 0.03, 0.08):
        assert verdict([1.0 + jitter]) == "inconclusive"
    row = C.evaluate_claim(decl, {"speedup": [1.0], "baseline_speedup": 1.0}, "tiny")
    assert row["per_seed_refuted"] == [False] and row["refuted_if"] == "speedup <= 0.9"
    assert row["null_verdict"] == "inconclusive"  # the baseline's own ratio sits inside the band
    C.validate_claims({**C.evaluate_claims(DECL, {"a": 1.0, "b": 2.0}, "tiny"), "claims": [row]})
    contradictory = {**decl, "refuted_if": "speedup >= 1.0"}
    with pytest.raises(ValueError, match="both hold"):
        C.evaluate_claim(contradictory, {"speedup": [1.2], "baseline_speedup": 1.0}, "tiny")


def test_null_puts_the_baseline_in_place_of_the_method():
    """The criterion is evaluated again with the null metric substituted; a strict comparison fails on a tie."""
    row = C.evaluate_claim(DECL["claims"][0], {"a": [1.0, 1.5], "b": [2.0, 2.5]}, "tiny")
    assert row["verdict"] == "reproduced"
    assert row["null"] == {"a": "b"} and row["null_per_seed"] == [False, False]
    assert row["null_verdict"] == "not_reproduced"
    assert set(row["measured"]) == {"a", "b"}


def test_a_criterion_the_null_also_satisfies_is_inconclusive():
    """`acc > 0.5` with the untrained model at 0.7: the trained model's 0.9 cannot show the effect."""
    decl = {
        "id": "learns",
        "kind": "headline",
        "setting": "paper",
        "null": {"acc": "acc_untrained"},
        "statement": "training helps",
        "paper_value": {"value": 0.9, "source": "Table 2"},
        "criterion": "acc > 0.5",
    }
    row = C.evaluate_claim(decl, {"acc": [0.9, 0.95], "acc_untrained": [0.7, 0.6]}, "tiny")
    assert row["per_seed"] == [True, True] and row["null_verdict"] == "reproduced"
    assert row["verdict"] == "inconclusive"
    ok = C.evaluate_claim(decl, {"acc": [0.9, 0.95], "acc_untrained": [0.5, 0.4]}, "tiny")
    assert ok["verdict"] == "reproduced" and ok["null_verdict"] == "not_reproduced"
    assert ok["measured"]["acc_untrained"]["values"] == [0.5, 0.4]


def test_a_one_sided_claim_whose_premise_failed_is_inconclusive():
    """A correlation that 'falls from strong to weak' cannot reproduce when it was never strong."""
    decl = {
        "id": "corr_falls",
        "kind": "headline",
        "setting": "reduced",
        "null": {"r_high": "r_low"},
        "statement": "the correlation falls from strong to weak",
        "paper_value": {"value": "0.7 -> 0", "source": "abstract"},
        "criterion": "r_high <= 0.3 and r_high <= r_low - 0.3",
        "testable_if": "r_low >= 0.5",
    }
    row = C.evaluate_claim(decl, {"r_low": [0.19, 0.2], "r_high": [-0.18, -0.2]}, "tiny")
    assert row["per_seed"] == [True, True] and row["testable"] is False
    assert row["verdict"] == "inconclusive"
    assert C.evaluate_claim(decl, {"r_low": [0.7, 0.8], "r_high": [0.1, 0.0]}, "tiny")["verdict"] == "reproduced"


def test_the_null_verdict_honours_the_premise_on_the_substituted_metrics():
    """An equivalence claim (outcome within 0.2 of process) whose null (naive) is only informative where it
    differs from process: with the power premise, the null reads inconclusive where it does not differ (the
    experiment has no power, and the claim reads inconclusive too) and not reproduced where it does."""
    decl = {
        "id": "same_rate",
        "kind": "headline",
        "setting": "paper",
        "null": {"outcome": "naive"},
        "statement": "outcome supervision keeps the process rate",
        "paper_value": {"value": "same rate", "source": "abstract"},
        "criterion": "abs(outcome - process) <= 0.2",
        "testable_if": "abs(naive - process) > 0.2",
    }
    no_power = C.evaluate_claim(decl, {"outcome": [-0.28], "process": [-0.33], "naive": [-0.27]}, "tiny")
    assert no_power["null_per_seed"] == [True]  # the criterion alone holds under the null
    assert no_power["null_verdict"] == "inconclusive" and no_power["verdict"] == "inconclusive"
    power = C.evaluate_claim(decl, {"outcome": [-0.48], "process": [-0.5], "naive": [-0.05]}, "tiny")
    assert power["null_verdict"] == "not_reproduced" and power["verdict"] == "reproduced"
    # without the premise the same numbers give a null that holds, so the claim cannot read reproduced
    bare = {k: v for k, v in decl.items() if k != "testable_if"}
    assert (
        C.evaluate_claim(bare, {"outcome": [-0.28], "process": [-0.33], "naive": [-0.27]}, "tiny")["null_verdict"]
        == "reproduced"
    )


def test_checks_read_passed_or_failed_and_carry_no_setting_or_null():
    check = {"id": "identity", "kind": "check", "statement": "compiled equals closed form", "criterion": "err < 1e-6"}
    assert C.evaluate_claim(check, {"err": [1e-9]}, "tiny")["verdict"] == "passed"
    assert C.evaluate_claim(check, {"err": [1e-3]}, "tiny")["verdict"] == "failed"
    with pytest.raises(ValueError, match="a check has no 'null'"):
        C.evaluate_claim({**check, "null": {"err": "x"}}, {"err": 1.0, "x": 1.0}, "tiny")


@pytest.mark.parametrize(
    "drop, message",
    [
        ("kind", "lacks 'kind'"),
        ("setting", "lacks 'setting'"),
        ("null", "lacks 'null'"),
        ("paper_value", "lacks 'paper_value'"),
    ],
)
def test_a_headline_claim_must_state_kind_setting_null_and_source(drop, message):
    decl = {k: v for k, v in DECL["claims"][0].items() if k != drop}
    with pytest.raises(ValueError, match=message):
        C.evaluate_claim(decl, {"a": 1.0, "b": 2.0}, "tiny")


def test_null_must_replace_a_metric_the_criterion_reads():
    decl = {**DECL["claims"][0], "null": {"c": "b"}}
    with pytest.raises(ValueError, match="does not read"):
        C.evaluate_claim(decl, {"a": 1.0, "b": 2.0, "c": 0.0}, "tiny")


def test_schema_requires_kind_everywhere_and_setting_and_null_on_headline_claims():
    doc = C.evaluate_claims(DECL, {"a": 1.0, "b": 2.0}, "tiny")
    C.validate_claims(doc)
    for key in ("kind", "setting", "null", "null_verdict"):
        bad = json.loads(json.dumps(doc))
        del bad["claims"][0][key]
        with pytest.raises(jsonschema.ValidationError):
            C.validate_claims(bad)


def test_every_document_records_its_provenance(monkeypatch):
    monkeypatch.setenv("ICML25_CONFIG_DIGESTS", json.dumps({"demo": "abc123"}))
    prov = C.evaluate_claims({**DECL, "libraries": ["jsonschema"]}, {"a": 1.0, "b": 2.0}, "tiny")["provenance"]
    assert prov["scale"] == "tiny" and prov["config_digest"] == "abc123"
    assert prov["packages"]["jsonschema"] == metadata.version("jsonschema")
    assert {"torch", "numpy", "snakemake"} <= set(prov["packages"]) and prov["packages"]["numpy"]
    assert prov["host"]["cpus"] >= 1 and prov["host"]["cpu"]
    assert prov["commit"] is None or len(prov["commit"]) == 40


def test_a_bare_null_key_in_yaml_is_the_null(tmp_path):
    """YAML parses `null:` as the key None; the declaration reads it as the claim's null all the same."""
    p = tmp_path / "claims.yaml"
    p.write_text(
        "paper: x\ntitle: t\narxiv: '1'\nclaims:\n- id: a\n  kind: headline\n  setting: paper\n"
        "  statement: s\n  paper_value: {value: 1, source: T}\n  criterion: 'a < b'\n  null: {a: b}\n"
    )
    assert C.load_declaration(p)["claims"][0]["null"] == {"a": "b"}


def test_metrics_json_beside_claims_has_headline_means_and_per_seed_values(tmp_path):
    doc = C.evaluate_claims(
        {
            **DECL,
            "claims": DECL["claims"]
            + [{"id": "finite", "kind": "check", "statement": "finite", "criterion": "a < 1e9"}],
        },
        {"a": [1.0, 2.0], "b": [3.0, 3.0]},
        "tiny",
    )
    C.write_claims(tmp_path / "claims.json", doc)
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["headline"] == {"reproduced": 1, "not_reproduced": 0, "inconclusive": 0}
    assert m["checks"] == {"passed": 1, "failed": 0, "inconclusive": 0}
    assert m["a"] == {"mean": 1.5, "per_seed_0": 1.0, "per_seed_1": 2.0} and m["b"]["mean"] == 3.0


def test_main_figure_declaration_is_checked(tmp_path):
    p = tmp_path / "claims.yaml"
    base = "paper: x\ntitle: t\narxiv: '1'\nclaims:\n- {id: a, kind: check, statement: s, criterion: 'a < 1'}\n"
    p.write_text(base + "main_figure: {data: figures/curve.csv, x: step, y: loss}\n")
    assert C.load_declaration(p)["main_figure"]["x"] == "step"
    p.write_text(base + "main_figure: {data: figures/curve.csv, x: step}\n")
    with pytest.raises(ValueError, match="main_figure must be a mapping"):
        C.load_declaration(p)
