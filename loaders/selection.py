"""Keeping a subset of questions: by category and up to a total limit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from memory_protocol import DatasetError, Episode, Question


@dataclass(frozen=True)
class Selection:
    """Which questions to keep: ``categories`` (None = all) and at most ``limit`` in total (None = all)."""

    limit: int | None = None
    categories: frozenset[str] | None = None


def category_keys(question: Question) -> set[str]:
    """Names a question can be selected by: its category, and its numeric id when the dataset has one."""
    keys = {question.category}
    if "category_id" in question.meta:
        keys.add(str(question.meta["category_id"]))
    return keys


def make_selection(
    dataset: str, limit: int | None, categories: Sequence[str] | None, valid: Sequence[str]
) -> Selection:
    """Validate ``limit`` and ``categories`` against the dataset's known categories."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise DatasetError(dataset, f"limit must be a non-negative integer or null, got {limit!r}", field_name="limit")
    if categories is None:
        return Selection(limit, None)
    if isinstance(categories, str):
        categories = [categories]
    wanted = [str(c) for c in categories]
    unknown = [c for c in wanted if c not in valid]
    if unknown:
        raise DatasetError(dataset, f"unknown categories {unknown}; valid categories: {list(valid)}",
                           field_name="categories")
    return Selection(limit, frozenset(wanted))


def select(episodes: Iterable[Episode], selection: Selection, keep_empty: bool = False) -> list[Episode]:
    """Filter questions, keep at most ``limit`` in episode order, drop episodes left without questions.

    Consumption of ``episodes`` stops once the limit is reached, so lazy loaders build no more.
    ``keep_empty`` keeps episodes whose questions were all filtered out (OrgMemBench's single corpus).
    """
    if selection.limit == 0 and not keep_empty:
        return []
    kept: list[Episode] = []
    remaining = selection.limit
    for episode in episodes:
        questions = [q for q in episode.questions
                     if selection.categories is None or category_keys(q) & selection.categories]
        if remaining is not None:
            questions = questions[:remaining]
            remaining -= len(questions)
        if questions or keep_empty:
            kept.append(replace(episode, questions=tuple(questions)))
        if remaining is not None and remaining <= 0:
            break
    return kept
