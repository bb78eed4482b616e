"""Where the data-dependent tests find the benchmark data: as the harness does (``resolve_data_dir``:
``$MEMPP_DATA_DIR``, ./data, <repo>/data, <repo>/../shared/data, ~/.cache/mempp/data).

A test that needs data asks here and skips only when none is found, with a reason that says
"benchmark data". With ``MEMPP_REQUIRE_DATA=1`` (CI, where the data is present) such a skip is
turned into a failure by :func:`data_skip_as_failure` (called from ``tests/conftest.py``), so a test
that stops finding the data cannot go quiet.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from loaders import resolve_data_dir
from memory_protocol import DatasetError

REQUIRE_ENV = "MEMPP_REQUIRE_DATA"
MISSING = "benchmark data not found"  # every data skip reason starts with this


def find_data_root() -> Path | None:
    """The data directory the harness would use, or None when it finds none."""
    try:
        return resolve_data_dir(None)
    except DatasetError:
        return None


DATA_ROOT = find_data_root()


def data_path(relative: str) -> Path | None:
    """``<data dir>/<relative>`` when it exists, else None."""
    if DATA_ROOT is None:
        return None
    path = DATA_ROOT / relative
    return path if path.exists() else None


def missing_reason(relative: str) -> str:
    where = DATA_ROOT if DATA_ROOT is not None else "no data directory (set $MEMPP_DATA_DIR)"
    return f"{MISSING}: {relative} is not in {where}"


def require_data(relative: str) -> Path:
    """``<data dir>/<relative>``; skips the calling test (reason: benchmark data not found) when absent."""
    path = data_path(relative)
    if path is None:
        pytest.skip(missing_reason(relative))
    return path


def needs_data(*relatives: str) -> pytest.MarkDecorator:
    """A ``skipif`` mark for a module or test that reads ``<data dir>/<relative>`` for each one."""
    absent = [r for r in relatives if data_path(r) is None]
    return pytest.mark.skipif(bool(absent), reason=missing_reason(", ".join(absent)))


def data_skip_as_failure(report: Any, environ: dict[str, str] | os._Environ[str] = os.environ) -> None:
    """With ``MEMPP_REQUIRE_DATA=1``: a skipped test report whose reason mentions data becomes a failure."""
    if environ.get(REQUIRE_ENV) != "1" or not report.skipped:
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if re.search(r"\bdata\b", str(reason), flags=re.IGNORECASE):
        report.outcome = "failed"
        report.longrepr = f"{REQUIRE_ENV}=1 but a data test was skipped: {reason}"
