"""Bounds on what a dataset file may make the parser do: nesting depth, token length, file size.

A hostile file should fail fast, in one line, in bounded memory. Without these bounds a 400 KB
file of 200,000 nested brackets drove ijson to 24 GB (every event carries a prefix string as long
as the nesting, so memory grows with the square of the depth) and ``json.loads`` to a
RecursionError; two 50 MB strings took ijson 70-80 s (a token that spans many read buffers is
re-scanned for each one).

* Whole-file readers (LoCoMo, OrgMemBench's JSON lines) refuse a file over ``max_file_bytes``
  (after gunzip) and scan the text before ``json.loads`` (:func:`check_json_text`).
* The streaming reader (LongMemEval_S, 257 MB) reads through :class:`BoundedReader` (small reads,
  and a refusal once one token has run past ``max_token_bytes``) and checks the depth on ijson's
  prefix-free ``basic_parse`` events (``loaders.jsonstream``), so no event ever carries a deep prefix.

The bounds leave wide room over the real files: the deepest real value is 6 containers down
(LoCoMo's observation pairs), the longest real string is a 76,560-character LongMemEval turn, and
the largest whole-read file is locomo10.json (2.8 MB).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from memory_protocol import DatasetError


@dataclass(frozen=True)
class JsonLimits:
    """How deep, how long and how large a dataset file may be."""

    max_depth: int = 64  # nested lists/objects
    max_token_bytes: int = 1 << 20  # one string or number as written in the file (1 MiB)
    max_file_bytes: int = 64 << 20  # a file read whole (after gunzip); streamed files have no such cap
    read_size: int = 4096  # bytes handed to the streaming parser per read


LIMITS = JsonLimits()

# One JSON string as written (an unterminated one runs to the end), or one bracket.
_TOKEN_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


def _line_col(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line} column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1} (char {pos})"


def too_deep(path: Path | str, where: str, limits: JsonLimits = LIMITS) -> DatasetError:
    return DatasetError(str(path), f"JSON nested deeper than {limits.max_depth} levels at {where}; "
                                   "refused before parsing further (a hostile or corrupt file?)")


def too_long(path: Path | str, where: str, limits: JsonLimits = LIMITS) -> DatasetError:
    return DatasetError(str(path), f"a JSON string or number longer than {limits.max_token_bytes:,} bytes at {where}; "
                                   "refused (the longest real dataset string is 76,560 characters)")


def check_json_text(text: str, path: Path | str, limits: JsonLimits = LIMITS) -> None:
    """Raise a DatasetError when ``text`` nests deeper or holds a longer string than ``limits`` allow.

    One regex pass in C over strings and brackets, so ``json.loads`` never meets either; works for
    a JSON-lines text too (each line is balanced on its own).
    """
    depth = 0
    for match in _TOKEN_RE.finditer(text):
        start = match.start()
        first = text[start]
        if first == '"':
            if match.end() - start > limits.max_token_bytes:
                raise too_long(path, _line_col(text, start), limits)
        elif first in "[{":
            depth += 1
            if depth > limits.max_depth:
                raise too_deep(path, _line_col(text, start), limits)
        else:
            depth -= 1


def check_file_size(path: Path, size: int, limits: JsonLimits = LIMITS, unpacked: bool = False) -> None:
    """Refuse a whole-read file larger than ``max_file_bytes``."""
    if size > limits.max_file_bytes:
        what = "unpacks to more than" if unpacked else "is larger than"
        raise DatasetError(str(path), f"file {what} {limits.max_file_bytes:,} bytes, the cap for a file read whole "
                                      f"(the largest real one is 2.8 MB); refused")


class TokenTooLong(Exception):
    """Raised from inside the parser's read call; turned into a DatasetError by the caller."""

    def __init__(self, at_byte: int) -> None:
        super().__init__(at_byte)
        self.at_byte = at_byte


class BoundedReader:
    """A binary stream read in ``read_size`` pieces that refuses one token longer than the cap.

    The parser hands back events after each piece; :meth:`saw_event` records where the last one
    came. When more than ``max_token_bytes`` (plus one piece) have been read since, the parser is
    inside a single string, number or run of blanks that long, and the next read raises.
    """

    def __init__(self, raw: IO[bytes], limits: JsonLimits = LIMITS) -> None:
        self._raw = raw
        self._limits = limits
        self.position = 0
        self._last_event_at = 0

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson probes the stream's type with read(0)
            return b""
        if self.position - self._last_event_at > self._limits.max_token_bytes + self._limits.read_size:
            raise TokenTooLong(self._last_event_at)
        want = self._limits.read_size if size is None or size < 0 else min(size, self._limits.read_size)
        piece = self._raw.read(want)
        self.position += len(piece)
        return piece

    def saw_event(self) -> None:
        self._last_event_at = self.position
