"""The lexical leg's text in Postgres terms: tsvectors and tsqueries sent as literals.

A row's tsvector is sent as its lexeme -> positions (``english_tsearch.tsvector_positions``;
``Lexemes.of`` builds one from our own stems), an OR query as quoted lexemes joined by ``|``.
Postgres bounds a tsvector (positions above 16383 clamp, 255 positions a lexeme, 2047 bytes a
lexeme): documents beyond that (over 16k words) can rank differently from the in-process leg.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memplusplus.english_tsearch import quote
from memplusplus.text import positional_stems

MAX_POSITION = 16383
MAX_POSITIONS_PER_LEXEME = 255
MAX_LEXEME_BYTES = 2047


@dataclass(frozen=True)
class Lexemes:
    positions: Mapping[str, Sequence[int]]

    @classmethod
    def of(cls, text: str) -> "Lexemes":
        return cls(positional_stems(text))

    def bounded(self) -> dict[bytes, list[int]]:
        """Stem bytes -> the positions Postgres will keep (clamped, de-duplicated, at most 255)."""
        out: dict[bytes, list[int]] = {}
        for stem, positions in self.positions.items():
            raw = stem.encode("utf-8")
            if not raw or len(raw) > MAX_LEXEME_BYTES:
                continue
            kept = sorted({min(p, MAX_POSITION) for p in positions if p > 0})[:MAX_POSITIONS_PER_LEXEME]
            out[raw] = kept
        return out

    def to_binary(self) -> bytes:
        """Postgres' binary tsvector: entry count, then per lexeme its C string, count, positions."""
        entries = self.bounded()
        parts = [struct.pack(">i", len(entries))]
        for raw, positions in entries.items():
            parts.append(raw + b"\x00")
            parts.append(struct.pack(f">H{len(positions)}H", len(positions), *positions))
        return b"".join(parts)

    def to_text(self) -> str:
        return " ".join(
            f"{quote(raw.decode('utf-8'))}:{','.join(map(str, positions))}" for raw, positions in self.bounded().items()
        )


def tsquery(terms: Sequence[str], conjunctive: bool) -> str:
    """The question's content stems as a tsquery literal; '' when there are none."""
    kept = [term for term in terms if term and len(term.encode("utf-8")) <= MAX_LEXEME_BYTES]
    return (" & " if conjunctive else " | ").join(quote(term) for term in kept)


def register_tsvector(conn) -> None:
    """Let ``conn`` send ``Lexemes`` as tsvector values, in text and binary (COPY) form."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "tsvector")
    if info is None:  # pragma: no cover - every Postgres has tsvector
        raise RuntimeError("the server has no tsvector type")

    class TextDumper(Dumper):
        format = Format.TEXT
        oid = info.oid

        def dump(self, obj: Lexemes) -> bytes:
            return obj.to_text().encode("utf-8")

    class BinaryDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj: Lexemes) -> bytes:
            return obj.to_binary()

    conn.adapters.register_dumper(Lexemes, TextDumper)
    conn.adapters.register_dumper(Lexemes, BinaryDumper)
