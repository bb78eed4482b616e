"""The baselines behind Mem++'s protocol: real encoder, asserted values."""

from datetime import date, datetime

from baselines.documents import BM25Memory, FullContextMemory, VectorMemory
from baselines.rag import RAGMemory, build_history
from memplusplus import Document, render


def docs() -> list[Document]:
    return [
        Document("a", "The warehouse in Lyon closes in March.", "Ann", datetime(2023, 1, 1)),
        Document("b", "Invoices for the Lyon warehouse are overdue.", "Bob", datetime(2023, 2, 1)),
        Document("c", "Team lunch moved to Thursday.", "Cid", datetime(2023, 3, 1)),
        Document("d", "", "Dee", datetime(2023, 3, 2)),
    ]


def test_bm25_ranks_by_term_weight_and_can_respect_as_of():
    plain = BM25Memory(k=5)
    assert plain.ingest(docs()) == ["a", "b", "c", None]
    assert [h.doc_id for h in plain.retrieve("overdue invoices Lyon")] == ["b", "a"]
    scoped = BM25Memory(k=5, respect_as_of=True)
    scoped.ingest(docs())
    assert [h.doc_id for h in scoped.retrieve("overdue invoices Lyon", as_of=date(2023, 1, 15))] == ["a"]
    assert [h.leg_ranks for h in plain.retrieve("Lyon")] == [{"lexical": 0}, {"lexical": 1}]


def test_vector_baseline_returns_cosine_order(encoder):
    memory = VectorMemory(k=2, encoder=encoder)
    memory.ingest(docs())
    query = "when is the team having lunch?"
    hits = memory.retrieve(query)
    # the score is the cosine of the normalised vectors, and the order follows it
    cosine = {d.doc_id: float(encoder.encode([d.text])[0] @ encoder.encode_one(query)) for d in docs()}
    expected = sorted(cosine, key=cosine.get, reverse=True)[:2]
    assert [h.doc_id for h in hits] == expected and expected[0] == "c"
    assert [round(h.score, 5) for h in hits] == [round(cosine[d], 5) for d in expected]


def test_full_context_returns_everything_oldest_first_and_budget_cuts_it():
    memory = FullContextMemory()
    memory.ingest(list(reversed(docs())))
    hits = memory.retrieve("anything", k=1)
    assert [h.doc_id for h in hits] == ["a", "b", "c"]
    context = render(hits, budget=30)
    assert context.text == context.full_text[:30]
    assert context.block_starts["a"] == 0


def test_rag_chunks_cover_the_history_and_map_back_to_documents(encoder):
    many = [Document(f"d{i}", f"Note {i}: the shipment to client {i} left the depot on time.", "Ops", datetime(2023, 1, 1 + i)) for i in range(12)]
    memory = RAGMemory(chunk_tokens=32, k=2, window_tokens=16, encoder=encoder)
    memory.ingest(many)
    history, spans = build_history(many)
    chunks = memory._chunks
    assert "".join(chunk.text for chunk in chunks) == history
    assert len(chunks) > 3
    for chunk in chunks:
        for doc_id, offset in chunk.sources:
            _, start, end = next(span for span in spans if span[0] == doc_id)
            chunk_start = history.index(chunk.text)
            assert chunk_start + offset == max(start, chunk_start)
    hits = memory.retrieve("shipment to client 7")
    assert len(hits) == 2
    context = render(hits)
    last = hits[0].source_ids[-1]
    number = int(last[1:])
    start = context.block_starts[last]
    assert context.full_text[start:].startswith(f"[2023-01-{1 + number:02d}] Ops\nNote {number}:")


def test_rag_chunk_sizes_share_their_windows(encoder):
    many = [Document(f"d{i}", f"Record {i} says the budget line {i} was approved.", None, datetime(2023, 1, 1 + i)) for i in range(10)]
    small = RAGMemory(chunk_tokens=32, window_tokens=16, encoder=encoder)
    small.ingest(many)
    large = RAGMemory(chunk_tokens=64, window_tokens=16, encoder=encoder)
    large.ingest(many)
    windows_small = [w for c in small._chunks for w in c.windows]
    windows_large = [w for c in large._chunks for w in c.windows]
    assert windows_small == windows_large


def test_store_size_counts_the_texts_and_vectors_each_baseline_holds(encoder):
    texts = sum(len(d.text.encode("utf-8")) for d in docs())  # 38 + 44 + 29 bytes; the empty one is not stored
    assert texts == 111
    vector = VectorMemory(encoder=encoder)
    vector.ingest(docs())
    assert vector.store_size().disk_bytes == 0 and vector.store_size().memory_bytes == texts + 3 * 384 * 4
    full = FullContextMemory()
    full.ingest(docs())
    assert full.store_size().memory_bytes == texts
    rag = RAGMemory(chunk_tokens=4096, encoder=encoder)
    rag.ingest(docs())
    history, _ = build_history([d for d in docs() if d.text])  # one chunk: the whole rendered history
    assert rag.store_size().memory_bytes == texts + len(history.encode("utf-8")) + 384 * 4
