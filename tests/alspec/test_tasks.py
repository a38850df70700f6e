"""Synthetic tasks: answers are where they should be, and beyond the sink and the window."""

import pytest
import torch

from methods.alspec.tasks import N_SPECIAL, QUERY, SRC, TaskConfig, make_batch, markov_permutation

CFG = TaskConfig()


def test_recall_answers_are_the_values_of_distant_keys():
    b = make_batch("recall", CFG, 16, seed=0)
    T = CFG.seq_len
    for row, ans in zip(b.ids, b.answer):
        assert row[b.decode_start] == QUERY
        for t in ans.nonzero().flatten().tolist():
            key, value = int(row[t - 1]), int(row[t])
            where = (row[: b.decode_start] == key).nonzero().flatten().tolist()
            assert len(where) == 1, "each key occurs once in the context"
            j = where[0]
            assert int(row[j + 1]) == value
            # the pair sits beyond the sink and outside the window seen from the query
            assert j >= CFG.sink and j + 1 < t - CFG.window
        assert ans.sum() == CFG.n_queries and t < T


def test_copy_target_is_the_source_string_far_back():
    b = make_batch("copy", CFG, 8, seed=1)
    T, m = CFG.seq_len, CFG.copy_len
    src_pos = (b.ids[0] == SRC).nonzero().flatten().tolist()
    assert len(src_pos) == 2 and src_pos[1] == T - m - 1 == b.decode_start and src_pos[0] >= CFG.sink
    assert torch.equal(b.ids[:, src_pos[0] + 1 : src_pos[0] + 1 + m], b.ids[:, T - m :])
    assert b.answer[:, T - m :].all() and b.answer.sum() == 8 * m


def test_local_follows_the_permutation_two_back():
    b = make_batch("local", CFG, 64, seed=2)
    perm = markov_permutation(CFG)
    follow = (b.ids[:, 3:] == perm[b.ids[:, 1:-2] - N_SPECIAL]).float().mean()
    assert abs(float(follow) - (1 - CFG.noise)) < 0.03  # the noise rate, up to sampling error
    assert sorted(perm.tolist()) == list(range(N_SPECIAL, CFG.vocab_size))


def test_batches_are_deterministic_in_the_seed():
    for task in ("local", "recall", "copy"):
        assert torch.equal(make_batch(task, CFG, 4, 7).ids, make_batch(task, CFG, 4, 7).ids)
        assert not torch.equal(make_batch(task, CFG, 4, 7).ids, make_batch(task, CFG, 4, 8).ids)


def test_impossible_task_configs_are_explained():
    with pytest.raises(ValueError, match="n_pairs"):
        make_batch("recall", TaskConfig(seq_len=40, n_pairs=16), 1, 0)
    with pytest.raises(ValueError, match="unknown task"):
        make_batch("sort", CFG, 1, 0)
    with pytest.raises(ValueError, match="seq_lenn"):
        TaskConfig.from_dict({"seq_lenn": 3})
