"""Postgres' ``to_tsvector('english', text)`` in Python, the lexemes of the authors' lexical legs
(AIDAChip-Inc/mem-plus-plus memory/store.py: ``_TS_CONFIG = "english"``), checked against a live
Postgres in tests/test_postgres_lexical.py.

- Postgres' default parser: tags, entities, protocols and blanks take no position; every other
  token does, stop words included (dropped afterwards, their position kept).
- Words (letters only) are lower-cased and Snowball-stemmed as Postgres 18's older Snowball does:
  nltk's English stemmer (``memplusplus.snowball_english``) is closer than PyStemmer 3 and differs
  on 3 of the 16,225 distinct words of the three benchmarks ("added", "adding": corrected in
  ``stem``; "realization": left as is).
- A hyphenated word whose parts all hold a letter gives the compound, then each part.
- Everything else stays whole, lower-cased and unstemmed: letter-digit mixes, e-mails, URLs (and
  their host and path), hosts, paths, versions, floats, signed numbers ("2023-05-15" is '2023',
  '-05', '-15').

Known gaps: Postgres' parser has more states ('+.5', dots before a word) and a non-ASCII digit or
symbol ('²') is a blank here. On the 5,882 distinct LoCoMo turns the lexemes equal Postgres 18's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memplusplus.snowball_english import stem as snowball_stem

# Postgres' English stop list (share/tsearch_data/english.stop, 127 words).
POSTGRES_ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
    her hers herself it its itself they them their theirs themselves what which who whom this that
    these those am is are was were be been being have has had having do does did doing a an the and
    but if or because as until while of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then once here
    there when where why how all any both each few more most other some such no nor not only own
    same so than too very s t can will just don should now
    """.split()
)

_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
_HOST = rf"(?:{_LABEL}\.)+[a-z][a-z0-9]*[a-z]"  # at least one dot; the last label 2+ chars, letters at both ends
_PATH = r"/[^\s\"'<>]*"
_WORD_PART = r"[^\W_]+"  # letters and ASCII digits (other word characters are blanked first)

_TOKEN = re.compile(
    rf"""
    (?P<tag></?[a-z][^<>]*>)
  | (?P<entity>&\#?[a-z0-9]+;)
  | (?P<protocol>[a-z][a-z0-9+.-]*://)
  | (?P<email>[a-z0-9][a-z0-9._+-]*@{_HOST})(?![a-z0-9])
  | (?P<url>(?P<url_host>{_HOST})(?P<url_path>{_PATH}))
  | (?P<version>\d+(?:\.\d+){{2,}})(?![a-z0-9])
  | (?P<sfloat>\d+(?:\.\d+)?e[-+]?\d+)(?![a-z0-9.])
  | (?P<float>[-+]?\d+\.\d+)
  | (?P<host>{_HOST})(?![a-z0-9])
  | (?P<dots>(?<=[^\W_])\.\.(?!\.))
  | (?P<file>(?:[a-z0-9_.-]*/[a-z0-9_.-]+(?:/[a-z0-9_.-]+)*|[a-z0-9_-]+(?:\.[a-z0-9_-]+)+))
  | (?P<hword>{_WORD_PART}(?:-{_WORD_PART})+)
  | (?P<int>[-+]\d+)(?![^\W_])
  | (?P<word>{_WORD_PART})
    """,
    re.VERBOSE,
)
_HAS_LETTER = re.compile(r"[^\W\d_]")
_SIGN_AFTER_COMPOUND = re.compile(r"-(?=\d)")


@dataclass(frozen=True)
class TsToken:
    """One token of Postgres' parser: its lower-cased text and whether it is a stemmed word."""

    text: str
    stemmed: bool


_SHORT_DOUBLED = re.compile(r"^([aeiouy])([b-df-hj-np-tv-z])\2(?:ed|ing)$")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Postgres' ``english_stem``: nltk's Snowball stem, except that a vowel-initial three-letter stem
    keeps its doubled consonant when -ed/-ing goes ("added" -> 'add'; nltk gives 'ad')."""
    doubled = _SHORT_DOUBLED.match(word)
    if doubled:
        return word[:3]
    return snowball_stem(word)


def _blank_other_word_chars(text: str) -> str:
    """Word characters Postgres' parser does not treat as letters or digits ('²', '½', '٣') -> ' '."""
    return "".join(
        ch if not ch.isalnum() or ch.isalpha() and not ch.isnumeric() or "0" <= ch <= "9" else " " for ch in text
    )


def _compound(token: str) -> list[TsToken]:
    """A hyphenated word: the compound, then each part; a bare-number part ends the compound."""
    parts = token.split("-")
    kept: list[str] = []
    for part in parts:
        if not _HAS_LETTER.search(part):
            break
        kept.append(part)
    if len(kept) < 2:
        return []
    letters_only = all(part.isalpha() for part in kept)  # a compound with digits is not stemmed
    return [TsToken("-".join(kept), letters_only)] + [TsToken(part, part.isalpha()) for part in kept]


def ts_tokens(text: str) -> list[TsToken]:
    """The tokens of ``text`` that take a position, in order."""
    source = _blank_other_word_chars(text.lower())
    tokens: list[TsToken] = []
    at = 0
    while at < len(source):
        match = _TOKEN.search(source, at)
        if match is None:
            break
        kind = match.lastgroup if match.lastgroup not in ("url_host", "url_path") else "url"
        value = match.group(0)
        at = match.end()
        if kind in ("tag", "entity", "protocol"):
            continue
        if kind == "url":
            tokens += [TsToken(value, False), TsToken(match.group("url_host"), False), TsToken(match.group("url_path"), False)]
        elif kind in ("host", "file", "dots"):  # "week.." ends in a file token '..' (not "well...")
            tokens.append(TsToken(value, False))
        elif kind == "hword":
            parts = _compound(value)
            if not parts:  # the first part is a bare number or stands alone: take it and go on
                first = value.split("-")[0]
                at = match.start() + len(first)
                tokens.append(TsToken(first, first.isalpha()))
                continue
            tokens += parts
            consumed = len(parts[0].text)
            at = match.start() + consumed
            if _SIGN_AFTER_COMPOUND.match(source, at):  # "x-ray-3": the number after it has no sign
                at += 1
        elif kind == "word":
            tokens.append(TsToken(value, value.isalpha()))
        else:  # email, version, sfloat, float, int
            tokens.append(TsToken(value, False))
    return tokens


def _lexeme(text: str, stemmed: bool) -> str | None:
    """A token's lexeme: a word's stem (None for a stop word), anything else as it is."""
    if not stemmed:
        return text
    return None if text in POSTGRES_ENGLISH_STOP_WORDS else stem(text)


def tsvector_positions(text: str) -> dict[str, list[int]]:
    """Lexeme -> 1-based positions, as ``to_tsvector('english', text)`` gives them."""
    positions: dict[str, list[int]] = {}
    for position, token in enumerate(ts_tokens(text), start=1):
        lexeme = _lexeme(token.text, token.stemmed)
        if lexeme is not None:
            positions.setdefault(lexeme, []).append(position)
    return positions


def quote(lexeme: str) -> str:
    """A lexeme quoted for tsvector/tsquery input (no further normalisation is applied to it)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def query_lexemes(words: list[str]) -> list[str]:
    """What ``to_tsquery('english', 'w1 | w2 | ...')`` keeps of single ASCII words or numbers, distinct."""
    return [lexeme for lexeme in dict.fromkeys(_lexeme(word, word.isalpha()) for word in words) if lexeme is not None]
