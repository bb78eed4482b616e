"""The disjunctive lexical leg as the authors' implementation runs it (LoCoMo, ``conjunctive: false``).

The paper states only that LoCoMo's lexical matching is disjunctive (Table 6). The authors' code
(AIDAChip-Inc/mem-plus-plus @9196597, memory/store.py) fixes the rest, restated here in our words:

- question terms (``_query_terms``, store.py:68-71): the lower-cased question's runs of ASCII
  letters and digits, those of at least 3 characters that are not on a short stop list of their
  own (store.py:46-49, ``AUTHORS_QUERY_STOP_WORDS`` below), the first 8 of them; the 3 and the 8 are
  ``min_term_chars`` and ``max_query_terms`` in configs/dataset/locomo.yaml;
- the OR query (``_recall_scoped``): those words joined by ``|`` and parsed by
  ``to_tsquery('english', ...)``, which stems each and drops Postgres' English stop words;
- documents: ``to_tsvector('english', text)`` (``memplusplus.english_tsearch`` reproduces it);
- ranking: ``ts_rank_cd`` of the document against the OR query, best first, equal scores the
  later-written row first (``memplusplus.cover_density`` is ``ts_rank_cd``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from memplusplus.cover_density import cover_density
from memplusplus.english_tsearch import query_lexemes, tsvector_positions
from memplusplus.store import RowStore

# The authors' own stop list for question words (memory/store.py:46-49), applied before the cut
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
