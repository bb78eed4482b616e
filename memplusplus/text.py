"""Words, stop words and English stems, shared by the lexical and tag legs.

Tokenisation follows the Postgres English text-search configuration in spirit: split on anything
that is not a letter or digit, lower-case, every word (stop words included) takes a position, stop
words are then dropped and the rest reduced to their Snowball English (Porter2) stem.
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOP_WORDS: frozenset[str] = frozenset(STOPWORDS_EN_PLUS)


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` in order (apostrophes and punctuation split words)."""
    return _WORD.findall(text.lower())


def stem(word: str) -> str:
    return _stemmer().stemWord(word)


def positional_stems(text: str) -> dict[str, list[int]]:
    """Stem -> 1-based positions of its occurrences; stop words keep their positions but no entry."""
    positions: dict[str, list[int]] = {}
    stemmer = _stemmer()
    for position, word in enumerate(words(text), start=1):
        if word in STOP_WORDS:
            continue
        positions.setdefault(stemmer.stemWord(word), []).append(position)
    return positions


def content_terms(text: str, min_chars: int = 1, max_terms: int | None = None) -> list[str]:
    """Distinct stems of the content words of ``text``, in order of first appearance.

    ``min_chars`` drops shorter words; ``max_terms`` keeps only the first that many content words
    (counted before stemming and de-duplication).
    """
    stemmer = _stemmer()
    kept = [w for w in words(text) if w not in STOP_WORDS and len(w) >= min_chars]
    if max_terms is not None:
        kept = kept[:max_terms]
    return list(dict.fromkeys(stemmer.stemWord(word) for word in kept))
