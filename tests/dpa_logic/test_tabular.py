"""The tabular experiment: the task, training, and the displacement metric."""

import pytest

from methods.dpa_logic import tabular

TASK = dict(
    n_prompts=4, n_responses=5, feature_dim=3, pairs_per_prompt=4, reward_scale=2.0, init_scale=0.5, max_length=4
)


def test_task_holds_out_pairs():
    t = tabular.make_task(0, **TASK)
    assert len(t["train"]) == 4 * 4 and len(t["test"]) == 4 * (10 - 4)
    train = {(x, min(w, l), max(w, l)) for x, w, l in t["train"]}
    test = {(x, min(w, l), max(w, l)) for x, w, l in t["test"]}
    assert not train & test
    for x, w, l in t["test"]:
        assert t["reward"][x, w] >= t["reward"][x, l]


def test_too_many_pairs_is_an_error():
    with pytest.raises(ValueError, match="pairs_per_prompt"):
        tabular.make_task(0, **{**TASK, "pairs_per_prompt": 10})


def test_training_lowers_the_loss_and_reports_metrics():
    t = tabular.make_task(1, **TASK)
    r = tabular.train_policy(t, "dpo", {}, steps=30, lr=0.05, log_every=10)
    assert r["curve"]["loss"][-1] < r["curve"]["loss"][0]
    assert r["curve"]["step"] == [0, 10, 20, 30]
    assert r["delta_logp_w"] == pytest.approx(r["curve"]["logp_w"][-1] - r["curve"]["logp_w"][0])
    with pytest.raises(ValueError, match="no preference structure"):
        tabular.train_policy(t, "ipo", {}, steps=1, lr=0.1, log_every=1)


def test_sft_raises_the_winner():
    t = tabular.make_task(2, **TASK)
    assert tabular.train_policy(t, "sft", {}, steps=20, lr=0.05, log_every=5)["delta_logp_w"] > 0


def test_random_predictor_is_a_fair_coin_of_its_own_stream():
    from methods.dpa_logic.tabular import random_pair_accuracy

    accs = [random_pair_accuracy(640, s) for s in range(50)]
    assert all(0.0 <= a <= 1.0 for a in accs) and random_pair_accuracy(640, 3) == accs[3]
    assert abs(sum(accs) / len(accs) - 0.5) < 0.01  # 50 x 640 coins: sd 0.0028
