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
            "nulls": [{"name": "b", "kind": "ablation", "sub": {"a": "b"}}],
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
    assert C.evaluate_claim(decl, {"a": [1.0, 2.0], "b": [3.0, 4.1]}, "tiny")["verdict"] == "reproduced"
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
    m = {"a": [1.0, 1.1], "b": [2.0, 2.2]}
    assert C.evaluate_claim(decl, {**m, "c": 0.0}, "tiny")["verdict"] == "inconclusive"
    assert C.evaluate_claim(decl, {**m, "c": 1.0}, "tiny")["verdict"] == "reproduced"


def test_a_premise_never_turns_a_refutation_into_inconclusive():
    """cfdg's case: the method loses on every seed; a premise that fails (here about the comparator) must not
    hide it. The premise only holds back a reproduction."""
    decl = {**DECL["claims"][0], "testable_if": "c > 0"}
    row = C.evaluate_claim(decl, {"a": [3.0, 3.1], "b": [2.0, 2.2], "c": 0.0}, "tiny")
    assert row["testable"] is False and row["verdict"] == "not_reproduced"


def test_a_timing_measured_on_the_reference_ops_is_inconclusive_not_refuted():
    """ICML25_KERNELS=reference took slim's layer speedup from 2.61x to 0.01x: a refutation of the kernel by
    numbers that never ran it. valid_if holds back both verdicts, names why, and recomputes alike."""
    decl = {
        "id": "layer_speedup",
        "kind": "check",
        "statement": "the compressed layer is faster",
        "criterion": "speedup > 1.1",
        "refuted_if": "speedup < 0.9",
        "valid_if": "compiled_kernels > 0",
        "evidence": [],
    }
    reference = C.evaluate_claim(decl, {"speedup": 0.01, "compiled_kernels": 0.0}, "tiny")
    assert reference["verdict"] == "inconclusive" and reference["valid"] is False
    assert "valid_if (compiled_kernels > 0)" in reference["verdict_reason"]
    assert "refuted" in reference["verdict_reason"]  # the criterion's own outcome stays visible
    compiled = C.evaluate_claim(decl, {"speedup": 0.01, "compiled_kernels": 1.0}, "tiny")
    assert compiled["verdict"] == "failed" and compiled["valid"] is True  # a real refutation still refutes
    assert C.evaluate_claim(decl, {"speedup": 2.6, "compiled_kernels": 1.0}, "tiny")["verdict"] == "passed"
    assert C.evaluate_claim(decl, {"speedup": 2.6, "compiled_kernels": math.nan}, "tiny")["verdict"] == "inconclusive"
    headline = {**DECL["claims"][0], "valid_if": "compiled_kernels > 0"}
    m = {"a": [3.0, 3.1], "b": [2.0, 2.2]}
    assert C.evaluate_claim(headline, {**m, "compiled_kernels": 0.0}, "tiny")["verdict"] == "inconclusive"
    assert C.evaluate_claim(headline, {**m, "compiled_kernels": 1.0}, "tiny")["verdict"] == "not_reproduced"
    row = json.loads(json.dumps(reference))
    assert C.recompute_claim(row) == row
    C.validate_claims({**C.evaluate_claims(DECL, {"a": 1.0, "b": 2.0}, "tiny"), "claims": [row]})
    assert "not met" in C.claims_table_markdown({"claims": [row]})


@pytest.mark.parametrize("slug", ["slim", "alspec"])
def test_timing_claims_are_valid_only_on_the_compiled_kernels(repo_root, slug):
    """Every claim of slim and alspec that reads a wall-clock speedup or overhead is gated on the compiled
    kernels having run: with the reference ops it reads inconclusive, whatever the timing."""
    declaration = C.load_declaration(repo_root / "src" / "methods" / slug / "claims.yaml")
    timing = [c for c in declaration["claims"] if any(w in c["criterion"] for w in ("speedup", "overhead"))]
    assert timing, f"{slug} declares no timing claim"
    for c in timing:
        assert c.get("valid_if") == "compiled_kernels > 0", f"{slug}/{c['id']}"
        measured = {name: 1.0 for name in C.criterion_names(c["criterion"])}
        measured.update({name: 0.01 for name in measured if "speedup" in name or "sequential" in name})
        row = C.evaluate_claim(c, {**measured, "compiled_kernels": 0.0}, "tiny")
        assert row["verdict"] == "inconclusive" and row["valid"] is False, f"{slug}/{c['id']}"


def test_for_each_expands_one_claim_per_value():
    decl = {
        "id": "low_{ds}",
        "for_each": "ds",
        "kind": "headline",
        "setting": "paper",
        "nulls": [{"name": "base_{ds}", "kind": "baseline", "sub": {"err_{ds}": "err_{ds}_base"}}],
        "family": {"err_{ds}": ["err_{ds}_mean"]},
        "statement": "low on {ds}",
        "paper_value": {"value": "x", "source": "T1"},
        "criterion": "err_{ds} < 1",
        "evidence": ["fig_{ds}.png"],
    }
    out = C.expand_claims([decl], {"ds": ["p", "q"]})
    assert [c["id"] for c in out] == ["low_p", "low_q"]
    assert out[1]["criterion"] == "err_q < 1" and out[1]["evidence"] == ["fig_q.png"]
    assert out[1]["nulls"] == [{"name": "base_q", "kind": "baseline", "sub": {"err_q": "err_q_base"}}]
    assert out[1]["family"] == {"err_q": ["err_q_mean"]}
    assert "for_each" not in out[0]
    with pytest.raises(KeyError, match="for_each"):
        C.expand_claims([decl], {})


def test_document_validates_and_invalid_one_is_not_written(tmp_path):
    doc = C.evaluate_claims(DECL, {"a": [1.0, 2.0], "b": [3.0, 4.1]}, "tiny")
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
    doc = C.evaluate_claims(DECL, {"a": [1.0, 1.1], "b": 3.0}, "tiny")
    table = C.claims_table_markdown(doc)
    assert "a_beats_b" in table and "**reproduced**" in table and "1.05 ± 0.071 (n=2)" in table
    assert "b (ablation; 1 nulls): `a` → `b`; fails on every seed; margin 1.95 [" in table


def test_a_noise_band_makes_a_tie_inconclusive_and_never_flips_the_verdict():
    """speedup > 1 with a 10% band: 1.2 reproduces, 0.8 refutes, anything in between is a tie."""
    decl = {
        "id": "faster",
        "kind": "headline",
        "setting": "stand-in",
        "nulls": [{"name": "baseline", "kind": "baseline", "sub": {"speedup": "baseline_speedup"}}],
        "statement": "A is faster",
        "paper_value": {"value": 1.65, "source": "abstract"},
        "criterion": "speedup >= 1.1",
        "refuted_if": "speedup <= 0.9",
        "evidence": [],
    }
    verdict = lambda v: C.evaluate_claim(decl, {"speedup": v, "baseline_speedup": 1.0}, "tiny")["verdict"]  # noqa: E731
    assert verdict([1.2, 1.21]) == "reproduced"
    assert verdict([0.8, 0.85]) == "not_reproduced"
    # noise of +-0.08 around 1.0 moves the value but never across the band
    for jitter in (-0.08, -0.03, 0.0, 0.03, 0.08):
        assert verdict([1.0 + jitter]) == "inconclusive"
    row = C.evaluate_claim(decl, {"speedup": [1.0], "baseline_speedup": 1.0}, "tiny")
    assert row["per_seed_refuted"] == [False] and row["refuted_if"] == "speedup <= 0.9"
    assert row["nulls"][0]["per_seed"] == [False]  # the baseline's own ratio misses the criterion
    C.validate_claims({**C.evaluate_claims(DECL, {"a": 1.0, "b": 2.0}, "tiny"), "claims": [row]})
    contradictory = {**decl, "refuted_if": "speedup >= 1.0"}
    with pytest.raises(ValueError, match="both hold"):
        C.evaluate_claim(contradictory, {"speedup": [1.2], "baseline_speedup": 1.0}, "tiny")


def test_slack_is_the_distance_to_flipping_the_criterion():
    v = {"a": 1.0, "b": 3.0, "c": 2.5}
    assert C.slack("a < b", v) == 2.0
    assert C.slack("a > b", v) == -2.0
    assert C.slack("a < c < b", v) == 0.5
    assert C.slack("a < b and c < b", v) == 0.5
    assert C.slack("a > b or c < b", v) == 0.5
    assert C.slack("not a < b", v) == -2.0
    assert C.slack("abs(a - b) <= 1", v) == -1.0
    assert C.slack("a == b", v) == -2.0
    for expr in ("a < b", "a > b", "a < c < b", "b < c < a", "a < b and c > b", "a > b or c < b", "not a > b"):
        assert (C.slack(expr, v) > 0) == C.evaluate_expression(expr, v), expr


def test_paired_interval_is_the_t_interval_of_the_differences():
    half = 4.302652729911275 / math.sqrt(3)  # t(0.975, 2 df) * sd 1 / sqrt(3)
    out = C.paired_interval([1.0, 2.0, 3.0])
    assert out["mean"] == pytest.approx(2.0) and out["n"] == 3
    assert (out["low"], out["high"]) == pytest.approx((2.0 - half, 2.0 + half))
    assert C.paired_interval([0.5]) == {"mean": 0.5, "low": 0.5, "high": 0.5, "n": 1}


def test_null_puts_the_ablation_in_place_of_the_method():
    """The criterion is evaluated again with the null metric substituted; a strict comparison fails on a tie."""
    row = C.evaluate_claim(DECL["claims"][0], {"a": [1.0, 1.5], "b": [2.0, 2.6]}, "tiny")
    assert row["verdict"] == "reproduced" and row["strongest_null"] == "b"
    (null,) = row["nulls"]
    assert null["self_tie"] is True and null["per_seed"] == [False, False] and null["holds"] is False
    assert null["margin"]["mean"] == pytest.approx(1.05)
    assert set(row["measured"]) == {"a", "b"}


def test_a_self_tie_null_must_be_the_mechanisms_ablation():
    """ "A beats B" with B in A's place fails by a tie whatever the data: only the method's own ablation may be
    such a null."""
    decl = {**DECL["claims"][0], "nulls": [{"name": "b", "kind": "baseline", "sub": {"a": "b"}}]}
    with pytest.raises(ValueError, match="fails by a tie"):
        C.evaluate_claim(decl, {"a": 1.0, "b": 2.0}, "tiny")


LEARNS = {
    "id": "learns",
    "kind": "headline",
    "setting": "paper",
    "nulls": [{"name": "untrained", "kind": "trivial", "sub": {"acc": "acc_untrained"}}],
    "statement": "training helps",
    "paper_value": {"value": 0.9, "source": "Table 2"},
    "criterion": "acc > 0.5",
}


def test_a_criterion_the_null_also_satisfies_is_inconclusive():
    """`acc > 0.5` with the untrained model at 0.7: the trained model's 0.9 cannot show the effect."""
    row = C.evaluate_claim(LEARNS, {"acc": [0.9, 0.95, 0.92], "acc_untrained": [0.7, 0.6, 0.7]}, "tiny")
    assert row["per_seed"] == [True, True, True] and row["nulls"][0]["holds"]
    assert row["verdict"] == "inconclusive" and "untrained" in row["verdict_reason"]
    ok = C.evaluate_claim(LEARNS, {"acc": [0.9, 0.95, 0.92], "acc_untrained": [0.5, 0.45, 0.48]}, "tiny")
    assert ok["verdict"] == "reproduced", ok["verdict_reason"]
    assert ok["measured"]["acc_untrained"]["values"] == [0.5, 0.45, 0.48]


def test_a_null_that_holds_on_one_seed_makes_the_claim_inconclusive():
    row = C.evaluate_claim(LEARNS, {"acc": [0.9, 0.95, 0.92], "acc_untrained": [0.4, 0.6, 0.3]}, "tiny")
    assert row["nulls"][0]["per_seed"] == [False, True, False]
    assert row["verdict"] == "inconclusive"


def test_the_margin_over_the_strongest_null_must_exclude_zero():
    """The method beats its ablation on every seed, but by 1.0, 0.1 and 0.1: inside the seeds' spread."""
    row = C.evaluate_claim(DECL["claims"][0], {"a": [1.0, 1.9, 1.0], "b": [2.0, 2.0, 1.1]}, "tiny")
    assert row["per_seed"] == [True, True, True] and not row["nulls"][0]["holds"]
    assert row["nulls"][0]["margin"]["low"] < 0 < row["nulls"][0]["margin"]["mean"]
    assert row["verdict"] == "inconclusive" and "includes zero" in row["verdict_reason"]


def test_the_strongest_null_is_the_one_closest_to_passing():
    decl = {
        **LEARNS,
        "criterion": "err < 0.5",
        "nulls": [
            {"name": "untrained", "kind": "trivial", "sub": {"err": "err_untrained"}},
            {"name": "k1", "kind": "ablation", "sub": {"err": "err_k1"}},
        ],
    }
    m = {"err": [0.2, 0.25, 0.22], "err_untrained": [0.9, 0.92, 0.88], "err_k1": [0.6, 0.62, 0.61]}
    row = C.evaluate_claim(decl, m, "tiny")
    assert row["strongest_null"] == "k1" and row["verdict"] == "reproduced"
    assert "'k1'" in row["verdict_reason"]


def test_one_draw_is_inconclusive_unless_the_values_are_exact():
    row = C.evaluate_claim(DECL["claims"][0], {"a": 1.0, "b": 2.0}, "tiny")
    assert row["per_seed"] == [True] and row["verdict"] == "inconclusive" and "one draw" in row["verdict_reason"]
    exact = {**DECL["claims"][0], "deterministic": "closed-form values, no sampling"}
    row = C.evaluate_claim(exact, {"a": 1.0, "b": 2.0}, "tiny")
    assert row["verdict"] == "reproduced" and row["deterministic"].startswith("closed-form")


def test_a_null_without_the_methods_budget_makes_the_claim_inconclusive():
    null = {"name": "k1", "kind": "ablation", "sub": {"err": "err_k1"}, "unequal_budget": "15 steps against 90"}
    decl = {**LEARNS, "criterion": "err < 0.5", "nulls": [null]}
    row = C.evaluate_claim(decl, {"err": [0.2, 0.21, 0.2], "err_k1": [0.9, 0.91, 0.9]}, "tiny")
    assert row["verdict"] == "inconclusive" and "budget" in row["verdict_reason"]
    assert row["nulls"][0]["unequal_budget"] == "15 steps against 90"


def test_every_family_member_is_a_null():
    """The comparator (read by the criterion) is skipped; every other member is substituted."""
    decl = {**DECL["claims"][0], "family": {"a": ["b", "c", "d"]}}
    m = {"a": [1.0, 1.1, 1.0], "b": [2.0, 2.1, 2.0], "c": [3.0, 3.0, 3.0], "d": [1.5, 1.6, 1.5]}
    row = C.evaluate_claim(decl, m, "tiny")
    assert [x["name"] for x in row["nulls"]] == ["b", "c", "d"]
    assert [x["kind"] for x in row["nulls"]] == ["ablation", "family", "family"]
    assert row["strongest_null"] == "d" and row["verdict"] == "inconclusive"  # d < b on every seed
    assert row["family"] == {"a": ["b", "c", "d"]}


def test_inf_and_division_by_zero_are_undefined_seeds_and_recompute_alike():
    decl = {
        **DECL["claims"][0],
        "criterion": "a / b < 1",
        "nulls": [{"name": "c", "kind": "trivial", "sub": {"a": "c"}}],
    }
    row = C.evaluate_claim(decl, {"a": [1.0, 1.0], "b": [2.0, 0.0], "c": [5.0, 5.0]}, "tiny")
    assert row["per_seed"] == [True, None] and row["verdict"] == "inconclusive"
    row = C.evaluate_claim(decl, {"a": [1.0, -math.inf], "b": [2.0, 2.0], "c": [5.0, 5.0]}, "tiny")
    assert row["per_seed"] == [True, None] and row["measured"]["a"]["values"] == [1.0, None]
    again = C.recompute_claim(json.loads(json.dumps(row)))
    assert again["verdict"] == row["verdict"] == "inconclusive"


def test_a_recomputed_row_equals_the_row():
    decl = {**LEARNS, "family": {"acc": ["acc_k1"]}, "testable_if": "acc_untrained < 0.55"}
    m = {"acc": [0.9, 0.95, 0.92], "acc_untrained": [0.5, 0.45, 0.48], "acc_k1": [0.3, 0.2, 0.4]}
    row = json.loads(json.dumps(C.evaluate_claim(decl, m, "tiny")))
    assert C.recompute_claim(row) == row


def test_schema_refuses_a_self_tie_null_that_is_not_an_ablation():
    doc = json.loads(json.dumps(C.evaluate_claims(DECL, {"a": [1.0, 1.1], "b": 2.0}, "tiny")))
    C.validate_claims(doc)
    doc["claims"][0]["nulls"][0]["kind"] = "baseline"
    with pytest.raises(jsonschema.ValidationError):
        C.validate_claims(doc)


def test_checks_read_passed_or_failed_and_carry_no_setting_or_null():
    check = {"id": "identity", "kind": "check", "statement": "compiled equals closed form", "criterion": "err < 1e-6"}
    assert C.evaluate_claim(check, {"err": [1e-9]}, "tiny")["verdict"] == "passed"
    assert C.evaluate_claim(check, {"err": [1e-3]}, "tiny")["verdict"] == "failed"
    null = [{"name": "x", "kind": "trivial", "sub": {"err": "x"}}]
    with pytest.raises(ValueError, match="a check has no 'nulls'"):
        C.evaluate_claim({**check, "nulls": null}, {"err": 1.0, "x": 1.0}, "tiny")


@pytest.mark.parametrize(
    "drop, message",
    [
        ("kind", "lacks 'kind'"),
        ("setting", "lacks 'setting'"),
        ("nulls", "lacks 'nulls'"),
        ("paper_value", "lacks 'paper_value'"),
    ],
)
def test_a_headline_claim_must_state_kind_setting_null_and_source(drop, message):
    decl = {k: v for k, v in DECL["claims"][0].items() if k != drop}
    with pytest.raises(ValueError, match=message):
        C.evaluate_claim(decl, {"a": 1.0, "b": 2.0}, "tiny")


def test_null_must_replace_a_metric_the_criterion_reads():
    decl = {**DECL["claims"][0], "nulls": [{"name": "c", "kind": "trivial", "sub": {"c": "x"}}]}
    with pytest.raises(ValueError, match="does not read"):
        C.evaluate_claim(decl, {"a": 1.0, "b": 2.0, "c": 0.0, "x": 0.0}, "tiny")


def test_schema_requires_kind_everywhere_and_setting_and_null_on_headline_claims():
    doc = C.evaluate_claims(DECL, {"a": 1.0, "b": 2.0}, "tiny")
    C.validate_claims(doc)
    for key in ("kind", "setting", "nulls", "strongest_null", "verdict_reason"):
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


def test_the_old_null_key_is_refused_with_the_fix(tmp_path):
    p = tmp_path / "claims.yaml"
    p.write_text(
        "paper: x\ntitle: t\narxiv: '1'\nclaims:\n- id: a\n  kind: headline\n  setting: paper\n"
        "  statement: s\n  paper_value: {value: 1, source: T}\n  criterion: 'a < b'\n  'null': {a: b}\n"
    )
    with pytest.raises(ValueError, match="`null` became `nulls`"):
        C.load_declaration(p)


def test_metrics_json_beside_claims_has_the_verdict_counts_only(tmp_path):
    doc = C.evaluate_claims(
        {
            **DECL,
            "claims": DECL["claims"]
            + [{"id": "finite", "kind": "check", "statement": "finite", "criterion": "a < 1e9"}],
        },
        {"a": [1.0, 2.0], "b": [3.0, 4.1]},
        "tiny",
    )
    C.write_claims(tmp_path / "claims.json", doc)
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m == {
        "headline": {"reproduced": 1, "not_reproduced": 0, "inconclusive": 0, "total": 1},
        "checks": {"passed": 1, "failed": 0, "inconclusive": 0},
    }


def test_main_figure_declaration_is_checked(tmp_path):
    p = tmp_path / "claims.yaml"
    base = "paper: x\ntitle: t\narxiv: '1'\nclaims:\n- {id: a, kind: check, statement: s, criterion: 'a < 1'}\n"
    p.write_text(base + "main_figure: {data: figures/curve.csv, x: step, y: loss}\n")
    assert C.load_declaration(p)["main_figure"]["x"] == "step"
    p.write_text(base + "main_figure: {data: figures/curve.csv, x: step}\n")
    with pytest.raises(ValueError, match="main_figure must be a mapping"):
        C.load_declaration(p)


def test_declarations_by_id_tells_apart_templates_of_one_prefix_and_a_plain_claim():
    """graphgpt's two `competitive_with_gnn_{...}` templates over different task lists, and binary_denoising's
    plain `..._mixture` claim beside its `..._{dataset}` template: each run id gets the entry that made it."""
    base = {"kind": "check", "statement": "s"}
    decl = {
        "claims": [
            {**base, "id": "gain_{a}", "for_each": "a", "criterion": "x_{a} < 1"},
            {**base, "id": "gain_{b}", "for_each": "b", "criterion": "y_{b} < 1"},
            {**base, "id": "gain_mix", "criterion": "z < 1"},
        ]
    }
    rows = {
        "gain_p": C.evaluate_claim({**base, "id": "gain_p", "criterion": "x_p < 1"}, {"x_p": 0.5}, "tiny"),
        "gain_q": C.evaluate_claim({**base, "id": "gain_q", "criterion": "y_q < 1"}, {"y_q": 0.5}, "tiny"),
        "gain_mix": C.evaluate_claim({**base, "id": "gain_mix", "criterion": "z < 1"}, {"z": 0.5}, "tiny"),
    }
    out = C.declarations_by_id(decl, list(rows), rows)
    assert {k: v["criterion"] for k, v in out.items()} == {
        "gain_p": "x_p < 1",
        "gain_q": "y_q < 1",
        "gain_mix": "z < 1",
    }
