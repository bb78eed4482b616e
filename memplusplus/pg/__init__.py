"""Mem++ on Postgres + pgvector (``pip install 'mempp-harness[postgres]'``).

    from memplusplus.pg import PostgresMemPlusPlus
    memory = PostgresMemPlusPlus()            # $POSTGRES_URL, else an embedded server
    memory.add("We moved the launch to May 3.", author="Maya Patel", date=datetime(2023, 4, 1))
    hits = memory.search("When is the launch?", as_of=date(2023, 4, 2), k=5)
"""

from memplusplus.pg.memory import PostgresMemPlusPlus
from memplusplus.pg.server import POSTGRES_URL_ENV, resolve_dsn

__all__ = ["POSTGRES_URL_ENV", "PostgresMemPlusPlus", "resolve_dsn"]
