"""Mem++ on Postgres + pgvector (``pip install -e ".[postgres]"``): ``PostgresMemPlusPlus`` has the
in-process memory's API. Importing this package loads nothing of the server; a missing package of
the extra is one ``ConfigError`` line (``memplusplus.pg.server.require_extra``)."""

from __future__ import annotations

from typing import Any

__all__ = ["POSTGRES_URL_ENV", "PostgresMemPlusPlus", "resolve_dsn"]


def __getattr__(name: str) -> Any:
    if name == "PostgresMemPlusPlus":
        from memplusplus.pg.memory import PostgresMemPlusPlus

        return PostgresMemPlusPlus
    if name in ("POSTGRES_URL_ENV", "resolve_dsn"):
        from memplusplus.pg import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
