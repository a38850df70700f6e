"""The claims step: the metrics it builds from the jobs' JSON, and claims.yaml evaluated on them."""

import pytest

from methods.binary_denoising.claims import DECLARATION_PATH, claims_metrics, exact_metrics
from methods.common.claims import evaluate_claims, load_declaration
from methods.common.io import write_json


def _exact_doc(slem, dob, bias, eta=4.0, etas=(1.0, 16.0)):
    """Rows at alpha 0.25 (high noise) and 2.0 (low noise)."""
    rows = []
    for i, a in enumerate((2.0, 0.25)):  # deliberately unsorted
        k = 1 - i
        rows.append(
            {
                "alpha": a,
                "slem": slem[k],
                "dobrushin": dob[k],
                "chain_marginal_z": 1.0,
                "bias_tv": {str(e): bias[k] * (1 + j) for j, e in enumerate(sorted({eta, *etas}))},
                "mh_tv": {"4.0": 1e-16},
            }
        )
    return {"d": 4, "n_states": 16, "eta": eta, "etas": list(etas), "z_bound": 3.5, "rows": rows}


def test_exact_metrics_reads_the_smallest_alpha_as_high_noise():
    m = exact_metrics(_exact_doc(slem=(0.3, 0.8), dob=(0.5, 1.2), bias=(0.05, 0.4)))
    assert (m["slem_high_noise"], m["slem_low_noise"]) == (0.3, 0.8)
    assert (m["dobrushin_high_noise"], m["dobrushin_low_noise"]) == (0.5, 1.2)
    assert m["rate_excess"] == pytest.approx(-0.2)
    # eta = 4.0 is the middle of the three step sizes: bias factor 2
    assert (m["bias_high_noise"], m["bias_low_noise"]) == pytest.approx((0.10, 0.80))
    assert m["bias_eta_small"] == pytest.approx((0.05 + 0.4) / 2)
    assert m["bias_eta_large"] == pytest.approx(3 * (0.05 + 0.4) / 2)


def _mixture_doc(ess_hi, ess_lo, energy1, energy_last):
    den = {"mse_learned": 0.01, "mse_naive": 0.1, "hamming_learned": 0.2, "hamming_bayes": 0.195}
    return {
        "alphas": [0.25, 2.0],
        "m_max": 3,
        "denoise": {"0.25": den, "2.0": den},
        "mixing": {"0.25": {"langevin": ess_hi, "two_stage": ess_hi}, "2.0": {"langevin": ess_lo, "two_stage": ess_lo}},
        "quality": {
            "learned": {
                "1": {"energy": energy1, "weight_tv": 0.3},
                "3": {"energy": energy_last, "weight_tv": 0.1},
                "1_equal_budget": {"energy": energy1, "weight_tv": 0.3},
                "marginals": {"energy": 0.5, "weight_tv": 0.35},
            }
        },
    }


def _write_run(tmp_path, energy_last):
    mix = []
    for s in range(3):
        mix.append(tmp_path / f"m{s}.json")
        write_json(mix[-1], _mixture_doc(0.5, 0.1, 0.4, energy_last))
    dig = []
    for s in range(3):
        dig.append(tmp_path / f"d{s}.json")
        write_json(
            dig[-1],
            {
                "m_max": 3,
                "quality": {
                    "1": {"energy": 0.4, "classifier_score": 0.5},
                    "3": {"energy": energy_last, "classifier_score": 0.7},
                    "1_equal_budget": {"energy": 0.4, "classifier_score": 0.5},
                    "marginals": {"energy": 0.5, "classifier_score": 0.3},
                },
            },
        )
    exact = tmp_path / "exact_all.json"
    write_json(exact, {"seeds": [0, 1, 2], "runs": [_exact_doc((0.3, 0.8), (0.5, 1.2), (0.05, 0.4))] * 3})
    return claims_metrics([str(p) for p in mix], {"digits8": [str(p) for p in dig]}, [str(exact)])


def test_exact_seed_groups_merge_in_seed_order(tmp_path):
    """One exact job per seed (paper scale) gives the metrics of one job over all seeds (tiny scale)."""
    docs = [
        _exact_doc((0.3, 0.8), (0.5, 1.2), (0.05, 0.4)),
        _exact_doc((0.2, 0.9), (0.4, 1.1), (0.01, 0.3)),
        _exact_doc((0.1, 0.7), (0.6, 1.3), (0.02, 0.5)),
    ]
    mix = [tmp_path / "m.json"]
    write_json(mix[0], _mixture_doc(0.5, 0.1, 0.4, 0.2))
    write_json(tmp_path / "all.json", {"seeds": [0, 1, 2], "runs": docs})
    for s, doc in enumerate(docs):
        write_json(tmp_path / f"seed{s}.json", {"seeds": [s], "runs": [doc]})
    whole = claims_metrics([str(mix[0])], {}, [str(tmp_path / "all.json")])
    split = claims_metrics([str(mix[0])], {}, [str(tmp_path / f"seed{s}.json") for s in range(3)])
    assert split == whole
    assert whole["slem_high_noise"] == [0.3, 0.2, 0.1]


def _verdicts(measured):
    doc = evaluate_claims(load_declaration(DECLARATION_PATH), measured, "tiny", expand_over={"dataset": ["digits8"]})
    return {c["id"]: c["verdict"] for c in doc["claims"]}, doc


def test_every_claim_reads_measured_metrics_and_no_headline_holds_under_its_null(tmp_path):
    verdicts, doc = _verdicts(_write_run(tmp_path, energy_last=0.2))
    assert verdicts["sampling_easier_at_high_noise"] == "reproduced"
    assert verdicts["contraction_faster_at_high_noise"] == "reproduced"
    assert verdicts["more_measurements_better_digits8"] == "reproduced"
    assert verdicts["mh_is_exact"] == "passed" and verdicts["rate_within_theory"] == "passed"
    for c in doc["claims"]:
        if c["kind"] == "headline":
            assert c["nulls"] and not any(n["holds"] for n in c["nulls"]), c["id"]
            # a self-tie only as the mechanism's own ablation (contract V3)
            assert all(n["kind"] == "ablation" for n in c["nulls"] if n["self_tie"]), c["id"]


def test_multi_measurement_claims_compare_at_equal_budget_and_have_a_trivial_null():
    decl = {c["id"]: c for c in load_declaration(DECLARATION_PATH)["claims"]}
    for cid in ("more_measurements_better_mixture", "more_measurements_better_{dataset}"):
        c = decl[cid]
        assert "m1eq" in c["criterion"] and "_m1_" not in c["criterion"], cid
        kinds = {n["kind"] for n in c["nulls"]}
        assert {"ablation", "trivial"} <= kinds, cid
        assert not any(n.get("unequal_budget") for n in c["nulls"]), cid


def test_marginals_null_matters(tmp_path):
    """A trivial sampler that beats m_max's samples makes the claim inconclusive, not reproduced."""
    measured = _write_run(tmp_path, energy_last=0.2)
    measured["energy_marginals_digits8"] = [0.1, 0.1, 0.1]
    measured["cscore_marginals_digits8"] = [0.9, 0.9, 0.9]
    verdicts, _ = _verdicts(measured)
    assert verdicts["more_measurements_better_digits8"] == "inconclusive"


def test_more_measurements_is_not_reproduced_when_m_max_is_worse(tmp_path):
    verdicts, _ = _verdicts(_write_run(tmp_path, energy_last=0.6))
    assert verdicts["more_measurements_better_mixture"] == "not_reproduced"
    assert verdicts["more_measurements_better_digits8"] == "not_reproduced"
