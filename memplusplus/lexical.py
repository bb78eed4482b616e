"""The lexical leg, one stack: match rows against a tsquery tree and rank them by ``ts_rank_cd``.

The paper's leg follows the authors' code (AIDAChip-Inc/mem-plus-plus @9196597, memory/store.py):
rows hold ``to_tsvector('english', text)`` (``memplusplus.english_tsearch``); LoCoMo's disjunctive
leg ORs the first 8 question words of 3+ characters off their own stop list (store.py:47-50, 69-72,
373-377; the 8 and 3 are ``max_query_terms``/``min_term_chars`` in configs/dataset/locomo.yaml),
stemmed by ``to_tsquery('english')``; the conjunctive leg, and the disjunctive one when no word is
left, sends the whole question through ``websearch_to_tsquery`` (store.py:379,
``memplusplus.websearch_query``). Rows where the query holds rank by ``ts_rank_cd`` best first,
equal scores the later-written row first (store.py:380-384). Mem++ plus's any-term leg ranks our
own stems (``memplusplus.text``) the same way, or by BM25 (``bm25s``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from memplusplus.english_tsearch import query_lexemes
from memplusplus.store import RowStore
from memplusplus.text import stems
from memplusplus.websearch_query import AND, OR, PHRASE, Binary, Lexeme, Node, Not, WebsearchQuery

Positions = Mapping[str, Sequence[int]]

# The authors' own stop list for question words (store.py:47-50), applied before the cut to the
# first max_query_terms words; Postgres' English stop list is applied after it.
AUTHORS_QUERY_STOP_WORDS: frozenset[str] = frozenset(
    "the and for with what how did was were you about tell this that are can".split()
)
_QUESTION_WORD = re.compile(r"[a-z0-9]+")
# Postgres' weight of an unlabelled (D) position, a float4, and its inverse as calc_rank_cd sums it.
_WEIGHT_D = float(np.float32(0.1))
_INVERSE_WEIGHT_D = 1.0 / _WEIGHT_D


def authors_query_words(question: str, min_chars: int, max_terms: int | None) -> list[str]:
    """The question words the authors' OR query is built from, in order (repeats kept)."""
    words = [w for w in _QUESTION_WORD.findall(question.lower()) if len(w) >= min_chars and w not in AUTHORS_QUERY_STOP_WORDS]
    return words if max_terms is None else words[:max_terms]


def authors_or_terms(question: str, min_chars: int, max_terms: int | None) -> list[str]:
    """The lexemes of the authors' OR query for ``question`` (distinct, in order)."""
    return query_lexemes(authors_query_words(question, min_chars, max_terms))


def or_lexemes(question: str, conjunctive: bool, min_chars: int, max_terms: int | None) -> list[str] | None:
    """The authors' OR query's lexemes, or None where they send the whole question through
    ``websearch_to_tsquery`` instead (the conjunctive leg, or no question word left)."""
    if conjunctive or not authors_query_words(question, min_chars, max_terms):
        return None
    return authors_or_terms(question, min_chars, max_terms)


def any_of(terms: Sequence[str]) -> Node | None:
    """The tsquery ``'a' | 'b' | ...`` (None for no term)."""
    node: Node | None = None
    for term in dict.fromkeys(terms):
        node = Lexeme(term) if node is None else Binary(OR, node, Lexeme(term))
    return node


def all_of(terms: Sequence[str]) -> Node | None:
    """The tsquery ``'a' & 'b' & ...`` (None for no term)."""
    node: Node | None = None
    for term in dict.fromkeys(terms):
        node = Lexeme(term) if node is None else Binary(AND, node, Lexeme(term))
    return node


def _phrase_positions(node: Node, positions: Positions) -> tuple[list[int], int]:
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


def holds(node: Node, positions: Positions) -> bool:
    """``tsvector @@ tsquery`` for a document given as lexeme -> positions (Postgres' TS_execute;
    ``a <N> b`` holds where b sits exactly N positions after a)."""
    if isinstance(node, Lexeme):
        return bool(positions.get(node.text))
    if isinstance(node, Not):
        return not holds(node.child, positions)
    if node.op == AND:
        return holds(node.left, positions) and holds(node.right, positions)
    if node.op == OR:
        return holds(node.left, positions) or holds(node.right, positions)
    return bool(_phrase_positions(node, positions)[0])


def _flat_or(node: Node) -> bool:
    return isinstance(node, Lexeme) or (isinstance(node, Binary) and node.op == OR and _flat_or(node.left) and _flat_or(node.right))


def ts_rank_cd(node: Node, lexemes: Sequence[str], positions: Positions) -> float:
    """``ts_rank_cd`` with default weights and normalisation 0, as the float4 Postgres returns.

    Restated from Postgres 18's tsrank.c (``Cover``, ``calc_rank_cd``) and checked against a live
    server in tests/test_websearch_query.py: the query's positions are scanned in order; a cover
    ends where the query first holds over the entries read, and begins at the last entry from which,
    reading back, it holds again; the next scan starts after the cover's first entry (one entry on
    after a failed backward read). Each cover adds 0.1 / (1 + positions inside it holding no lexeme).
    """
    doc = sorted((pos, lexeme) for lexeme in set(lexemes) for pos in set(positions.get(lexeme, ())))
    total = 0.0
    if _flat_or(node):  # each entry is a cover of its own without noise (2.6x faster on LoCoMo's OR leg)
        for _ in doc:
            total += 1.0 / _INVERSE_WEIGHT_D
        return float(np.float32(total))
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


def _candidates(node: Node, postings: Callable[[str], np.ndarray]) -> np.ndarray | None:
    """Row seqs that can satisfy ``node`` (ascending) from the postings alone; None when any row
    can (under a NOT)."""
    if isinstance(node, Lexeme):
        return postings(node.text)
    if isinstance(node, Not):
        return None
    left, right = _candidates(node.left, postings), _candidates(node.right, postings)
    if node.op == OR:
        return None if left is None or right is None else np.union1d(left, right)
    if left is None or right is None:  # AND or a phrase: both sides must hold
        return right if left is None else left
    return np.intersect1d(left, right, assume_unique=True)


class PositionIndex:
    """Each stored row's term -> 1-based positions under ``tokenize`` and the postings, built lazily
    as rows are added: Postgres' English lexemes (the authors' leg) or our stems (BM25, plus's leg)."""

    def __init__(self, tokenize: Callable[[str], dict[str, list[int]]]) -> None:
        self.tokenize = tokenize
        self.positions: list[dict[str, list[int]]] = []
        self._postings: dict[str, list[int]] = {}

    def update(self, store: RowStore) -> PositionIndex:
        for seq in range(len(self.positions), len(store)):
            positions = self.tokenize(store.rows[seq].text)
            self.positions.append(positions)
            for term in positions:
                self._postings.setdefault(term, []).append(seq)
        return self

    def postings(self, term: str) -> np.ndarray:
        return np.asarray(self._postings.get(term, ()), dtype=np.int64)

    def leg(self, node: Node | None, scope: np.ndarray, limit: int) -> list[int]:
        """In-scope row seqs where ``node`` holds, by ``ts_rank_cd`` descending, equal scores the
        later-ingested row first, at most ``limit``."""
        if node is None:
            return []
        found = _candidates(node, self.postings)
        seqs = np.arange(len(self.positions), dtype=np.int64) if found is None else found
        seqs = seqs[scope[seqs]]
        lexemes = WebsearchQuery(node).lexemes()
        matched = [int(seq) for seq in seqs if holds(node, self.positions[seq])]
        if not matched:
            return []
        scores = np.array([ts_rank_cd(node, lexemes, self.positions[seq]) for seq in matched], dtype=np.float32)
        order = np.lexsort((-np.asarray(matched), -scores))
        return np.asarray(matched, dtype=np.int64)[order[:limit]].tolist()


def stem_matches(stems: PositionIndex, terms: Sequence[str], conjunctive: bool, scope: np.ndarray) -> np.ndarray:
    """In-scope row seqs holding all (conjunctive) or any of our content stems ``terms``, ascending."""
    if not terms:
        return np.zeros(0, dtype=np.int64)
    lists = [stems.postings(term) for term in dict.fromkeys(terms)]
    if conjunctive:
        lists.sort(key=len)
        matched = lists[0]
        for other in lists[1:]:
            if matched.size == 0:
                break
            matched = np.intersect1d(matched, other, assume_unique=True)
    else:
        matched = np.unique(np.concatenate(lists))
    matched = matched.astype(np.int64)
    return matched[scope[matched]]


def bm25_index(corpus: Sequence[Sequence[str]], k1: float, b: float):
    """A ``bm25s`` index over token lists (an empty one indexed as one empty token)."""
    import bm25s

    index = bm25s.BM25(k1=k1, b=b)
    index.index([list(tokens) or [""] for tokens in corpus], show_progress=False)
    return index


def bm25_scores(index, terms: Sequence[str], size: int) -> np.ndarray:
    """Each indexed document's BM25 score for ``terms`` (0 where none is in the vocabulary)."""
    known = [term for term in dict.fromkeys(terms) if term in index.vocab_dict]
    return np.asarray(index.get_scores(known)) if known else np.zeros(size, dtype=np.float32)


class BM25Index:
    """BM25 over every stored row's stem stream, rebuilt only when rows were added."""

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._index = None
        self._size = -1

    def scores(self, store: RowStore, terms: Sequence[str]) -> np.ndarray:
        if self._index is None or self._size != len(store):
            corpus = [stems(row.text) for row in store.rows]
            self._index, self._size = bm25_index(corpus, self.k1, self.b), len(store)
        return bm25_scores(self._index, terms, len(store))

    def leg(self, store: RowStore, stems: PositionIndex, terms: Sequence[str], conjunctive: bool, scope: np.ndarray,
            limit: int) -> list[int]:
        """Rows holding all (conjunctive) or any of ``terms``, by BM25 descending, ties later row first."""
        matched = stem_matches(stems.update(store), terms, conjunctive, scope)
        if matched.size == 0:
            return []
        scores = np.asarray(self.scores(store, terms), dtype=np.float64)[matched]
        order = np.lexsort((-matched, -scores))
        return matched[order[:limit]].tolist()

