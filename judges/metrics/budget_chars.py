"""How much of the gold evidence's text the answerer actually reads: ``in_budget_gold_chars``.

``in_budget_recall`` counts a gold artefact as seen when its block *starts* inside the budget, so
a 9,000-character artefact whose first line is the last thing read counts in full. This metric
counts characters instead:

    in_budget_gold_chars = sum over distinct gold ids g of  read(g)
                           ---------------------------------------------
                           sum over distinct gold ids g of  len(text of g)

where ``read(g)`` is the number of characters of g's own text that lie inside the first ``budget``
characters of the rendered context (all of them when there is no budget), capped at ``len(text
of g)``. A gold artefact never rendered reads 0 characters but still counts in the denominator;
headers, separators and rank numbers are not the artefact's text and never count. A gold id named
twice counts once. Rendering a gold artefact cut short can only lower ``read(g)``, never raise it,
and rendering it twice (overlapping spans of the same place) counts its characters once.

Nothing here knows how a context is rendered: the caller passes, for each document, the
character spans of the full rendered context that hold that document's own text
(:func:`document_spans` builds them from a plain block layout).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

NAN = float("nan")

Span = tuple[int, int]

__all__ = ["BlockLayout", "document_spans", "chars_inside", "in_budget_gold_chars"]


@dataclass(frozen=True)
class BlockLayout:
    """One rendered block: where it starts in the full context, its length, and where each
    document's own text starts inside it (offsets relative to the block's start).

    A stored row is one source whose text is the block's tail; a chunk lists every document it
    holds in order, each running to the next one's start or to the block's end. Where a chunk's
    source offsets point at a document's header rather than its text (the RAG baseline's do), the
    header and the separator after the text are attributed to it too (a few dozen characters per
    document, never more than its text's length in total).
    """

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


def in_budget_gold_chars(
    gold: Collection[str],
    spans: Mapping[str, Sequence[Span]],
    lengths: Mapping[str, int],
    budget: int | None,
) -> float:
    """The share of the gold artefacts' characters read within ``budget`` (see the module docstring).

    ``lengths`` gives each gold artefact's full text length; a gold id missing from it is an error
    (the loaders keep only gold ids of the corpus). NaN when there is no gold or it has no text.
    """
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
