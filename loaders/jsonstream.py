"""Reading a JSON list one element at a time (ijson), so a caller that stops early parses no more.

LongMemEval_S is one 257 MB list; ``dataset.limit=20`` needs its first twenty entries only. Errors
name the file as ``loaders.jsonio`` does: missing file, corrupt gzip, invalid or truncated JSON, and
a top level that is not a list. Gzip is detected by the magic bytes, not by the file name.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import ijson

from loaders.jsonio import GZIP_MAGIC
from memory_protocol import DatasetError

# ijson's first event -> the Python type name json.loads would have given the top level
_TOP_LEVEL_TYPE = {"start_map": "dict", "string": "str", "number": "int", "boolean": "bool", "null": "NoneType"}


def _open(path: Path) -> IO[bytes]:
    try:
        raw = path.open("rb")
    except FileNotFoundError:
        raise DatasetError(str(path), "file not found") from None
    except OSError as exc:
        raise DatasetError(str(path), f"cannot read file: {exc.strerror or exc}") from None
    if raw.read(2) == GZIP_MAGIC:
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    raw.seek(0)
    return raw


def iter_json_list(path: Path) -> Iterator[Any]:
    """Yield the elements of the JSON list in ``path`` (plain or gzip), parsing only as far as asked."""
    handle = _open(path)
    try:
        events = ijson.parse(handle, use_float=True)
        first = next(events, None)
        if first is None:
            raise DatasetError(str(path), "invalid or truncated JSON: the file is empty")
        if first[1] != "start_array":
            got = _TOP_LEVEL_TYPE.get(first[1], first[1])
            raise DatasetError(str(path), f"expected a JSON list of questions, got {got}")
        yield from ijson.items(events, "item")
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise DatasetError(str(path), f"truncated or corrupt gzip data: {exc}") from None
    except ijson.JSONError as exc:
        raise DatasetError(str(path), f"invalid or truncated JSON: {exc}") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(str(path), f"not valid UTF-8 at byte {exc.start}") from None
    finally:
        handle.close()
