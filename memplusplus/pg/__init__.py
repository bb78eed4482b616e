"""Mem++ on Postgres + pgvector (``pip install -e ".[postgres]"``).

    from memplusplus.pg import PostgresMemPlusPlus
    memory = PostgresMemPlusPlus()            # $POSTGRES_URL, else an embedded server
    memory.add("We moved the launch to May 3.", author="Maya Patel", date=datetime(2023, 4, 1))
    hits = memory.search("When is the launch?", as_of=date(2023, 4, 2), k=5)

Importing this package loads nothing of the server: the names below load on first use, and a
missing package of the postgres extra is one ``ConfigError`` line naming the extra
(``memplusplus.pg.server.require_extra``).
"""

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
