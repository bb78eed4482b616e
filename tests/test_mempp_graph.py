"""Mem^g++ on a scripted model: call counts, triples only after the fused rows, at most five."""

from datetime import datetime

import pytest

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
    assert len(llm.calls) == 2 * 4
    hits = memory.retrieve("What is Atlas?", k=3)
    assert len(llm.calls) == 9  # one call for the question
    fused, triples = hits[:3], hits[3:]
    assert all(not h.doc_id.startswith("triple:") for h in fused)
    assert len(triples) == MAX_TRIPLES == 5
    assert all(h.doc_id.startswith("triple:") for h in triples)
    assert triples[0].text == "Atlas — rel0 — thing0"
    # every document states the same eight relations: each is one merged relation (as Mem0^g's MERGE),
    # carrying all four documents, so the five are distinct
    assert triples[0].source_ids == ("d0", "d1", "d2", "d3") and triples[0].date == datetime(2024, 1, 4)
    assert len({h.text.casefold() for h in triples}) == 5
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


# ---- the read as Mem0^g, on the real all-MiniLM-L6-v2 encoder (the `encoder` fixture)
def graph_memory(encoder, triples_by_text: dict[str, list[tuple[str, str, str]]], question_entities: list[str]):
    """A Mem^g++ whose model states ``triples_by_text[text]`` for each document and names
    ``question_entities`` for any question."""

    def reply(user: str):
        if user.startswith("Entities:"):
            text = user.split("Text:\n", 1)[1]
            return {"triples": [{"subject": s, "relation": r, "object": o} for s, r, o in triples_by_text[text]]}
        if user.endswith("?"):
            return {"entities": question_entities}
        return {"entities": sorted({name for s, _, o in triples_by_text[user] for name in (s, o)})}

    memory = GraphMemPP(CONFIG, ScriptedLLM(reply), encoder=encoder)
    docs = [Document(f"d{i}", text, "ann", datetime(2024, 1, 1 + i)) for i, text in enumerate(triples_by_text)]
    memory.ingest(docs)
    return memory


def triple_texts(memory: GraphMemPP, question: str) -> list[str]:
    return [h.text for h in memory.retrieve(question, k=3) if h.doc_id.startswith("triple:")]


def test_question_entities_match_graph_entities_by_embedding_similarity_of_at_least_0_7(encoder):
    memory = graph_memory(encoder, {
        "Project Atlas is led by Alice.": [("Project Atlas", "led by", "Alice")],
        "Atlas Corp supplies the racks.": [("Atlas Corp", "supplies", "racks")],
        "Atlas Holdings bought a stake.": [("Atlas Holdings", "bought", "stake")],
        "The payroll system runs on SAP.": [("payroll system", "runs on", "SAP")],
    }, question_entities=["Atlas project"])
    assert sorted(triple_texts(memory, "Who leads the Atlas project?")) == [
        "Atlas Corp — supplies — racks", "Project Atlas — led by — Alice"]
    matched = memory.matched_entities(["Atlas project"])
    # cosines with "Atlas project": project atlas 0.8964, atlas corp 0.7399 | atlas holdings 0.6910, payroll system 0.1786
    assert matched == pytest.approx({"project atlas": 0.8964, "atlas corp": 0.7399}, abs=1e-3)


BUSY = [
    ("Atlas", "located in", "Berlin"),
    ("Atlas", "uses", "Postgres"),
    ("Atlas", "owned by", "Alice"),
    ("Atlas", "ships in", "May"),
    ("Atlas", "depends on", "Hermes"),
    ("Atlas", "budget is", "12k"),
    ("Atlas", "tested by", "QA team"),
    ("Atlas", "budget approved by", "Carol"),
]


def test_a_busy_entitys_relations_come_back_by_bm25_relevance_not_by_age(encoder):
    memory = graph_memory(encoder, {f"Atlas note {i}.": [t] for i, t in enumerate(BUSY)}, question_entities=["Atlas"])
    got = triple_texts(memory, "Who approved the Atlas budget?")
    assert len(got) == MAX_TRIPLES
    # the newest relation shares "approved" and "budget" with the question, the sixth "budget": they lead
    assert got[:2] == ["Atlas — budget approved by — Carol", "Atlas — budget is — 12k"]
    assert got != [f"Atlas — {r} — {o}" for _, r, o in BUSY[:MAX_TRIPLES]]  # not the five oldest


def test_only_relations_one_hop_from_a_matched_entity_are_read(encoder):
    memory = graph_memory(encoder, {
        "Atlas depends on Hermes.": [("Atlas", "depends on", "Hermes")],
        "Hermes was built by the Zed team.": [("Hermes", "built by", "Zed team")],
        "Carol manages Atlas.": [("Carol", "manages", "Atlas")],
    }, question_entities=["Atlas"])
    # outgoing and incoming relations of Atlas; Hermes — Zed team is two hops away
    assert sorted(triple_texts(memory, "What does Atlas depend on?")) == [
        "Atlas — depends on — Hermes", "Carol — manages — Atlas"]
    assert set(memory.matched_entities(["Atlas"])) == {"atlas"}  # hermes 0.4062, carol 0.1815, zed team 0.2727


def test_repeated_triples_differing_only_in_case_and_spaces_are_one_candidate():
    def stated(user: str):
        if user.startswith("Entities:"):
            spelled = ["Atlas", "atlas ", "ATLAS"][int(user.rsplit("note ", 1)[1][0]) % 3]
            return {"triples": [{"subject": spelled, "relation": "owned by", "object": "Ann"},
                                {"subject": "Atlas", "relation": f"step{user.rsplit('note ', 1)[1][0]}", "object": "x"}]}
        return reply(user)

    memory = GraphMemPP(CONFIG, ScriptedLLM(stated), encoder=TopicEncoder())
    memory.ingest(docs())
    texts = [t.text for t in memory.triples_for("Who owns Atlas?")]
    keys = [" ".join(t.casefold().split()) for t in texts]
    assert len(keys) == len(set(keys)) == 5 and texts.count("Atlas — owned by — Ann") == 1
