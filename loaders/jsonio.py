"""Reading JSON / JSONL files and pulling fields out of records, with errors that name the place."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loaders.jsonguard import LIMITS, check_file_size, check_json_text
from memory_protocol import DatasetError

GZIP_MAGIC = b"\x1f\x8b"
_MISSING = object()


def read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped when it starts with the gzip magic number.

    A file read whole is capped (``jsonguard.LIMITS.max_file_bytes``), before and after gunzip,
    so neither a huge file nor a gzip bomb is ever held in memory.
    """
    cap = LIMITS.max_file_bytes
    try:
        check_file_size(path, path.stat().st_size)
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(str(path), "file not found") from None
    except OSError as exc:
        raise DatasetError(str(path), f"cannot read file: {exc.strerror or exc}") from None
    if not raw.startswith(GZIP_MAGIC):
        return raw
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unpacking:
            data = unpacking.read(cap + 1)
    except (EOFError, OSError, zlib.error) as exc:
        raise DatasetError(str(path), f"truncated or corrupt gzip data: {exc}") from None
    check_file_size(path, len(data), unpacked=True)
    return data


def read_text(path: Path) -> str:
    """The file decoded as UTF-8 (gzip detected by magic bytes)."""
    raw = read_bytes(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(str(path), f"not valid UTF-8 at byte {exc.start}") from None


def _decode_error(path: Path, exc: json.JSONDecodeError, record: str | None = None) -> DatasetError:
    return DatasetError(
        str(path),
        f"invalid or truncated JSON: {exc.msg} at line {exc.lineno} column {exc.colno} (char {exc.pos})",
        record=record,
    )


def read_json(path: Path) -> Any:
    """Parse a whole JSON file (plain or gzip), its depth and string lengths checked first."""
    text = read_text(path)
    check_json_text(text, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _decode_error(path, exc) from None


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Parse a JSON-lines file into (1-based line number, object) pairs; blank lines are skipped."""
    records: list[tuple[int, dict[str, Any]]] = []
    text = read_text(path)
    check_json_text(text, path)
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


def _type_ok(value: Any, kind: type | tuple[type, ...] | None) -> bool:
    if kind is None or type(value) is kind:
        return True
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        return False
    return isinstance(value, kinds)


def get_field(
    record: Mapping[str, Any],
    name: str,
    path: Path | str,
    record_id: str,
    kind: type | tuple[type, ...] | None = None,
    default: Any = _MISSING,
) -> Any:
    """``record[name]``, or a DatasetError naming file, record and field when missing or mistyped.

    ``kind`` checks the value's type (bool never passes for int); ``default`` makes the field optional.
    """
    if type(record) is not dict and not isinstance(record, Mapping):
        raise DatasetError(str(path), f"expected a JSON object, got {type(record).__name__}", record_id)
    value = record.get(name, _MISSING)
    if value is _MISSING:
        if default is not _MISSING:
            return default
        raise DatasetError(str(path), "missing field", record_id, name)
    if not _type_ok(value, kind):
        raise DatasetError(str(path), f"unexpected type {type(value).__name__}", record_id, name)
    return value


def get_str_list(
    record: Mapping[str, Any], name: str, path: Path | str, record_id: str, default: Any = _MISSING
) -> list[str]:
    """A list-of-strings field, checked element by element."""
    values = get_field(record, name, path, record_id, list, default)
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise DatasetError(str(path), f"expected a string, got {type(value).__name__}", record_id, f"{name}[{i}]")
    return values


def require_file(path: Path, what: str) -> Path:
    """``path`` if it is an existing file, else a DatasetError saying what was expected there."""
    if not path.is_file():
        raise DatasetError(str(path), f"missing file ({what})")
    return path
