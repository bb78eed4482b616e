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


# One statement per job on a memory's own tables; ``{table}`` is the rows table.
_TABLE_SQL = {
    "counts": "SELECT (SELECT count(*) FROM {table}), (SELECT count(*) FROM {table}_aliases)",
    "active_texts": "SELECT author, text, doc_id FROM {table} WHERE NOT archived ORDER BY seq",
    "copy_rows": "COPY {table} (" + COLUMNS + ") FROM STDIN (FORMAT BINARY)",
    "insert_alias": "INSERT INTO {table}_aliases (doc_id, target) VALUES (%s, %s)",
    "archive": "UPDATE {table} SET archived = true WHERE doc_id = %s RETURNING author, text",
    "supersede": "UPDATE {table} SET superseded_by = %s WHERE doc_id = %s RETURNING seq",
    # The row holding each given document id (through an alias when it repeats an active row).
    "locate": (
        "SELECT d.doc_id, r.seq FROM unnest(%s::text[]) AS d(doc_id) "
        "LEFT JOIN {table}_aliases a ON a.doc_id = d.doc_id JOIN {table} r ON r.doc_id = coalesce(a.target, d.doc_id)"
    ),
    # What a hit shows, and the recency of a row (its date, else its ingest time).
    "details": (
        "SELECT seq, doc_id, text, author, date, thread, coalesce(date, ingested_at), evidence "
        "FROM {table} WHERE seq = ANY(%s)"
    ),
}


def table_statements(table: str) -> dict[str, str]:
    """The statements above with one memory's table name formatted in."""
    return {name: sql.format(table=table) for name, sql in _TABLE_SQL.items()}


def in_scope_query(table: str, dated: bool) -> str:
    """Which of the given row seqs (``%(seqs)s``) are in S_theta."""
    return f"SELECT seq FROM {table} WHERE seq = ANY(%(seqs)s) AND {scope(dated)}"


def scope(dated: bool) -> str:
    """S_theta: rows not archived; with an as-of date, only rows dated up to theta (NULL fails)."""
    return "NOT archived AND date <= %(theta)s" if dated else "NOT archived"


_LEG_SQL = {
    "lexical": (
        "SELECT 'lexical' AS leg, seq, ts_rank_cd(lex, {tsquery})::float8 AS key FROM {table} "
        "WHERE {scope} AND lex @@ {tsquery} ORDER BY key DESC, seq DESC LIMIT %(limit)s"
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


# The lexical leg's query: the authors' OR of lexemes sent as a tsquery literal, or the whole
# question through Postgres' own websearch_to_tsquery (their conjunctive path, store.py:379).
LEXEMES_QUERY = "%(tsquery)s::tsquery"
WEBSEARCH_QUERY = "websearch_to_tsquery('english', %(question)s)"


def legs_query(table: str, legs: Sequence[str], dated: bool, text_query: str = LEXEMES_QUERY) -> str:
    """One statement returning (leg, seq, score) for each leg's top C and the recency pool;
    ``text_query`` is the lexical leg's tsquery expression."""
    where = scope(dated)
    return " UNION ALL ".join(
        f"({_LEG_SQL[leg].format(table=table, scope=where, tsquery=text_query)})" for leg in [*legs, "recent"]
    )
