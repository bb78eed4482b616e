"""A tsquery tree (``memplusplus.websearch_query``) against one document's lexeme positions:
whether ``tsvector @@ tsquery`` holds, and ``ts_rank_cd(tsvector, tsquery)``.

Restated from Postgres 18 (``TS_execute``, ``TS_phrase_execute``, tsrank.c ``Cover`` and
``calc_rank_cd``), checked against a live Postgres in tests/test_websearch_query.py:

- AND, OR and NOT are the usual logic over "the document holds this lexeme"; a phrase
  ``a <N> b`` holds where ``b`` sits exactly N positions after ``a`` (a phrase of phrases chains
  the offsets: ``a <-> b <-> c`` needs three consecutive positions).
- ``ts_rank_cd``: the document's positions of the query's lexemes, in order, are scanned for
  covers. A cover ends at the first position where the query holds over the positions read since
  the scan's start, and begins at the last position, reading backwards from that end, where it
  holds again; the next scan starts just after the cover's first entry (a failed backward read
  starts one entry later). Each cover adds 0.1 / (1 + noise), noise being the positions inside the
  cover that hold no query lexeme. The sum is returned as a 4-byte float, as Postgres does, so
  equal scores tie exactly as they do in SQL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from memplusplus.websearch_query import AND, OR, PHRASE, Binary, Lexeme, Node, Not

# Postgres' weight of an unlabelled (D) position, a float4, and its inverse as calc_rank_cd sums it.
_WEIGHT_D = float(np.float32(0.1))
_INVERSE_WEIGHT_D = 1.0 / _WEIGHT_D


def _phrase_positions(node: Node, positions: Mapping[str, Sequence[int]]) -> tuple[list[int], int]:
    """Positions where a phrase (or a lexeme) ends, and its width."""
    if isinstance(node, Lexeme):
        return sorted(positions.get(node.text, ())), 0
    if not isinstance(node, Binary) or node.op != PHRASE:
        raise ValueError("websearch queries put only lexemes inside a phrase")
    left, left_width = _phrase_positions(node.left, positions)
    right, right_width = _phrase_positions(node.right, positions)
    offset = node.distance + right_width
    starts = set(left)
    return [p for p in right if p - offset in starts], node.distance + left_width + right_width


def holds(node: Node, positions: Mapping[str, Sequence[int]]) -> bool:
    """``tsvector @@ tsquery`` for a document given as lexeme -> positions."""
    if isinstance(node, Lexeme):
        return bool(positions.get(node.text))
    if isinstance(node, Not):
        return not holds(node.child, positions)
    if node.op == AND:
        return holds(node.left, positions) and holds(node.right, positions)
    if node.op == OR:
        return holds(node.left, positions) or holds(node.right, positions)
    return bool(_phrase_positions(node, positions)[0])


def _entries(positions: Mapping[str, Sequence[int]], lexemes: Sequence[str]) -> list[tuple[int, str]]:
    """The document's (position, lexeme) of the query's lexemes, in position order."""
    return sorted((pos, lexeme) for lexeme in set(lexemes) for pos in set(positions.get(lexeme, ())))


def ts_rank_cd(node: Node, lexemes: Sequence[str], positions: Mapping[str, Sequence[int]]) -> float:
    """``ts_rank_cd`` with default weights and normalisation 0, as a float4 value."""
    doc = _entries(positions, lexemes)
    total = 0.0
    start = 0
    while start < len(doc):
        end = None
        seen: dict[str, list[int]] = {}
        for index in range(start, len(doc)):
            pos, lexeme = doc[index]
            seen.setdefault(lexeme, []).append(pos)
            if holds(node, seen):
                end = index
                break
        if end is None:
            break
        begin = None
        seen = {}
        for index in range(end, start - 1, -1):
            pos, lexeme = doc[index]
            seen.setdefault(lexeme, []).insert(0, pos)
            if holds(node, seen):
                begin = index
                break
        if begin is None:
            start += 1
            continue
        entries_between = end - begin
        noise = (doc[end][0] - doc[begin][0]) - entries_between
        if noise < 0:
            noise = entries_between // 2
        inverse_sum = 0.0
        for _ in range(entries_between + 1):
            inverse_sum += _INVERSE_WEIGHT_D
        total += ((entries_between + 1) / inverse_sum) / (1 + noise)
        start = begin + 1
    return float(np.float32(total))
