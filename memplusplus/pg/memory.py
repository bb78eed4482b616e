"""Mem++ on Postgres + pgvector: the same write and read rules as ``memplusplus.memory``, in SQL.

One table holds the rows (text, author, date, thread, ingest sequence and time, the archived flag
and the superseded_by link, a tsvector of the row's stems, its author-tag stems as text[], its
embedding as a pgvector ``vector``). A read sends one statement: the as-of scope S_theta goes in
every leg's WHERE clause (rows not archived, dated up to the end of the as-of day; undated rows
fail a dated question; no filter without an as-of date), so filtering happens before ranking.

- lexical: the authors' leg (``memplusplus.authors_lexical``): rows hold Postgres' English
  lexemes; the disjunctive leg matches the OR of their question words, the conjunctive one
  Postgres' own ``websearch_to_tsquery('english', question)`` (also the disjunctive leg's query
  when no question word is left), ranked by ``ts_rank_cd`` (cover density);
- tag: rows whose author-tag stems overlap the question's (``&&``, GIN index), most shared first;
- vector: exact inner product (``<#>``, a sequential scan, no ANN index) of the L2-normalised
  embeddings, which is the cosine the in-process leg computes as a dot product;
- the recency pool: the C most recently ingested in-scope rows.

Each leg keeps at most C rows, equal scores put the later-ingested row first; fusion
(``memplusplus.fusion.weighted_rrf``) and the top-k cut with its recency reserve
(``memplusplus.topk``) run in Python on those few rows, exactly as in process.

A memory without a ``table`` name lives in a temporary table of its own connection and vanishes
with it; a named memory is a regular table that a later process reopens.
"""

from __future__ import annotations

import hashlib
import re
import uuid
import weakref
from collections.abc import Callable, Iterable
from datetime import date, datetime
from pathlib import Path

from memplusplus.encoder import CachedEncoder
from memplusplus.english_tsearch import tsvector_positions
from memplusplus.evidence import RenderedContext, render
from memplusplus.facade import NUL, MemoryFacade, plan_ingest, without_nul
from memplusplus.diagnosis import Diagnosis, diagnosis
from memplusplus.fusion import weighted_rrf
from memplusplus.lexical import authors_or_terms, authors_query_words
from memplusplus.memory import MemPPConfig, tag_source
from memplusplus.pg import schema
from memplusplus.pg.lexemes import Lexemes, register_tsvector, tsquery
from memplusplus.pg.server import connect, require_extra, resolve_dsn
from memplusplus.topk import select_top_k
from memplusplus.scope import end_of_day
from memplusplus.text import content_terms
from memory_protocol.documents import Document, Hit

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
        register_tsvector(self.conn)
        temporary = table is None
        self.table = table or f"mempp_{uuid.uuid4().hex[:16]}"
        self.sql = schema.TableStatements.for_table(self.table)
        if temporary:
            self.conn.execute("SET temp_buffers = '1GB'")  # temp tables are cached per session
        for statement in schema.create_statements(self.table, self.encoder.dimension, temporary):
            self.conn.execute(statement)
        self._rows, self._aliases = self.conn.execute(self.sql.counts).fetchone()
        self._analyzed_at = self._rows
        self._active: dict[tuple[str | None, bytes], str] = {}
        if config.dedup:
            for author, text, doc_id in self.conn.execute(self.sql.active_texts):
                self._active[_text_key(author, text)] = doc_id

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> "PostgresMemPlusPlus":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self._rows

    # ----- write ---------------------------------------------------------------------------
    def _stored_ids(self) -> int:
        return self._rows + self._aliases

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        """Store documents in order (empty texts and repeats of an active row by the same author
        add no row); embeds all new texts in one batch. Returns each one's row id."""
        plan = plan_ingest(list(documents), self.config.dedup, self._active_repeat)
        pending, aliases, result = plan.new_rows, plan.aliases, plan.row_ids
        vectors = self.encoder.encode([doc.text for _, doc in pending], show_progress=show_progress)
        now = self.clock()
        rows = []
        for offset, ((index, doc), vector) in enumerate(zip(pending, vectors)):
            author_terms = list(dict.fromkeys(content_terms(tag_source(doc, self.config.tags) or "")))
            rows.append((self._rows + offset, doc.doc_id, doc.text, doc.author, doc.date, doc.thread, doc.evidence, now,
                         self._lexemes(doc.text), author_terms, vector))
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

    def _lexemes(self, text: str) -> Lexemes:
        """The row's tsvector: Postgres' English lexemes, as ``to_tsvector('english', text)`` gives
        them (both lexical legs follow the authors). A named table written before this rule held
        our own stems on the conjunctive path: write it again."""
        return Lexemes(tsvector_positions(text))

    def _write(self, rows: list[tuple], aliases: list[tuple[str, str]]) -> None:
        import psycopg

        try:
            with self.conn.transaction(), self.conn.cursor() as cursor:
                if rows:
                    with cursor.copy(self.sql.copy_rows) as copy:
                        copy.set_types(schema.ROW_TYPES)
                        for row in rows:
                            copy.write_row(row)
                if aliases:
                    cursor.executemany(self.sql.insert_alias, aliases)
        except psycopg.errors.UniqueViolation as exc:
            raise ValueError(f"duplicate doc_id: ids must be unique within a memory ({exc.diag.message_detail})") from exc

    def archive(self, doc_id: str) -> None:
        """Take a row out of every scope without deleting it."""
        found = None if NUL in doc_id else self.conn.execute(self.sql.archive, (doc_id,)).fetchone()  # no id holds NUL
        if found is None:
            raise KeyError(doc_id)
        key = _text_key(found[0], found[1])
        if self._active.get(key) == doc_id:
            del self._active[key]

    def supersede(self, old_doc_id: str, new_doc_id: str) -> None:
        """Link ``old`` to the row that replaces it; the old row stays stored and in scope."""
        for doc_id in (old_doc_id, new_doc_id):
            if NUL in doc_id:
                raise KeyError(doc_id)  # no id holds NUL (memplusplus.facade.storable)
        if self.conn.execute(self.sql.supersede, (new_doc_id, old_doc_id)).fetchone() is None:
            raise KeyError(old_doc_id)

    # ----- read ----------------------------------------------------------------------------
    def leg_rankings(self, query: str, as_of: date | datetime | None) -> tuple[dict[str, list[int]], list[int]]:
        """Each enabled leg's ranking (row seqs, best first, at most C) and the recency pool."""
        cfg = self.config
        query = without_nul(query)  # Postgres text holds no NUL; the in-process leg does the same
        terms = content_terms(query, cfg.min_term_chars, cfg.max_query_terms)
        legs = []
        params: dict[str, object] = {"limit": cfg.candidates, "theta": None if as_of is None else end_of_day(as_of)}
        websearch = cfg.conjunctive or not authors_query_words(query, cfg.min_term_chars, cfg.max_query_terms)
        text_query = schema.WEBSEARCH_QUERY if websearch else schema.LEXEMES_QUERY
        if cfg.weight("lexical") > 0:
            if websearch:
                legs.append("lexical")
                params["question"] = query
            else:
                or_query = tsquery(authors_or_terms(query, cfg.min_term_chars, cfg.max_query_terms), False)
                if or_query:
                    legs.append("lexical")
                    params["tsquery"] = or_query
        if cfg.weight("tag") > 0 and terms:
            legs.append("tag")
            params["terms"] = terms
        if cfg.weight("vector") > 0:
            legs.append("vector")
            params["vector"] = self.encoder.encode_one(query)
        statement = schema.legs_query(self.table, legs, dated=as_of is not None, text_query=text_query)
        scored: dict[str, list[tuple[float, int]]] = {leg: [] for leg in [*legs, "recent"]}
        for leg, seq, key in self.conn.execute(statement, params):
            scored[leg].append((key, seq))
        rankings = {leg: [seq for _, seq in sorted(scored[leg], key=lambda p: (-p[0], -p[1]))] for leg in legs}
        if cfg.weight("lexical") > 0 and "lexical" not in rankings:
            rankings["lexical"] = []
        if cfg.weight("tag") > 0 and "tag" not in rankings:
            rankings["tag"] = []
        recent = [seq for _, seq in sorted(scored["recent"], key=lambda p: -p[1])]
        return rankings, recent

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        """Top-k hits for ``query`` among rows visible at ``as_of``, in rank order."""
        k = self.config.k if k is None else k
        if self._rows == 0 or k <= 0:
            return []
        rankings, recent = self.leg_rankings(query, as_of)
        fused = weighted_rrf(rankings, {leg: self.config.weight(leg) for leg in rankings}, self.config.gamma)
        wanted = sorted({row.seq for row in fused} | set(recent))
        details = {row[0]: row for row in self.conn.execute(self.sql.details, (wanted,))}
        recency = {seq: row[6] for seq, row in details.items()}
        chosen = select_top_k(fused, recent, recency, k, self.config.recency_reserve)
        hits = []
        for row, reserve in chosen:
            _, doc_id, text, author, row_date, thread, _, evidence = details[row.seq]
            hits.append(Hit(doc_id, text, row_date, author, row.score, dict(row.leg_ranks), reserve, thread, evidence=evidence))
        return hits

    search = retrieve

    def diagnose(self, query: str, as_of: date | datetime | None, doc_ids: Iterable[str], depth: int) -> Diagnosis:
        """Where each of ``doc_ids`` stood for ``query``: its 1-based rank in every leg and in the
        fused list down to ``depth`` (None below it), from the rankings ``retrieve`` fuses, and how
        many rows each leg returned. Changes nothing ``retrieve`` returns."""
        wanted = list(dict.fromkeys(doc_ids))
        stored_ids = [doc_id for doc_id in wanted if NUL not in doc_id]  # an id with NUL is never stored
        seq_of = {doc_id: int(seq) for doc_id, seq in self.conn.execute(self.sql.locate, (stored_ids,))}
        theta = None if as_of is None else end_of_day(as_of)
        visible = {int(seq) for (seq,) in self.conn.execute(
            schema.in_scope_query(self.table, as_of is not None), {"seqs": list(seq_of.values()), "theta": theta})}
        rankings = self.leg_rankings(query, as_of)[0] if self._rows else {}
        fused = weighted_rrf(rankings, {leg: self.config.weight(leg) for leg in rankings}, self.config.gamma)
        return diagnosis(wanted, seq_of, {seq: seq in visible for seq in seq_of.values()}, rankings, fused, depth)

    def render(self, hits: list[Hit], budget: int | None = None) -> RenderedContext:
        return render(hits, budget)


__all__ = ["PostgresMemPlusPlus"]
