"""Reading dataset files (JSON read whole or streamed, JSON lines; gzip or not) within bounds, and their
fields checked, every error one line naming the file, the record and the field.

Bounds make a hostile file fail fast: without them a 400 KB file of 200,000 nested brackets drove ijson
to 24 GB and ``json.loads`` to a RecursionError, and two 50 MB strings took ijson 70-80 s. The real
files leave wide room: depth 6 at most, the longest string 76,560 characters, the largest whole-read
file 2.8 MB (locomo10.json).
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import ijson
from ijson.common import ObjectBuilder

from memory_protocol import DatasetError

GZIP_MAGIC = b"\x1f\x8b"
MAX_DEPTH = 64  # nested lists/objects
MAX_TOKEN_BYTES = 1 << 20  # one string or number as written (1 MiB)
MAX_FILE_BYTES = 64 << 20  # a file read whole, after gunzip
READ_SIZE = 4096  # bytes handed to the streaming parser per read
MAX_QUOTED = 200  # an error quotes at most this many characters of a bad value (one may be megabytes long)
_MISSING = object()
# One JSON string as written (an unterminated one runs to the end), or one bracket.
_TOKEN_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
# ijson's first event -> the Python type name json.loads would have given the top level
_TOP_LEVEL_TYPE = {"start_map": "dict", "string": "str", "number": "int", "boolean": "bool", "null": "NoneType"}
_SCALARS = frozenset(("string", "number", "boolean", "null"))
_OPEN = frozenset(("start_map", "start_array"))
_CLOSE = frozenset(("end_map", "end_array"))
TRUNCATED = "invalid or truncated JSON: the file ends inside the list"
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
# English month names for the loaders' date parsers (locale-independent, unlike strptime's %B)
MONTHS: dict[str, int] = {**{n: i for i, n in enumerate(_MONTH_NAMES, 1)},
                          **{n[:3]: i for i, n in enumerate(_MONTH_NAMES, 1)}, "sept": 9}
MONTH_RE = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
DAY_RE = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"


def quote(value: object) -> str:
    text = repr(value)
    return text if len(text) <= MAX_QUOTED else f"{text[:MAX_QUOTED]}... ({len(text):,} characters)"


def too_deep(path: Path | str, where: str) -> DatasetError:
    return DatasetError(str(path), f"JSON nested deeper than {MAX_DEPTH} levels at {where}; "
                                   "refused before parsing further (a hostile or corrupt file?)")


def too_long(path: Path | str, where: str) -> DatasetError:
    return DatasetError(str(path), f"a JSON string or number longer than {MAX_TOKEN_BYTES:,} bytes at {where}; "
                                   "refused (the longest real dataset string is 76,560 characters)")


def check_json_text(text: str, path: Path | str) -> None:
    """Refuse ``text`` nesting deeper or holding a longer string than the caps (one regex pass in C)."""
    depth = 0
    for match in _TOKEN_RE.finditer(text):
        start = match.start()
        first = text[start]
        if first == '"':
            if match.end() - start > MAX_TOKEN_BYTES:
                raise too_long(path, _line_col(text, start))
        elif first in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise too_deep(path, _line_col(text, start))
        else:
            depth -= 1


def _line_col(text: str, pos: int) -> str:
    return (f"line {text.count(chr(10), 0, pos) + 1} column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1} "
            f"(char {pos})")


def check_file_size(path: Path, size: int, unpacked: bool = False) -> None:
    if size > MAX_FILE_BYTES:
        what = "unpacks to more than" if unpacked else "is larger than"
        raise DatasetError(str(path), f"file {what} {MAX_FILE_BYTES:,} bytes, the cap for a file read whole "
                                      f"(the largest real one is 2.8 MB); refused")


def open_error(path: Path, exc: OSError) -> DatasetError:
    if isinstance(exc, FileNotFoundError):
        return DatasetError(str(path), "file not found")
    return DatasetError(str(path), f"cannot read file: {exc.strerror or exc}")


def read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped when it starts with the gzip magic, capped before and after gunzip."""
    try:
        check_file_size(path, path.stat().st_size)
        raw = path.read_bytes()
    except OSError as exc:
        raise open_error(path, exc) from None
    if not raw.startswith(GZIP_MAGIC):
        return raw
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unpacking:
            data = unpacking.read(MAX_FILE_BYTES + 1)
    except (EOFError, OSError, zlib.error) as exc:
        raise DatasetError(str(path), f"truncated or corrupt gzip data: {exc}") from None
    check_file_size(path, len(data), unpacked=True)
    return data


def read_text(path: Path) -> str:
    try:
        return read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(str(path), f"not valid UTF-8 at byte {exc.start}") from None


def _decode_error(path: Path, exc: json.JSONDecodeError, record: str | None = None) -> DatasetError:
    return DatasetError(str(path), f"invalid or truncated JSON: {exc.msg} at line {exc.lineno} column {exc.colno} "
                                   f"(char {exc.pos})", record=record)


def read_json(path: Path) -> Any:
    text = read_text(path)
    check_json_text(text, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _decode_error(path, exc) from None


def read_jsonl(path: Path, what: str = "JSON lines") -> list[tuple[int, dict[str, Any]]]:
    """(1-based line number, object) pairs; blank lines skipped; a missing file names ``what``."""
    text = read_text(require_file(path, what))
    check_json_text(text, path)
    records: list[tuple[int, dict[str, Any]]] = []
    # split on "\n" only: str.splitlines() would also break inside strings holding U+2028 and friends
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _decode_error(path, exc, record=f"line {lineno}") from None
        if not isinstance(obj, dict):
            raise DatasetError(str(path), f"expected a JSON object, got {type(obj).__name__}", f"line {lineno}")
        records.append((lineno, obj))
    return records


def get_field(record: Mapping[str, Any], name: str, path: Path | str, record_id: str,
              kind: Any = None, default: Any = _MISSING) -> Any:
    """``record[name]`` checked against ``kind``: a type, a tuple of types (bool never passes for int) or
    ``list[str]``; ``default`` makes it optional."""
    if type(record) is not dict and not isinstance(record, Mapping):
        raise DatasetError(str(path), f"expected a JSON object, got {type(record).__name__}", record_id)
    value = record.get(name, _MISSING)
    if value is _MISSING:
        if default is not _MISSING:
            return default
        raise DatasetError(str(path), "missing field", record_id, name)
    of_strings = kind == list[str]
    kinds = (list,) if of_strings else kind if isinstance(kind, tuple) else (kind,)
    if kind is not None and ((isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds)):
        raise DatasetError(str(path), f"unexpected type {type(value).__name__}", record_id, name)
    for i, item in enumerate(value if of_strings else ()):
        if not isinstance(item, str):
            raise DatasetError(str(path), f"expected a string, got {type(item).__name__}", record_id, f"{name}[{i}]")
    return value


def require_file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise DatasetError(str(path), f"missing file ({what})")
    return path


def find_data_file(data_dir: Path, subdir: str, names: tuple[str, ...], explicit: str | None, what: str) -> Path:
    """``explicit`` as given or under ``data_dir/subdir``, else the first of ``names`` there; errors list every try."""
    folder = data_dir / subdir
    tried = list(dict.fromkeys([Path(explicit).expanduser(), folder / explicit])) if explicit else \
        [folder / name for name in names]
    for path in tried:
        if path.is_file():
            return path
    raise DatasetError(str(tried[0]), f"missing file ({what}); looked for: {', '.join(str(p) for p in tried)}")


class TokenTooLong(Exception):
    def __init__(self, at_byte: int) -> None:
        super().__init__(at_byte)
        self.at_byte = at_byte


class BoundedReader:
    """A binary stream read in small pieces that refuses one token longer than the cap: when more than
    ``max_token_bytes`` were read since the parser's last event (:meth:`saw_event`), the next read raises."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self.position = self._last_event_at = 0

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson probes the stream's type with read(0)
            return b""
        if self.position - self._last_event_at > MAX_TOKEN_BYTES + READ_SIZE:
            raise TokenTooLong(self._last_event_at)
        want = READ_SIZE if size is None or size < 0 else min(size, READ_SIZE)
        piece = self._raw.read(want)
        self.position += len(piece)
        return piece

    def saw_event(self) -> None:
        self._last_event_at = self.position


class JsonListStream:
    """The elements of the JSON list in one file (plain or gzip), parsed only as far as asked (ijson), so a
    caller that stops early (``dataset.limit=20`` of LongMemEval_S's 257 MB) builds no more. Depth is
    counted on ijson's prefix-free ``basic_parse`` events, so no event carries a deep prefix."""

    def __init__(self, path: Path) -> None:
        self.path, self._started = path, False
        try:
            raw = path.open("rb")
        except OSError as exc:
            raise open_error(path, exc) from None
        gzipped = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        self._handle: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw  # type: ignore[assignment]
        self._reader = BoundedReader(self._handle)
        self._events = self._guarded_events()

    def _guarded_events(self) -> Iterator[tuple[str, Any]]:
        reader = self._reader
        depth = 0
        for event, value in ijson.basic_parse(reader, use_float=True):
            reader.saw_event()
            if event in _OPEN:
                depth += 1
                if depth > MAX_DEPTH:
                    raise too_deep(self.path, f"about byte {reader.position:,}")
            elif event in _CLOSE:
                depth -= 1
            yield event, value

    @contextmanager
    def _errors(self) -> Iterator[None]:
        path = self.path
        try:
            yield
        except TokenTooLong as exc:
            raise too_long(path, f"about byte {exc.at_byte:,}") from None
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise DatasetError(str(path), f"truncated or corrupt gzip data: {exc}") from None
        except ijson.JSONError as exc:
            raise DatasetError(str(path), f"invalid or truncated JSON: {' '.join(str(exc).split())}") from None
        except UnicodeDecodeError as exc:
            raise DatasetError(str(path), f"not valid UTF-8 at byte {exc.start}") from None

    def _element_events(self) -> Iterator[Iterator[tuple[str, Any]]]:
        """Checks the top level is a list once, then an iterator over each next element's events (to be
        used up before the next)."""
        if not self._started:
            self._started = True
            first = next(self._events, None)
            if first is None:
                raise DatasetError(str(self.path), "invalid or truncated JSON: the file is empty")
            if first[0] != "start_array":
                got = _TOP_LEVEL_TYPE.get(first[0], first[0])
                raise DatasetError(str(self.path), f"expected a JSON list of questions, got {got}")
        while True:
            first = next(self._events, None)
            if first is None:
                raise DatasetError(str(self.path), TRUNCATED)
            if first[0] == "end_array":
                return
            yield self._one_element(first)

    def _one_element(self, first: tuple[str, Any]) -> Iterator[tuple[str, Any]]:
        yield first
        if first[0] not in _OPEN:
            return
        level = 1
        for event, value in self._events:
            level += (event in _OPEN) - (event in _CLOSE)
            yield event, value
            if level == 0:
                return
        raise DatasetError(str(self.path), TRUNCATED)

    def __iter__(self) -> Iterator[Any]:
        return self.elements()

    def elements(self, key: str | None = None) -> Iterator[Any]:
        """Each element not yet read, built; or, given ``key``, only its top-level ``key`` value when that is
        a scalar (else None), without building the element."""
        with self._errors():
            for events in self._element_events():
                builder, found, level, take = ObjectBuilder(), None, 0, False
                for event, value in events:
                    if key is None:
                        builder.event(event, value)
                        continue
                    if take:
                        found, take = (value if event in _SCALARS else None), False
                    level += (event in _OPEN) - (event in _CLOSE)
                    take = level == 1 and event == "map_key" and value == key
                yield builder.value if key is None else found

    def close(self) -> None:
        self._handle.close()

