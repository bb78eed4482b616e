"""The lexical leg as the authors' implementation runs it, disjunctive and conjunctive.

The paper states only that LoCoMo's lexical matching is disjunctive and the other benchmarks'
conjunctive (Table 6). The authors' code (AIDAChip-Inc/mem-plus-plus @9196597, memory/store.py)
fixes the rest, restated here in our words:

- documents, both legs: ``to_tsvector('english', text)`` (store.py:46 and 252;
  ``memplusplus.english_tsearch`` reproduces it);
- disjunctive (LoCoMo, ``conjunctive: false``; their OR switch on, store.py:373-377):
  - question terms (``_query_terms``, store.py:69-72): the lower-cased question's runs of ASCII
    letters and digits, those of at least 3 characters that are not on a short stop list of their
    own (store.py:47-50, ``AUTHORS_QUERY_STOP_WORDS`` below), the first 8 of them; the 3 and the 8
    are ``min_term_chars`` and ``max_query_terms`` in configs/dataset/locomo.yaml;
  - the OR query: those words joined by ``|`` and parsed by ``to_tsquery('english', ...)``, which
    stems each and drops Postgres' English stop words;
  - no such word at all: the whole question through ``websearch_to_tsquery`` (store.py:378-379);
- conjunctive (OrgMemBench, LongMemEval_S; their OR switch off): the whole question through
  ``websearch_to_tsquery('english', question)`` (store.py:373 and 379;
  ``memplusplus.websearch_query`` reproduces it: words ANDed, the word "or" between two operands
  an OR, a quoted phrase a phrase, a leading '-' a NOT), no length rule and no cut to 8 words;
- matching and ranking, both legs: rows where ``tsvector @@ query`` holds (store.py:383), by
  ``ts_rank_cd`` best first, equal scores the later-written row first (store.py:380 and 384,
  ``order_by(rank.desc(), created_at.desc())``); ``memplusplus.cover_density`` is ``ts_rank_cd``
  for a flat OR query, ``memplusplus.tsquery_match`` for any websearch query.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from memplusplus.cover_density import cover_density
from memplusplus.english_tsearch import query_lexemes, tsvector_positions
from memplusplus.store import RowStore
from memplusplus.tsquery_match import holds, ts_rank_cd
from memplusplus.websearch_query import Lexeme, Node, Not, WebsearchQuery

# The authors' own stop list for question words (memory/store.py:47-50), applied before the cut
# to the first max_query_terms words; Postgres' English stop list is applied after it.
AUTHORS_QUERY_STOP_WORDS: frozenset[str] = frozenset(
    "the and for with what how did was were you about tell this that are can".split()
)
_QUESTION_WORD = re.compile(r"[a-z0-9]+")


def authors_query_words(question: str, min_chars: int, max_terms: int | None) -> list[str]:
    """The question words the authors' OR query is built from, in order (repeats kept)."""
    words = [w for w in _QUESTION_WORD.findall(question.lower()) if len(w) >= min_chars and w not in AUTHORS_QUERY_STOP_WORDS]
    return words if max_terms is None else words[:max_terms]


def authors_or_terms(question: str, min_chars: int, max_terms: int | None) -> list[str]:
    """The lexemes of the authors' OR query for ``question`` (distinct, in order)."""
    return query_lexemes(authors_query_words(question, min_chars, max_terms))


class EnglishTextIndex:
    """Every stored row's ``to_tsvector('english')`` lexemes, built lazily as rows are added."""

    def __init__(self) -> None:
        self.positions: list[dict[str, list[int]]] = []
        self.postings: dict[str, list[int]] = {}

    def update(self, store: RowStore) -> None:
        for seq in range(len(self.positions), len(store)):
            positions = tsvector_positions(store.rows[seq].text)
            self.positions.append(positions)
            for lexeme in positions:
                self.postings.setdefault(lexeme, []).append(seq)

    def matches(self, terms: Sequence[str], scope: np.ndarray) -> np.ndarray:
        """In-scope row seqs holding any of ``terms``, ascending."""
        lists = [np.asarray(self.postings[t], dtype=np.int64) for t in dict.fromkeys(terms) if t in self.postings]
        if not lists:
            return np.zeros(0, dtype=np.int64)
        matched = np.unique(np.concatenate(lists))
        return matched[scope[matched]]

    def candidates(self, node: Node) -> np.ndarray | None:
        """Row seqs that can satisfy ``node`` (ascending), from the postings alone; None when any
        row can (a NOT)."""
        if isinstance(node, Lexeme):
            return np.asarray(self.postings.get(node.text, ()), dtype=np.int64)
        if isinstance(node, Not):
            return None
        left, right = self.candidates(node.left), self.candidates(node.right)
        if node.op == "|":
            return None if left is None or right is None else np.union1d(left, right)
        if left is None or right is None:  # AND or a phrase: both sides must hold
            return right if left is None else left
        return np.intersect1d(left, right, assume_unique=True)


def authors_disjunctive_leg(
    index: EnglishTextIndex, store: RowStore, terms: Sequence[str], scope: np.ndarray, limit: int
) -> list[int]:
    """Rows holding any query lexeme, by ``ts_rank_cd`` (cover density) descending, equal scores
    the later-ingested row first, at most ``limit``."""
    index.update(store)
    matched = index.matches(terms, scope)
    if matched.size == 0:
        return []
    scores = np.array([cover_density(index.positions[int(seq)], terms, False) for seq in matched], dtype=np.float64)
    order = np.lexsort((-matched, -scores))
    return matched[order[:limit]].tolist()


def authors_websearch_leg(
    index: EnglishTextIndex, store: RowStore, query: WebsearchQuery, scope: np.ndarray, limit: int
) -> list[int]:
    """Rows where the websearch query holds, by ``ts_rank_cd`` descending, equal scores the
    later-ingested row first, at most ``limit`` (the authors' conjunctive leg)."""
    index.update(store)
    if query.root is None:
        return []
    found = index.candidates(query.root)
    seqs = np.arange(len(index.positions), dtype=np.int64) if found is None else found
    seqs = seqs[scope[seqs]]
    lexemes = query.lexemes()
    matched = [int(seq) for seq in seqs if holds(query.root, index.positions[int(seq)])]
    if not matched:
        return []
    scores = np.array([ts_rank_cd(query.root, lexemes, index.positions[seq]) for seq in matched], dtype=np.float32)
    rows = np.asarray(matched, dtype=np.int64)
    order = np.lexsort((-rows, -scores))
    return rows[order[:limit]].tolist()
