"""Mem++ on Postgres + pgvector: the rules of ``memplusplus.memory``, one SQL statement per read.

One table holds the rows with their English lexemes (Postgres' own ``to_tsvector('english', text)``
in a generated column, as the authors' code), author-tag stems and embedding; the as-of scope sits
in every leg's WHERE clause. Lexical: the authors' queries (``to_tsquery`` of their OR words, else
``websearch_to_tsquery``) ranked by ``ts_rank_cd``; tag: stem overlap (``&&``); vector: exact inner
product (``<#>``). Fusion and the top-k cut run in Python. Without a ``table`` name the memory is a
temporary table of its connection. Table names are checked (lower-case letters, digits, _), so they
are formatted into the SQL."""

from __future__ import annotations

import hashlib
import re
import uuid
import weakref
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from pathlib import Path

from memplusplus.encoder import CachedEncoder
from memplusplus.evidence import RenderedContext, render
from memplusplus.lexical import authors_query_words
from memplusplus.memory import NUL, MemoryFacade, MemPPConfig, plan_ingest, tag_source, without_nul
from memplusplus.pg.server import connect, require_extra, resolve_dsn
from memplusplus.ranking import Diagnosis, diagnosis, end_of_day, select_top_k
from memplusplus.settings import LEGS
from memplusplus.text import content_terms
from memory_protocol import ConfigError, Document, Hit, StoreSize

COLUMNS = "seq, doc_id, text, author, date, thread, evidence, ingested_at, author_terms, embedding"
ROW_TYPES = ["bigint", "text", "text", "text", "timestamp", "text", "text", "timestamp", "text[]", "vector"]


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
            lex tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
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
    "lexemes_generated": "SELECT attgenerated FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'lex'",
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


# The lexical leg's query, Postgres' own as in the authors' code: their OR of question words through
# to_tsquery (store.py:373-377), or the whole question through websearch_to_tsquery (store.py:379).
OR_QUERY = "to_tsquery('english', %(question)s)"
WEBSEARCH_QUERY = "websearch_to_tsquery('english', %(question)s)"


def legs_query(table: str, legs: Sequence[str], dated: bool, text_query: str = OR_QUERY) -> str:
    """One statement returning (leg, seq, score) for each leg's top C and the recency pool;
    ``text_query`` is the lexical leg's tsquery expression."""
    where = scope(dated)
    return " UNION ALL ".join(
        f"({_LEG_SQL[leg].format(table=table, scope=where, tsquery=text_query)})" for leg in [*legs, "recent"]
    )


_TABLE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,40}$")


def _text_key(author: str | None, text: str) -> tuple[str | None, bytes]:
    return author, hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class PostgresMemPlusPlus(MemoryFacade):
    """Mem++ whose rows live in Postgres; ``add``/``search`` and ``ingest``/``retrieve``/``render``."""

    def __init__(
        self,
        config: MemPPConfig = MemPPConfig(),
        encoder: CachedEncoder | None = None,
        clock: Callable[[], datetime] = datetime.now,
        dsn: str | None = None,
        data_dir: str | Path | None = None,
        table: str | None = None,
    ):
        if config.lexical_ranker != "cover_density":
            raise ValueError("the postgres backend ranks the lexical leg by ts_rank_cd (lexical_ranker=cover_density)")
        if config.ann != "none":
            raise ValueError("the postgres backend's vector leg is exact pgvector; ann=hnsw/ivf is in-process only")
        if table is not None and not _TABLE_NAME.match(table):
            raise ValueError(f"table name {table!r}: use lower-case letters, digits and _ (at most 41)")
        require_extra("psycopg", "pgvector")  # before an embedded server is started for nothing
        super().__init__(config, encoder, clock)
        self.conn = connect(resolve_dsn(dsn, data_dir))
        self._finalizer = weakref.finalize(self, self.conn.close)
        temporary = table is None
        self.table = table or f"mempp_{uuid.uuid4().hex[:16]}"
        self.sql = table_statements(self.table)
        if temporary:
            self.conn.execute("SET temp_buffers = '1GB'")  # temp tables are cached per session
        for statement in create_statements(self.table, self.encoder.dimension, temporary):
            self.conn.execute(statement)
        if self.conn.execute(self.sql["lexemes_generated"], (self.table,)).fetchone() != ("s",):
            raise ConfigError(f"table {self.table} was written before Postgres computed its lexemes; "
                              "drop it or name another table")
        self._rows, self._aliases = self.conn.execute(self.sql["counts"]).fetchone()
        self._analyzed_at = self._rows
        self._active: dict[tuple[str | None, bytes], str] = {}
        if config.dedup:
            for author, text, doc_id in self.conn.execute(self.sql["active_texts"]):
                self._active[_text_key(author, text)] = doc_id

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> "PostgresMemPlusPlus":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self._rows

    def _stored_ids(self) -> int:
        return self._rows + self._aliases

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        """Store documents in order, embedding new texts in one batch; each one's row id."""
        plan = plan_ingest(list(documents), self.config.dedup, self._active_repeat)
        pending, aliases, result = plan.new_rows, plan.aliases, plan.row_ids
        vectors = self.encoder.encode([doc.text for _, doc in pending], show_progress=show_progress)
        now = self.clock()
        rows = []
        for offset, ((index, doc), vector) in enumerate(zip(pending, vectors)):
            author_terms = list(dict.fromkeys(content_terms(tag_source(doc, self.config.tags) or "")))
            rows.append((self._rows + offset, doc.doc_id, doc.text, doc.author, doc.date, doc.thread, doc.evidence, now,
                         author_terms, vector))
            result[index] = doc.doc_id
        self._write(rows, aliases)
        self._rows += len(rows)
        self._aliases += len(aliases)
        self._active.update((_text_key(doc.author, doc.text), doc.doc_id) for _, doc in pending)
        if self._rows >= 2 * max(self._analyzed_at, 500) or (rows and self._analyzed_at == 0):
            self.conn.execute(f"ANALYZE {self.table}")  # the planner needs statistics to choose GIN scans
            self._analyzed_at = self._rows
        return result

    def _active_repeat(self, doc: Document) -> str | None:
        return self._active.get(_text_key(doc.author, doc.text))

    def _write(self, rows: list[tuple], aliases: list[tuple[str, str]]) -> None:
        import psycopg

        try:
            with self.conn.transaction(), self.conn.cursor() as cursor:
                if rows:
                    with cursor.copy(self.sql["copy_rows"]) as copy:
                        copy.set_types(ROW_TYPES)
                        for row in rows:
                            copy.write_row(row)
                if aliases:
                    cursor.executemany(self.sql["insert_alias"], aliases)
        except psycopg.errors.UniqueViolation as exc:
            raise ValueError(f"duplicate doc_id: ids must be unique within a memory ({exc.diag.message_detail})") from exc

    def archive(self, doc_id: str) -> None:
        """Take a row out of every scope without deleting it."""
        found = None if NUL in doc_id else self.conn.execute(self.sql["archive"], (doc_id,)).fetchone()  # no id holds NUL
        if found is None:
            raise KeyError(doc_id)
        key = _text_key(found[0], found[1])
        if self._active.get(key) == doc_id:
            del self._active[key]

    def supersede(self, old_doc_id: str, new_doc_id: str) -> None:
        """Link ``old`` to the row that replaces it; the old row stays stored and in scope."""
        for doc_id in (old_doc_id, new_doc_id):
            if NUL in doc_id:
                raise KeyError(doc_id)  # no id holds NUL (memplusplus.memory.storable)
        if self.conn.execute(self.sql["supersede"], (new_doc_id, old_doc_id)).fetchone() is None:
            raise KeyError(old_doc_id)

    def leg_rankings(self, query: str, as_of: date | datetime | None) -> tuple[dict[str, list[int]], list[int]]:
        """Each enabled leg's ranking (row seqs, best first, at most C) and the recency pool."""
        cfg = self.config
        query = without_nul(query)  # Postgres text holds no NUL; the in-process leg does the same
        terms = content_terms(query, cfg.min_term_chars, cfg.max_query_terms)
        legs = []
        params: dict[str, object] = {"limit": cfg.candidates, "theta": None if as_of is None else end_of_day(as_of)}
        words = [] if cfg.conjunctive else authors_query_words(query, cfg.min_term_chars, cfg.max_query_terms)
        if cfg.weight("lexical") > 0:  # words of [a-z0-9] only: no tsquery operator among them
            legs.append("lexical")
            params["question"] = " | ".join(words) if words else query
        if cfg.weight("tag") > 0 and terms:
            legs.append("tag")
            params["terms"] = terms
        if cfg.weight("vector") > 0:
            legs.append("vector")
            params["vector"] = self.encoder.encode_one(query)
        text_query = OR_QUERY if words else WEBSEARCH_QUERY
        statement = legs_query(self.table, legs, dated=as_of is not None, text_query=text_query)
        enabled = [leg for leg in LEGS if cfg.weight(leg) > 0]  # a leg with nothing to ask ranks no row
        scored: dict[str, list[tuple[float, int]]] = {leg: [] for leg in [*enabled, "recent"]}
        for leg, seq, key in self.conn.execute(statement, params):
            scored[leg].append((key, seq))
        rankings = {leg: [seq for _, seq in sorted(scored[leg], key=lambda p: (-p[0], -p[1]))] for leg in enabled}
        recent = [seq for _, seq in sorted(scored["recent"], key=lambda p: -p[1])]
        return rankings, recent

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        """Top-k hits for ``query`` among rows visible at ``as_of``, in rank order."""
        k = self.config.k if k is None else k
        if self._rows == 0 or k <= 0:
            return []
        rankings, recent = self.leg_rankings(query, as_of)
        fused = self.fuse(rankings)
        wanted = sorted({row.seq for row in fused} | set(recent))
        details = {row[0]: row for row in self.conn.execute(self.sql["details"], (wanted,))}
        recency = {seq: row[6] for seq, row in details.items()}
        chosen = select_top_k(fused, recent, recency, k, self.config.recency_reserve)
        hits = []
        for row, reserve in chosen:
            _, doc_id, text, author, row_date, thread, _, evidence = details[row.seq]
            hits.append(Hit(doc_id, text, row_date, author, row.score, dict(row.leg_ranks), reserve, thread, evidence=evidence))
        return hits

    search = retrieve

    def store_size(self) -> StoreSize:
        """On disk: Postgres' pg_total_relation_size of the rows and aliases tables (indexes, TOAST
        included); in memory: not ours to say (the server's buffers are shared)."""
        (disk,) = self.conn.execute("SELECT pg_total_relation_size(%s::regclass) + pg_total_relation_size(%s::regclass)",
                                    (self.table, f"{self.table}_aliases")).fetchone()
        return StoreSize(int(disk), None)

    def diagnose(self, query: str, as_of: date | datetime | None, doc_ids: Iterable[str], depth: int) -> Diagnosis:
        """Each of ``doc_ids``' 1-based rank in every leg and the fused list, down to ``depth``."""
        wanted = list(dict.fromkeys(doc_ids))
        stored_ids = [doc_id for doc_id in wanted if NUL not in doc_id]  # an id with NUL is never stored
        seq_of = {doc_id: int(seq) for doc_id, seq in self.conn.execute(self.sql["locate"], (stored_ids,))}
        theta = None if as_of is None else end_of_day(as_of)
        visible = {int(seq) for (seq,) in self.conn.execute(
            in_scope_query(self.table, as_of is not None), {"seqs": list(seq_of.values()), "theta": theta})}
        rankings = self.leg_rankings(query, as_of)[0] if self._rows else {}
        fused = self.fuse(rankings)
        return diagnosis(wanted, seq_of, {seq: seq in visible for seq in seq_of.values()}, rankings, fused, depth)

    def render(self, hits: list[Hit], budget: int | None = None) -> RenderedContext:
        return render(hits, budget)


__all__ = ["PostgresMemPlusPlus"]
