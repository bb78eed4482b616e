"""A JSON list read one element at a time (ijson), bounded as ``loaders.jsonio`` says, so a caller
that stops early (``dataset.limit=20`` of LongMemEval_S's 257 MB) builds no more.

Depth is counted on ijson's prefix-free ``basic_parse`` events, so no event carries a deep prefix.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import ijson
from ijson.common import ObjectBuilder

from loaders.jsonio import GZIP_MAGIC, LIMITS, BoundedReader, JsonLimits, TokenTooLong, open_error, too_deep, too_long
from memory_protocol import DatasetError

# ijson's first event -> the Python type name json.loads would have given the top level
_TOP_LEVEL_TYPE = {"start_map": "dict", "string": "str", "number": "int", "boolean": "bool", "null": "NoneType"}
_SCALARS = frozenset(("string", "number", "boolean", "null"))


def _open(path: Path) -> IO[bytes]:
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise open_error(path, exc) from None
    if raw.read(2) == GZIP_MAGIC:
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    raw.seek(0)
    return raw


_OPEN = frozenset(("start_map", "start_array"))
_CLOSE = frozenset(("end_map", "end_array"))


class JsonListStream:
    """The elements of the JSON list in one file (plain or gzip), parsed as far as asked."""

    def __init__(self, path: Path, limits: JsonLimits = LIMITS) -> None:
        self.path = path
        self._limits = limits
        self._handle = _open(path)
        self._reader = BoundedReader(self._handle, limits)
        self._events = self._guarded_events()
        self._started = False

    def _guarded_events(self) -> Iterator[tuple[str, Any]]:
        reader, max_depth = self._reader, self._limits.max_depth
        depth = 0
        for event, value in ijson.basic_parse(reader, use_float=True):
            reader.saw_event()
            if event in _OPEN:
                depth += 1
                if depth > max_depth:
                    raise too_deep(self.path, f"about byte {reader.position:,}", self._limits)
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

    def _start(self) -> None:
        if self._started:
            return
        self._started = True
        first = next(self._events, None)
        if first is None:
            raise DatasetError(str(self.path), "invalid or truncated JSON: the file is empty")
        if first[0] != "start_array":
            got = _TOP_LEVEL_TYPE.get(first[0], first[0])
            raise DatasetError(str(self.path), f"expected a JSON list of questions, got {got}")

    def _element_events(self) -> Iterator[Iterator[tuple[str, Any]]]:
        """An iterator over each next element's events (to be used up before the next)."""
        truncated = DatasetError(str(self.path), "invalid or truncated JSON: the file ends inside the list")
        while True:
            first = next(self._events, None)
            if first is None:
                raise truncated
            if first[0] == "end_array":
                return
            yield self._one_element(first, truncated)

    def _one_element(self, first: tuple[str, Any], truncated: DatasetError) -> Iterator[tuple[str, Any]]:
        yield first
        if first[0] not in _OPEN:
            return
        level = 1
        for event, value in self._events:
            if event in _OPEN:
                level += 1
            elif event in _CLOSE:
                level -= 1
            yield event, value
            if level == 0:
                return
        raise truncated

    def __iter__(self) -> Iterator[Any]:
        with self._errors():
            self._start()
            for events in self._element_events():
                builder = ObjectBuilder()
                for event, value in events:
                    builder.event(event, value)
                yield builder.value

    def remaining_field(self, key: str) -> Iterator[Any]:
        """For each element not yet read, its top-level ``key`` value when it is a scalar (else None),
        without building the element."""
        with self._errors():
            self._start()
            for events in self._element_events():
                found, level, take = None, 0, False
                for event, value in events:
                    if take:
                        found = value if event in _SCALARS else None
                        take = False
                    if event in _OPEN:
                        level += 1
                    elif event in _CLOSE:
                        level -= 1
                    elif level == 1 and event == "map_key" and value == key:
                        take = True
                yield found

    def close(self) -> None:
        self._handle.close()


def iter_json_list(path: Path) -> Iterator[Any]:
    """Yield the elements of the JSON list in ``path`` (plain or gzip), parsing only as far as asked."""
    stream = JsonListStream(path)
    try:
        yield from stream
    finally:
        stream.close()
