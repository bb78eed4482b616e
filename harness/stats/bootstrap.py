"""Percentile bootstrap intervals of a mean, resampling whole clusters (conversations, episodes).

Questions of one LoCoMo conversation share their history, so their scores are not independent:
resampling single questions would make the interval too narrow. Here the unit resampled is the
cluster (a conversation or episode); its questions come along together and the statistic is the
mean over every question of the resample (a ratio of sums). With one question per cluster this is
the ordinary bootstrap, and it draws its indices exactly as ``scipy.stats.bootstrap`` does
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

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def text(self, digits: int = 1, scale: float = 1.0) -> str:
        """``72.4 [70.1, 74.6]`` (``scale`` multiplies every figure, e.g. 100 for a share)."""
        if math.isnan(self.estimate):
            return "—"
        return (f"{self.estimate * scale:.{digits}f} "
                f"[{self.low * scale:.{digits}f}, {self.high * scale:.{digits}f}]")


def method_text(unit: str, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                confidence: float = CONFIDENCE) -> str:
    """The footnote that names the method."""
    return (f"{confidence:.0%} percentile bootstrap over {unit}s (whole {unit}s resampled), "
            f"{n_resamples:,} resamples, seed {seed}")


def cluster_totals(values: Sequence[float], clusters: Sequence[Hashable] | None) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster: the sum of its values and its question count, clusters in first-seen order.
    ``clusters`` None: each value is its own cluster. NaN values must be dropped before."""
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


def resample_indices(rng: np.random.Generator, units: int, n_resamples: int):
    """Batches of bootstrap index rows, drawn as scipy draws them (one row per resample)."""
    done = 0
    while done < n_resamples:
        size = min(BATCH, n_resamples - done)
        yield rng.integers(0, units, (size, units))
        done += size


def bootstrap_distribution(sums: np.ndarray, counts: np.ndarray, n_resamples: int = DEFAULT_RESAMPLES,
                           seed: int = DEFAULT_SEED) -> np.ndarray:
    """The resampled means (sum of the drawn clusters' sums over the sum of their counts)."""
    rng = np.random.default_rng(seed)
    parts = [sums[i].sum(axis=1) / counts[i].sum(axis=1) for i in resample_indices(rng, len(sums), n_resamples)]
    return np.concatenate(parts) if parts else np.array([])


def percentile_interval(distribution: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    alpha = (1 - confidence) / 2
    low, high = np.quantile(distribution, [alpha, 1 - alpha])
    return float(low), float(high)


def bootstrap_mean(values: Sequence[float], clusters: Sequence[Hashable] | None = None, unit: str = "question",
                   n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   confidence: float = CONFIDENCE) -> Interval:
    """The mean of ``values`` with its percentile bootstrap interval, clusters resampled whole.
    NaN values (unscored questions) are left out, as the tables' means leave them out."""
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
