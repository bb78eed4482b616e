"""NUL in text (issue 31, point 9): Postgres text cannot hold it, so both Mem++ backends drop it from a
document's text, author and thread and from the question, and refuse an id holding it. The
in-process half runs here on a base install; tests/test_postgres_backend.py compares both."""

from datetime import datetime

import numpy as np
import pytest

from memplusplus import Document, MemPlusPlus, MemPPConfig
from memplusplus.memory import without_nul
from tests.write_time_fakes import TopicEncoder


def test_the_in_process_memory_stores_and_asks_without_nul():
    memory = MemPlusPlus(MemPPConfig(k=3, recency_reserve=0), encoder=TopicEncoder())
    ids = memory.ingest([
        Document("a", "b\x00u\x00d\x00g\x00e\x00t\x00 approved", "Maya\x00 Patel", datetime(2024, 1, 1), "t\x001"),
        Document("b", "\x00 \x00", "Omar"),  # nothing but NUL and blanks: an empty text, no row
    ])
    assert ids == ["a", None]
    row = memory.store.rows[0]
    assert (row.text, row.author, row.thread) == ("budget approved", "Maya Patel", "t1")
    hits = memory.retrieve("bud\x00get")
    assert [(hit.doc_id, "lexical" in hit.leg_ranks) for hit in hits] == [("a", True)]
    with pytest.raises(ValueError, match="NUL"):
        memory.ingest([Document("c", "fine"), Document("d\x00", "an id is never altered")])
    assert len(memory.store) == 1  # refused as a batch, before any row


def test_minilm_reads_a_text_with_nul_as_the_text_without_it():
    """Why dropping NUL keeps the vector leg as it was: MiniLM's tokenizer drops the character itself."""
    from memplusplus.encoder import Encoder

    with_nul, without = Encoder().encode(["the travel\x00budget plan", without_nul("the travel\x00budget plan")])
    assert float(np.dot(with_nul, without)) == pytest.approx(1.0, abs=1e-6)
