"""Agreement between judges: Cohen's kappa (Cohen 1960; p_e from each judge's own label shares),
Fleiss' kappa (Fleiss 1971; p_e from the pooled shares), and a judge's leniency (false-accept rate)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two label sequences on the same items (NaN when chance agreement is total)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} and {len(b)} labels: the judges must grade the same answers")
    if not a:
        return math.nan
    labels = sorted(set(a) | set(b), key=str)
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b)) / n
    expected = sum((list(a).count(k) / n) * (list(b).count(k) / n) for k in labels)
    return math.nan if expected == 1 else (observed - expected) / (1 - expected)


def rating_counts(ratings: Sequence[Sequence[Hashable]]) -> np.ndarray:
    """Items x labels: how many judges gave each label to each item (every item: the same judges)."""
    labels = sorted({label for row in ratings for label in row}, key=str)
    column = {label: j for j, label in enumerate(labels)}
    counts = np.zeros((len(ratings), len(labels)))
    for i, row in enumerate(ratings):
        for label in row:
            counts[i, column[label]] += 1
    return counts


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa from an items x labels matrix of counts (each row sums to the raters per item)."""
    counts = np.asarray(counts, dtype=float)
    if counts.size == 0:
        return math.nan
    raters = counts.sum(axis=1)
    if not np.all(raters == raters[0]) or raters[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (at least 2) of ratings for every item")
    r = raters[0]
    shares = counts.sum(axis=0) / counts.sum()
    per_item = ((counts * (counts - 1)).sum(axis=1)) / (r * (r - 1))
    p_bar, p_e = per_item.mean(), float((shares ** 2).sum())
    return math.nan if p_e == 1 else float((p_bar - p_e) / (1 - p_e))


def leniency(accepted: Sequence[bool | float | None]) -> float:
    """The share of deliberately wrong answers accepted (None: an ungraded answer, left out)."""
    values = [float(v) for v in accepted if v is not None]
    return math.nan if not values else sum(values) / len(values)
