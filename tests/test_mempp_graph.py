"""Mem^g++ on a scripted model: call counts, triples only after the fused rows, at most five."""

from datetime import datetime

from memplusplus import Document, MemPPConfig
from memplusplus.evidence import render
from memplusplus.graph import MAX_TRIPLES, GraphMemPP, units
from tests.write_time_fakes import ScriptedLLM, TopicEncoder

CONFIG = MemPPConfig(k=3, recency_reserve=0)


def reply(user: str):
    if user.startswith("Entities:"):  # the relation call: eight triples around "Atlas"
        return {"triples": [{"subject": "Atlas", "relation": f"rel{i}", "object": f"thing{i}"} for i in range(8)]}
    if "?" in user:  # the question
        return {"entities": ["atlas"]}
    return {"entities": ["Atlas", "Ann"]}


def docs() -> list[Document]:
    return [Document(f"d{i}", f"topic{i} Atlas note {i}", "ann", datetime(2024, 1, 1 + i)) for i in range(4)]


def test_two_calls_per_document_one_per_question_and_triples_follow_the_fused_rows():
    llm = ScriptedLLM(reply)
    memory = GraphMemPP(CONFIG, llm, encoder=TopicEncoder())
    memory.ingest(docs())
    assert len(llm.calls) == 2 * 4 and memory.write_calls == 8
    hits = memory.retrieve("What is Atlas?", k=3)
    assert len(llm.calls) == 9  # one call for the question
    fused, triples = hits[:3], hits[3:]
    assert all(not h.doc_id.startswith("triple:") for h in fused)
    assert len(triples) == MAX_TRIPLES == 5
    assert all(h.doc_id.startswith("triple:") for h in triples)
    assert triples[0].text == "Atlas — rel0 — thing0"
    assert triples[0].source_ids == ("d0",)
    context = render(hits).text
    last_row = max(context.index(h.text) for h in fused)
    assert min(context.index(h.text) for h in triples) > last_row


def test_no_matching_entity_adds_no_triple_and_failed_calls_add_nothing():
    llm = ScriptedLLM(lambda user: None if "?" not in user else {"entities": ["atlas"]})
    memory = GraphMemPP(CONFIG, llm, encoder=TopicEncoder())
    memory.ingest(docs())
    assert memory.graph.number_of_edges() == 0
    assert len(memory.retrieve("What is Atlas?", k=3)) == 3


def test_as_of_switch_with_nothing_in_scope_returns_no_triple():
    memory = GraphMemPP(CONFIG, ScriptedLLM(reply), encoder=TopicEncoder(), graph_as_of=True)
    memory.ingest(docs())
    hits = memory.retrieve("What is Atlas?", as_of=datetime(2023, 12, 1), k=3)
    assert not [h for h in hits if h.doc_id.startswith("triple:")]
    memory.graph_as_of = False
    hits = memory.retrieve("What is Atlas?", as_of=datetime(2023, 12, 1), k=3)
    assert len([h for h in hits if h.doc_id.startswith("triple:")]) == 5


def test_conversational_turns_are_chunked_by_ten():
    turns = [Document(f"t{i}", f"turn {i}", "Sam", author_role="speaker") for i in range(23)]
    assert [len(u) for u in units(turns, 10)] == [10, 10, 3]
    mixed = [Document("a", "doc a"), *turns[:2], Document("b", "doc b")]
    assert [[d.doc_id for d in u] for u in units(mixed, 10)] == [["a"], ["t0", "t1"], ["b"]]
