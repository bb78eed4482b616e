"""Percentile bootstrap intervals of a mean, resampling whole clusters (conversations, episodes).

Questions of one LoCoMo conversation share their history, so resampling single questions would make
the interval too narrow; the statistic is the mean over every question of the resampled clusters.
With one question per cluster the indices are drawn as ``scipy.stats.bootstrap`` draws them
(``rng.integers(0, n, (n_resamples, n))``), so the two agree to the last digit with the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20_240_617  # fixed: the same records always give the same interval
CONFIDENCE = 0.95
BATCH = 2_000  # resamples drawn at a time (bounds memory for 1,540 single-question clusters)


@dataclass(frozen=True)
class Interval:
    """A point estimate with its two-sided interval; ``method`` says how it was made."""

    estimate: float
    low: float
    high: float
    n: int
    clusters: int
    method: str


def method_text(unit: str, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                confidence: float = CONFIDENCE) -> str:
    return (f"{confidence:.0%} percentile bootstrap over {unit}s (whole {unit}s resampled), "
            f"{n_resamples:,} resamples, seed {seed}")


def cluster_totals(values: Sequence[float], clusters: Sequence[Hashable] | None) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster (first-seen order; None: one per value): the sum of its values and their count."""
    data = np.asarray(values, dtype=float)
    if clusters is None:
        return data, np.ones_like(data)
    if len(clusters) != len(data):
        raise ValueError(f"{len(data)} values but {len(clusters)} cluster labels")
    order: dict[Hashable, int] = {}
    index = np.array([order.setdefault(c, len(order)) for c in clusters], dtype=int)
    sums = np.bincount(index, weights=data, minlength=len(order))
    counts = np.bincount(index, minlength=len(order)).astype(float)
    return sums, counts


def bootstrap_distribution(sums: np.ndarray, counts: np.ndarray, n_resamples: int = DEFAULT_RESAMPLES,
                           seed: int = DEFAULT_SEED) -> np.ndarray:
    """The resampled means, index rows drawn in batches as scipy draws them (one row a resample)."""
    rng = np.random.default_rng(seed)
    parts = []
    for done in range(0, n_resamples, BATCH):
        i = rng.integers(0, len(sums), (min(BATCH, n_resamples - done), len(sums)))
        parts.append(sums[i].sum(axis=1) / counts[i].sum(axis=1))
    return np.concatenate(parts) if parts else np.array([])


def percentile_interval(distribution: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    alpha = (1 - confidence) / 2
    low, high = np.quantile(distribution, [alpha, 1 - alpha])
    return float(low), float(high)


def bootstrap_mean(values: Sequence[float], clusters: Sequence[Hashable] | None = None, unit: str = "question",
                   n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   confidence: float = CONFIDENCE) -> Interval:
    """The mean of ``values`` with its interval; NaN (unscored) values are left out, as in the tables."""
    data = np.asarray(values, dtype=float)
    keep = ~np.isnan(data)
    labels = None if clusters is None else [c for c, k in zip(clusters, keep) if k]
    sums, counts = cluster_totals(data[keep], labels)
    method = method_text(unit, n_resamples, seed, confidence)
    if counts.sum() == 0:
        return Interval(math.nan, math.nan, math.nan, 0, 0, method)
    estimate = float(sums.sum() / counts.sum())
    low, high = percentile_interval(bootstrap_distribution(sums, counts, n_resamples, seed), confidence)
    return Interval(estimate, low, high, int(counts.sum()), len(sums), method)
