"""``in_budget_gold_chars``: the share of the gold artefacts' own characters that lie inside the first
``budget`` characters of the rendered context (``in_budget_recall`` counts a 9,000-character artefact
in full when only its first line is read). A gold id counts once; one never rendered reads 0 but stays
in the denominator; headers, separators and rank numbers never count; a span rendered twice counts
once. The caller passes each document's character spans (:func:`document_spans` builds them).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

NAN = float("nan")

Span = tuple[int, int]

__all__ = ["BlockLayout", "chars_inside", "document_spans", "in_budget_gold_chars"]


@dataclass(frozen=True)
class BlockLayout:
    """A rendered block's start in the context, its length, and where each document's text starts in it.
    A document runs to the next one's start or the block's end; where a chunk's offsets point at a
    header (the RAG baseline's do), that header and separator count too (a few dozen characters)."""

    start: int
    length: int
    sources: tuple[tuple[str, int], ...]


def document_spans(blocks: Sequence[BlockLayout]) -> dict[str, list[Span]]:
    """doc id -> the ``[start, end)`` spans of the full context attributed to its text."""
    spans: dict[str, list[Span]] = {}
    for block in blocks:
        ordered = sorted(block.sources, key=lambda source: source[1])
        for index, (doc_id, inner) in enumerate(ordered):
            end = ordered[index + 1][1] if index + 1 < len(ordered) else block.length
            if end > inner:
                spans.setdefault(doc_id, []).append((block.start + inner, block.start + end))
    return spans


def chars_inside(spans: Sequence[Span], budget: int | None) -> int:
    """Characters covered by the union of ``spans`` that lie before ``budget`` (None: no cut)."""
    limit = math.inf if budget is None else budget
    clipped = sorted((start, min(end, limit)) for start, end in spans if start < limit and end > start)
    covered, reach = 0, -1
    for start, end in clipped:
        start = max(start, reach)
        if end > start:
            covered += int(end - start)
            reach = int(end)
    return covered


def in_budget_gold_chars(gold: Collection[str], spans: Mapping[str, Sequence[Span]], lengths: Mapping[str, int],
                         budget: int | None) -> float:
    """``lengths``: each gold artefact's text length (a gold id without one is an error); NaN when
    there is no gold text."""
    if budget is not None and budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    gold_set = set(gold)
    unknown = sorted(g for g in gold_set if g not in lengths)
    if unknown:
        raise ValueError(f"gold id(s) {unknown[:3]} have no known text length")
    total = sum(lengths[g] for g in gold_set)
    if total == 0:
        return NAN
    read = sum(min(lengths[g], chars_inside(spans.get(g, ()), budget)) for g in gold_set)
    return read / total
