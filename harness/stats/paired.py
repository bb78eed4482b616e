"""Two runs on the same questions: the paired difference with its cluster-bootstrap interval; a
sign-flip permutation p over whole clusters (exact up to ``EXACT_CLUSTERS``, as scipy's
``permutation_test(permutation_type="samples")``, else Monte Carlo (count + 1) / (resamples + 1));
McNemar's exact p for 0/1 scores (as ``scipy.stats.binomtest(b, b + c, 0.5)``; questions taken as
independent); and the minimum detectable difference, (z_0.975 + z_0.8) = 2.80 bootstrap SEs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from harness.stats.bootstrap import (
    CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, bootstrap_distribution, cluster_totals, method_text,
    percentile_interval,
)

EXACT_CLUSTERS = 16  # up to 65,536 sign assignments are enumerated
POWER = 0.8
_TOLERANCE = 1e-12  # relative: a null statistic this close to the observed one counts as equal


@dataclass(frozen=True)
class PairedResult:
    """Run A minus run B on the questions both scored."""

    n: int
    mean_a: float
    mean_b: float
    difference: Interval
    p_value: float
    test: str
    mcnemar_p: float | None  # None unless every score is 0 or 1
    discordant: tuple[int, int] | None  # (A right B wrong, A wrong B right) for 0/1 scores
    mde: float


def _aligned(a: Sequence[float], b: Sequence[float], clusters: Sequence[Hashable] | None):
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"the two runs hold {len(x)} and {len(y)} scores: pair them by question first")
    keep = ~(np.isnan(x) | np.isnan(y))
    labels = None if clusters is None else [c for c, k in zip(clusters, keep) if k]
    return x[keep], y[keep], labels


def _two_sided(null: np.ndarray, observed: float, adjustment: int) -> float:
    gamma = abs(observed) * _TOLERANCE
    less = ((null <= observed + gamma).sum() + adjustment) / (len(null) + adjustment)
    greater = ((null >= observed - gamma).sum() + adjustment) / (len(null) + adjustment)
    return float(min(1.0, 2 * min(less, greater)))


def permutation_p(sums: np.ndarray, total: float, n_resamples: int = DEFAULT_RESAMPLES,
                  seed: int = DEFAULT_SEED) -> tuple[float, str]:
    observed = sums.sum() / total
    if len(sums) <= EXACT_CLUSTERS:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(sums))))
        return _two_sided(signs @ sums / total, observed, 0), "exact paired permutation"
    rng = np.random.default_rng(seed)
    signs = rng.choice((1.0, -1.0), size=(n_resamples, len(sums)))
    return _two_sided(signs @ sums / total, observed, 1), f"paired permutation ({n_resamples:,} resamples)"


def mcnemar_exact(b: int, c: int) -> float:
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2 ** n
    return float(min(1.0, 2 * tail))


def minimum_detectable(standard_error: float, alpha: float = 1 - CONFIDENCE, power: float = POWER) -> float:
    """The true difference a two-sided test at ``alpha`` finds with probability ``power``."""
    z = NormalDist().inv_cdf
    return (z(1 - alpha / 2) + z(power)) * standard_error


def paired_difference(a: Sequence[float], b: Sequence[float], clusters: Sequence[Hashable] | None = None,
                      unit: str = "question", n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      confidence: float = CONFIDENCE) -> PairedResult:
    """A minus B over the questions both scored (NaN on either side: left out)."""
    x, y, labels = _aligned(a, b, clusters)
    method = method_text(unit, n_resamples, seed, confidence)
    if len(x) == 0:
        empty = Interval(math.nan, math.nan, math.nan, 0, 0, method)
        return PairedResult(0, math.nan, math.nan, empty, math.nan, "none", None, None, math.nan)
    sums, counts = cluster_totals(x - y, labels)
    distribution = bootstrap_distribution(sums, counts, n_resamples, seed)
    low, high = percentile_interval(distribution, confidence)
    estimate = float(sums.sum() / counts.sum())
    difference = Interval(estimate, low, high, len(x), len(sums), method)
    p_value, test = permutation_p(sums, counts.sum(), n_resamples, seed)
    binary = bool(np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all())
    discordant = (int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())) if binary else None
    mcnemar = mcnemar_exact(*discordant) if discordant is not None else None
    se = float(np.std(distribution, ddof=1)) if len(distribution) > 1 else math.nan
    return PairedResult(len(x), float(x.mean()), float(y.mean()), difference, p_value, test, mcnemar, discordant,
                        minimum_detectable(se, 1 - confidence))
