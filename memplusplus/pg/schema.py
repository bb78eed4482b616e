"""The SQL of the Postgres backend: one rows table (plus an aliases table) per memory.

Table names are checked by the caller (lower-case letters, digits, _), so they are formatted in.
"""

from __future__ import annotations

from collections.abc import Sequence

COLUMNS = "seq, doc_id, text, author, date, thread, evidence, ingested_at, lex, author_terms, embedding"
ROW_TYPES = ["bigint", "text", "text", "text", "timestamp", "text", "text", "timestamp", "tsvector", "text[]", "vector"]


def create_statements(table: str, dimension: int, temporary: bool) -> list[str]:
    kind = "TEMPORARY TABLE" if temporary else "TABLE"
    return [
        f"""CREATE {kind} IF NOT EXISTS {table} (
            seq bigint PRIMARY KEY,
            doc_id text NOT NULL UNIQUE,
            text text NOT NULL,
            author text,
            date timestamp,
            thread text,
            evidence text NOT NULL DEFAULT 'header',
            ingested_at timestamp NOT NULL,
            archived boolean NOT NULL DEFAULT false,
            superseded_by text,
            lex tsvector NOT NULL,
            author_terms text[] NOT NULL,
            embedding vector({int(dimension)}) NOT NULL
        )""",
        # Keep vectors in the row, uncompressed: the exact scan reads every one of them.
        f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE PLAIN",
        f"CREATE INDEX IF NOT EXISTS {table}_lex ON {table} USING gin (lex)",
        f"CREATE INDEX IF NOT EXISTS {table}_tags ON {table} USING gin (author_terms)",
        f"CREATE {kind} IF NOT EXISTS {table}_aliases (doc_id text PRIMARY KEY, target text NOT NULL)",
    ]


def counts(table: str) -> str:
    return f"SELECT (SELECT count(*) FROM {table}), (SELECT count(*) FROM {table}_aliases)"


def active_texts(table: str) -> str:
    return f"SELECT author, text, doc_id FROM {table} WHERE NOT archived ORDER BY seq"


def copy_rows(table: str) -> str:
    return f"COPY {table} ({COLUMNS}) FROM STDIN (FORMAT BINARY)"


def insert_alias(table: str) -> str:
    return f"INSERT INTO {table}_aliases (doc_id, target) VALUES (%s, %s)"


def archive(table: str) -> str:
    return f"UPDATE {table} SET archived = true WHERE doc_id = %s RETURNING author, text"


def supersede(table: str) -> str:
    return f"UPDATE {table} SET superseded_by = %s WHERE doc_id = %s RETURNING seq"


def details(table: str) -> str:
    """What a hit shows, and the recency of a row (its date, else its ingest time)."""
    return (
        f"SELECT seq, doc_id, text, author, date, thread, coalesce(date, ingested_at), evidence "
        f"FROM {table} WHERE seq = ANY(%s)"
    )


def scope(dated: bool) -> str:
    """S_theta: rows not archived; with an as-of date, only rows dated up to theta (NULL fails)."""
    return "NOT archived AND date <= %(theta)s" if dated else "NOT archived"


_LEG_SQL = {
    "lexical": (
        "SELECT 'lexical' AS leg, seq, ts_rank_cd(lex, %(tsquery)s::tsquery)::float8 AS key FROM {table} "
        "WHERE {scope} AND lex @@ %(tsquery)s::tsquery ORDER BY key DESC, seq DESC LIMIT %(limit)s"
    ),
    "tag": (
        # author_terms holds distinct stems, so counting those among the question's is the overlap.
        "SELECT 'tag' AS leg, seq, (SELECT count(*) FROM unnest(author_terms) AS term "
        "WHERE term = ANY(%(terms)s::text[]))::float8 AS key FROM {table} "
        "WHERE {scope} AND author_terms && %(terms)s::text[] ORDER BY key DESC, seq DESC LIMIT %(limit)s"
    ),
    "vector": (
        "SELECT 'vector' AS leg, seq, -(embedding <#> %(vector)s) AS key FROM {table} "
        "WHERE {scope} ORDER BY embedding <#> %(vector)s, seq DESC LIMIT %(limit)s"
    ),
    "recent": (
        "SELECT 'recent' AS leg, seq, 0::float8 AS key FROM {table} "
        "WHERE {scope} ORDER BY seq DESC LIMIT %(limit)s"
    ),
}


def legs_query(table: str, legs: Sequence[str], dated: bool) -> str:
    """One statement returning (leg, seq, score) for each leg's top C and the recency pool."""
    where = scope(dated)
    return " UNION ALL ".join(f"({_LEG_SQL[leg].format(table=table, scope=where)})" for leg in [*legs, "recent"])
