"""Golden-value parity with the official code: MeganTj/multimodal_alignment at commit
20f2286c62adf54831d1cab24c9cd7139d892be5, run in a scratch checkout with the project's torch 2.13 CPU
(torchvision / torchaudio import stubs only; no official code is in this repository).

Fixtures (numbers printed by the official functions on the inputs named in each test):
* `unimodals.common_models.CustomMLP(12, 12, num_hidden=L, nonlin="leaky_relu")` then the head
  `nn.Linear(12, 4)` (as `training_structures.unimodal.get_model_criterion` builds them), both created
  after `torch.manual_seed(0)`; input `np.random.default_rng(0).standard_normal((6, 12))` in float32;
  hidden states are the outputs of the modules named "*relu*" (what `scripts/get_alignment.get_all_hidden`
  extracts).
* `utils.align_metrics.AlignmentMetrics.measure("mutual_knn", a, b, 10)` and `("unbiased_cka", a, b)` on
  rows L2-normalised by `nn.functional.normalize` (as `scripts/get_alignment.get_alignment` with q = 1).
* `synthetic.generate_prob_utils.get_feature_subsets` / `get_data_distr_estimate_mi` with the template
  `configs/rus_prob_template.yaml` (8 shared bits, 4 unique bits, 4 classes, T = 0.05, features_seed 1,
  weights_seed 2, the official prior tolerance 0.01).
* `synthetic/generate_prob_data.get_transforms` for the "uni" setting, depths 0..10 drawn in sequence
  after `seed_everything(0)`, applied to two fixed bit vectors in float32.
Tolerance: 1e-5 relative for float32 network outputs (the module's own float32 arithmetic), 1e-9 for
float64 quantities (generator law, information, metrics).
"""

import numpy as np
import pytest
import torch

from methods.mm_alignment.encoders import MLPEncoder
from methods.mm_alignment.generator import (
    GeneratorSpec,
    apply_transform,
    build_distribution,
    class_prior,
    feature_subsets,
    heterogeneity_transforms,
    mutual_information,
)
from methods.mm_alignment.metrics import alignment

# depth -> (logits of row 0, sum of all logits, sum of each hidden state, parameter count incl. head)
ENCODER_GOLDEN = {
    1: (
        [-0.2540813684463501, 0.5999801158905029, 0.26959648728370667, -0.011762291193008423],
        1.6425025463104248,
        [10.759493827819824],
        208,
    ),
    2: (
        [-0.22037376463413239, -0.1370265632867813, -0.05839318037033081, 0.24638839066028595],
        -2.008708953857422,
        [10.759493827819824, 3.251896858215332],
        364,
    ),
    3: (
        [-0.1675102859735489, 0.010240787640213966, 0.15182098746299744, -0.11565352231264114],
        -0.6434415578842163,
        [10.759493827819824, 3.251896858215332, 2.4897665977478027],
        520,
    ),
}


@pytest.mark.parametrize("depth", sorted(ENCODER_GOLDEN))
def test_encoder_matches_official_custom_mlp(depth):
    row0, total, hidden_sums, n_params = ENCODER_GOLDEN[depth]
    torch.manual_seed(0)
    model = MLPEncoder(12, 12, depth, 4)
    x = torch.as_tensor(np.random.default_rng(0).standard_normal((6, 12)), dtype=torch.float32)
    with torch.no_grad():
        logits, hidden = model(x, return_hidden=True)
    assert sum(p.numel() for p in model.parameters()) == n_params
    assert logits[0].tolist() == pytest.approx(row0, rel=1e-5, abs=1e-6)
    assert float(logits.sum()) == pytest.approx(total, rel=1e-5)
    assert [float(h.sum()) for h in hidden] == pytest.approx(hidden_sums, rel=1e-5)


def _metric_inputs():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 12))
    b = a @ rng.standard_normal((12, 12)) + 0.5 * rng.standard_normal((64, 12))
    return torch.as_tensor(a), torch.as_tensor(b)


def test_metrics_match_official_align_metrics():
    a, b = _metric_inputs()
    assert alignment(a, b, "mutual_knn", 10) == pytest.approx(0.503125011920929, rel=1e-7)
    assert alignment(a, b, "unbiased_cka", 10) == pytest.approx(0.6935051669974437, rel=1e-9)


# redundant bits r -> official (subsets, {I(X1,X2;Y), I(X1;Y), I(X2;Y)}, {(xc, xu1, xu2): p(y | x)})
GENERATOR_GOLDEN = {
    8: (
        ([7, 2, 1, 6, 0, 4, 3, 5], [], []),
        (1.15883904902752, 1.15883904902752, 1.15883904902752),
        {
            (37, 5, 11): [0.06298417428874611, 1.6652677198845847e-05, 0.009559846034979008, 0.9274393269990759],
            (200, 15, 3): [0.9170083575273548, 3.260320524368657e-09, 0.08299163799996381, 1.212360979721609e-09],
        },
    ),
    5: (
        ([7, 2, 1, 6, 0], [3], [2, 3]),
        (1.1588390490275344, 0.7150846019502268, 0.886690839578374),
        {
            (37, 5, 11): [0.764602030749872, 0.0006430060507461876, 0.23472292558311866, 3.203761626309654e-05],
            (200, 15, 3): [0.00029147654857244635, 8.23946839912875e-05, 0.9996261287673178, 1.1853032693713445e-13],
        },
    ),
    2: (
        ([7, 2], [3, 2, 0], [2, 3, 0]),
        (1.1588390490275602, 0.4935025205048879, 0.6075973555759518),
        {
            (37, 5, 11): [0.0027589346666325007, 1.1270345618827257e-06, 0.9972219435729195, 1.799472588609372e-05],
            (200, 15, 3): [0.0498252334970589, 0.696229645741653, 0.2539196892128201, 2.5431548467859594e-05],
        },
    ),
}


@pytest.mark.parametrize("r", sorted(GENERATOR_GOLDEN))
def test_generator_matches_official_law(r):
    subsets, info, probs = GENERATOR_GOLDEN[r]
    spec = GeneratorSpec(prior_tol=0.01)  # the official tolerance and our default
    u = spec.n_label_features - r
    assert [list(map(int, s)) for s in feature_subsets(u, spec)] == [list(s) for s in subsets]
    dist = build_distribution(u, spec)
    got = mutual_information(dist)
    assert (got["I(X1,X2;Y)"], got["I(X1;Y)"], got["I(X2;Y)"]) == pytest.approx(info, rel=1e-9)
    for (ic, i1, i2), p in probs.items():
        assert dist.p_y[ic, i1, i2].tolist() == pytest.approx(p, rel=1e-9, abs=1e-15)


def test_official_prior_is_rescaled_to_within_its_tolerance_of_uniform():
    """The official `adjust_q_y_given_x1_x2` printed p(y) = [0.25469694 0.24188406 0.25890316 0.24451585]
    for every r after its rescaling to within 0.01 of uniform. The plain tempered softmax is far from
    uniform (p(y) about [0.085, 0.152, 0.566, 0.197]) and would carry I(X1,X2;Y) = 0.9375 nats, not the
    official 1.1588: the rescaling is applied, not skipped."""
    p_y = class_prior(build_distribution(3, GeneratorSpec(prior_tol=0.01)))
    assert p_y.tolist() == pytest.approx([0.25469694, 0.24188406, 0.25890316, 0.24451585], abs=5e-9)
    plain = build_distribution(3, GeneratorSpec(prior_tol=1.0))  # |p(y) - 1/4| <= 1 always: no rescaling
    assert np.max(np.abs(class_prior(plain) - 0.25)) > 0.3
    assert mutual_information(plain)["I(X1,X2;Y)"] == pytest.approx(0.9375, abs=5e-5)
    assert mutual_information(build_distribution(3, GeneratorSpec(prior_tol=0.01)))["I(X1,X2;Y)"] == pytest.approx(
        1.1588, abs=5e-5
    )


def test_tight_prior_tolerance_is_the_only_generator_difference():
    """Our option prior_tol = 1e-10 rescales p(y | x) until p(y) is uniform: I(X1,X2;Y) moves from the
    official 1.15884 to 1.15918 nats."""
    tight = mutual_information(build_distribution(0, GeneratorSpec(prior_tol=1e-10)))["I(X1,X2;Y)"]
    assert tight == pytest.approx(1.1592, abs=5e-5) and abs(tight - 1.15883904902752) > 1e-4


# depth D -> official phi_D(x)[0, :4] and the sum of phi_D(x) over both rows
TRANSFORM_GOLDEN = {
    0: ([-0.723218560218811, -0.15606631338596344, -0.5592635869979858, -0.04096946120262146], -3.116197109222412),
    1: ([-0.06393665820360184, -0.2920631468296051, -0.5546378493309021, -0.37645918130874634], -2.4710936546325684),
    5: ([0.17319326102733612, -0.07045165449380875, -0.30010563135147095, -0.15702199935913086], -2.505596399307251),
    10: ([0.04724337160587311, 0.25055167078971863, 0.12434200942516327, -0.1014629453420639], -1.3466829061508179),
}


def test_heterogeneity_transforms_match_official_draw():
    phis = heterogeneity_transforms(12, 10, seed=0)
    x = np.array([[1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1], [0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0]], dtype=float)
    for depth, (row0, total) in TRANSFORM_GOLDEN.items():
        out = apply_transform(phis[depth], x)  # float64 here, float32 in the official code
        assert out[0, :4].tolist() == pytest.approx(row0, rel=1e-5, abs=1e-6)
        assert float(out.sum()) == pytest.approx(total, rel=1e-5)
