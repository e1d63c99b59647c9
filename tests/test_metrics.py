"""Leaderboard metrics against values computed by hand."""

import math

import numpy as np
import pytest

from kernelbench_verified.leaderboard.metrics import (best_of_n, bootstrap_intervals, geomean, pass_at_k, per_sample, pool,
                                          sample_table, summarize)

nan = float("nan")

# Four problems, two samples each (speedups of correct samples; memory = baseline / kernel peak bytes):
#   p0: both correct, 4.0x (mem 0.5) and 2.0x (mem 2.0)  -> best 4.0x, mem 0.5
#   p1: sample 0 correct 0.5x (mem 1.0), sample 1 did not compile
#   p2: both compiled, both incorrect
#   p3: sample 1 correct 1.5x (mem 4.0); sample 0 did not compile
TABLE = sample_table(
    correct=[[True, True], [True, False], [False, False], [False, True]],
    compiled=[[True, True], [True, False], [True, True], [False, True]],
    speedup=[[4.0, 2.0], [0.5, nan], [3.0, 3.0], [nan, 1.5]],   # p2's speedups are dropped: incorrect
    memory_ratio=[[0.5, 2.0], [1.0, nan], [9.0, 9.0], [nan, 4.0]],
)


def test_best_of_n_picks_the_fastest_correct_sample_and_its_memory():
    outcomes = best_of_n(TABLE)
    assert outcomes.solved.tolist() == [True, True, False, True]
    assert outcomes.best_sample.tolist() == [0, 0, -1, 1]
    assert outcomes.speedup[[0, 1, 3]].tolist() == [4.0, 0.5, 1.5]
    assert outcomes.memory_ratio[[0, 1, 3]].tolist() == [0.5, 1.0, 4.0]


def test_summary_matches_hand_computed_values():
    summary = summarize(TABLE)
    assert summary["correct"] == 0.75 and summary["compiled"] == 1.0 and summary["num_correct"] == 3
    # speedups of solved problems: 4.0, 0.5, 1.5; Fast@p counts speedup > p over all 4 problems
    assert summary["fast_p"] == {"0": 0.75, "0.5": 0.5, "0.8": 0.5, "1": 0.5, "1.5": 0.25, "2": 0.25}
    assert summary["correct_speedup"] == pytest.approx((4.0 * 0.5 * 1.5) ** (1 / 3))
    assert summary["kernelbench_speedup"] == pytest.approx((4.0 * 1.0 * 1.0 * 1.5) ** (1 / 4))
    assert summary["memory_efficiency"] == pytest.approx((0.5 * 1.0 * 4.0) ** (1 / 3))
    assert summary["less_memory"] == pytest.approx(1 / 3)   # only p3 uses less memory than the baseline


def test_per_sample_mean_and_std_over_sample_indices():
    spread = per_sample(TABLE)
    # sample 0: correct p0, p1 -> 0.5; sample 1: p0, p3 -> 0.5
    assert spread["correct"] == {"mean": 0.5, "std": 0.0}
    # compiled: sample 0 -> 3/4, sample 1 -> 3/4
    assert spread["compiled"]["mean"] == 0.75
    # Fast@1: sample 0 -> p0 (4.0) = 1/4; sample 1 -> p0 (2.0), p3 (1.5) = 2/4
    assert spread["fast_1"]["mean"] == pytest.approx(0.375)
    assert spread["fast_1"]["std"] == pytest.approx(np.std([0.25, 0.5], ddof=1))
    speedups = [math.sqrt(4.0 * 0.5), math.sqrt(2.0 * 1.5)]
    assert spread["correct_speedup"]["mean"] == pytest.approx(np.mean(speedups))


def test_fast_1_beyond_noise_needs_more_than_identical_code_reached():
    """p0's 4.0x beats its bound of 1.3x; p3's 1.5x does not beat 1.6x; p1 (0.5x) is slower anyway. A
    problem without a bound needs only > 1. No bound at all: the figure is not claimed (NaN)."""
    from dataclasses import replace

    bounded = replace(TABLE, noise_bound=np.array([1.3, nan, 1.1, 1.6]))
    assert summarize(bounded)["fast_1_beyond_noise"] == 0.25
    assert summarize(replace(TABLE, noise_bound=np.array([1.3, nan, 1.1, nan])))["fast_1_beyond_noise"] == 0.5
    assert math.isnan(summarize(TABLE)["fast_1_beyond_noise"])
    pooled = pool([bounded, sample_table([[True]], [[True]], [[3.0]], [[1.0]])])  # a table with no bounds
    assert pooled.noise_bound.shape == (5,) and summarize(pooled)["fast_1_beyond_noise"] == pytest.approx(2 / 5)


def test_pool_pads_missing_samples_as_failures():
    one_sample = sample_table([[True]], [[True]], [[3.0]], [[1.0]])
    pooled = pool([TABLE, one_sample])
    assert pooled.correct.shape == (5, 2) and not pooled.correct[4, 1] and not pooled.compiled[4, 1]
    summary = summarize(pooled)
    assert summary["correct"] == pytest.approx(4 / 5)
    assert summary["correct_speedup"] == pytest.approx((4.0 * 0.5 * 1.5 * 3.0) ** (1 / 4))


def test_geomean_ignores_missing_values_and_is_nan_when_empty():
    assert geomean([2.0, 8.0, nan]) == pytest.approx(4.0)
    assert math.isnan(geomean([])) and math.isnan(geomean([nan]))


def test_empty_and_unsolved_tables():
    unsolved = sample_table([[False, False]], [[False, True]], [[nan, nan]], [[nan, nan]])
    summary = summarize(unsolved)
    assert summary["correct"] == 0.0 and summary["compiled"] == 1.0 and summary["kernelbench_speedup"] == 1.0
    assert math.isnan(summary["correct_speedup"]) and math.isnan(summary["memory_efficiency"])
    intervals = bootstrap_intervals(unsolved, num_resamples=50)
    assert math.isnan(intervals["correct_speedup"][0]) and intervals["fast_1"] == [0.0, 0.0]


def test_bootstrap_intervals_bracket_the_estimate_and_are_reproducible():
    rng = np.random.default_rng(1)
    speed = rng.lognormal(0.2, 0.5, size=(200, 1))
    correct = rng.random((200, 1)) < 0.7
    table = sample_table(correct, correct, speed, speed * 0 + 1.2)
    summary = summarize(table)
    intervals = bootstrap_intervals(table, num_resamples=500, seed=3)
    low, high = intervals["correct_speedup"]
    assert low < summary["correct_speedup"] < high and high / low < 1.5
    assert intervals["fast_1"][0] < summary["fast_p"]["1"] < intervals["fast_1"][1]
    assert intervals["memory_efficiency"] == pytest.approx([1.2, 1.2])   # no spread, no interval width
    assert bootstrap_intervals(table, num_resamples=500, seed=3) == intervals
    # a constant sample: every resample gives the same value
    constant = sample_table([[True]] * 5, [[True]] * 5, [[2.0]] * 5, [[nan]] * 5)
    assert bootstrap_intervals(constant, num_resamples=100)["correct_speedup"] == pytest.approx([2.0, 2.0])


def test_pass_at_k_is_the_unbiased_estimate_for_k_up_to_the_samples():
    correct = np.array([[True, False, False, False, False], [True] * 5, [False] * 5])
    assert pass_at_k(correct, 1) == pytest.approx((1 / 5 + 1 + 0) / 3)
    # two of five drawn from one correct: 1 - C(4,2)/C(5,2) = 1 - 6/10
    assert pass_at_k(correct, 2) == pytest.approx((0.4 + 1 + 0) / 3)
    assert pass_at_k(correct, 5) == pytest.approx(2 / 3)
    assert np.isnan(pass_at_k(correct, 10))
    table = sample_table(correct, correct, np.where(correct, 1.0, np.nan), np.full(correct.shape, np.nan))
    assert list(summarize(table)["pass_at_k"]) == ["1", "5"]  # pass@10 needs ten samples
