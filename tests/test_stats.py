"""The bootstrap interval and the paired tests against scipy's own on fixed inputs, and the
agreement statistics against their published worked examples."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats.agreement import cohen_kappa, fleiss_kappa, leniency, rating_counts
from harness.stats.bootstrap import bootstrap_mean
from harness.stats.paired import mcnemar_exact, minimum_detectable, paired_difference

stats = pytest.importorskip("scipy.stats")

SCORES = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0.5, 1, 0, 1, 1, 1, 0, 1, 1, 0.0])


def test_bootstrap_matches_scipy_percentile_with_the_same_seed() -> None:
    ours = bootstrap_mean(SCORES, n_resamples=1999, seed=7)
    theirs = stats.bootstrap((SCORES,), np.mean, method="percentile", n_resamples=1999,
                             rng=np.random.default_rng(7), vectorized=True)
    assert ours.estimate == pytest.approx(SCORES.mean())
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=1e-12)
    assert "percentile bootstrap" in ours.method and "seed 7" in ours.method


def test_cluster_bootstrap_resamples_whole_clusters() -> None:
    # Two clusters: every resample is (c1, c1), (c1, c2), (c2, c1) or (c2, c2), so the resampled
    # means can only be the cluster means or the pooled mean.
    values = [1, 1, 1, 0, 0, 0, 0, 0]
    clusters = ["a", "a", "a", "a", "b", "b", "b", "b"]
    interval = bootstrap_mean(values, clusters, unit="conversation", n_resamples=500, seed=1)
    assert interval.clusters == 2 and interval.n == 8
    assert interval.low == pytest.approx(0.0) and interval.high == pytest.approx(0.75)
    assert "conversations" in interval.method


def test_bootstrap_leaves_unscored_questions_out() -> None:
    interval = bootstrap_mean([1, np.nan, 0, 1], n_resamples=100)
    assert interval.n == 3 and interval.estimate == pytest.approx(2 / 3)


A = np.array([0.9, 0.4, 0.75, 1.0, 0.3, 0.8, 0.65, 0.2, 0.95, 0.5, 0.7, 0.6])
B = np.array([0.7, 0.5, 0.55, 0.8, 0.35, 0.6, 0.6, 0.1, 0.9, 0.45, 0.5, 0.65])


def test_paired_permutation_matches_scipy_exact() -> None:
    ours = paired_difference(A, B, n_resamples=999, seed=3)
    theirs = stats.permutation_test((A, B), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
                                    permutation_type="samples", n_resamples=np.inf)
    assert ours.test == "exact paired permutation"
    assert ours.p_value == pytest.approx(theirs.pvalue, abs=1e-12)
    assert ours.difference.estimate == pytest.approx(np.mean(A - B))


def test_paired_interval_matches_scipy_paired_bootstrap() -> None:
    ours = paired_difference(A, B, n_resamples=1999, seed=11)
    theirs = stats.bootstrap((A - B,), np.mean, method="percentile", n_resamples=1999,
                             rng=np.random.default_rng(11), vectorized=True)
    assert ours.difference.low == pytest.approx(theirs.confidence_interval.low, abs=1e-12)
    assert ours.difference.high == pytest.approx(theirs.confidence_interval.high, abs=1e-12)


@pytest.mark.parametrize("b,c", [(9, 2), (3, 3), (0, 6), (15, 4), (40, 25)])
def test_mcnemar_exact_is_scipys_binomial_test(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, abs=1e-12)


def test_paired_binary_scores_get_mcnemar() -> None:
    x = np.array([1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1])
    y = np.array([0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0])
    result = paired_difference(x, y, n_resamples=500)
    assert result.discordant == (7, 1)
    assert result.mcnemar_p == pytest.approx(stats.binomtest(7, 8, 0.5).pvalue)
    # Many clusters: Monte Carlo with the (count + 1) / (B + 1) rule, close to the exact figure.
    many = paired_difference(np.tile(x, 2), np.tile(y, 2), n_resamples=4000, seed=5)
    exact = stats.permutation_test((np.tile(x, 2), np.tile(y, 2)), lambda u, v, axis: np.mean(u - v, axis=axis),
                                   vectorized=True, permutation_type="samples", n_resamples=20000,
                                   rng=np.random.default_rng(0))
    assert many.test.startswith("paired permutation (4,000")
    assert many.p_value == pytest.approx(exact.pvalue, abs=0.01)


def test_minimum_detectable_difference_is_2_8_standard_errors() -> None:
    assert minimum_detectable(1.0) == pytest.approx(stats.norm.ppf(0.975) + stats.norm.ppf(0.8))


def test_cohen_kappa_worked_example() -> None:
    # Wikipedia's "Cohen's kappa" example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> 0.4.
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_fleiss_kappa_worked_example() -> None:
    # Fleiss (1971) as worked in Wikipedia's "Fleiss' kappa": 10 items, 14 raters, 5 labels -> 0.210.
    counts = np.array([
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ])
    assert fleiss_kappa(counts) == pytest.approx(0.20993, abs=1e-5)
    assert rating_counts([[True, True], [True, False]]).tolist() == [[0, 2], [1, 1]]


def test_leniency_is_the_accepted_share() -> None:
    assert leniency([True, False, None, True]) == pytest.approx(2 / 3)
