"""Our words, stop words and English stems (PyStemmer, bm25s's stop list): the tag leg, BM25 and
plus's any-term leg. Every word takes a position; stop words are then dropped (the paper's lexical
leg uses Postgres' lexemes instead: ``memplusplus.english_tsearch``)."""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

import Stemmer

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _bm25s_stop_words() -> frozenset[str]:
    """bm25s's ``STOPWORDS_EN_PLUS`` from its ``stopwords`` module alone (``import bm25s.stopwords``
    would run the package's ``__init__``, scipy and more, ~0.1 s, on every run)."""
    spec = importlib.util.find_spec("bm25s")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("memplusplus needs the bm25s package for its stop-word list: pip install bm25s")
    path = Path(next(iter(spec.submodule_search_locations))) / "stopwords.py"
    module_spec = importlib.util.spec_from_file_location("_bm25s_stopwords", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return frozenset(module.STOPWORDS_EN_PLUS)


STOP_WORDS: frozenset[str] = _bm25s_stop_words()


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def stems(text: str) -> list[str]:
    """The stems of the content words of ``text``, in order (repeats kept)."""
    stemmer = _stemmer()
    return [stemmer.stemWord(word) for word in words(text) if word not in STOP_WORDS]


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
    """Distinct stems of the content words of ``text`` (at least ``min_chars`` long, the first
    ``max_terms`` of them before stemming), in order of first appearance."""
    stemmer = _stemmer()
    kept = [w for w in words(text) if w not in STOP_WORDS and len(w) >= min_chars]
    if max_terms is not None:
        kept = kept[:max_terms]
    return list(dict.fromkeys(stemmer.stemWord(word) for word in kept))
