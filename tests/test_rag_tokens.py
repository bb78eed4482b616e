"""RAG chunk sizes are counted in cl100k_base tokens (the paper's encoder family), offline."""

from __future__ import annotations

import numpy as np
import pytest

from baselines import rag
from baselines.rag import RAGMemory, cl100k_offsets
from memory_protocol import Document


def test_cl100k_is_the_openai_vocabulary_and_works_offline():
    import bpe_openai

    encoding = bpe_openai.get_encoding("cl100k_base")
    assert encoding.encode_ordinary("hello world") == [15339, 1917]  # cl100k_base ids, as tiktoken gives them
    assert encoding.n_vocab == 100277


def test_segmented_offsets_equal_whole_text_tokenisation(monkeypatch):
    import bpe_openai

    text = rag.SEPARATOR.join(f"[2024-01-{i % 28 + 1:02d}] p{i}:\nnaïve café {i} 日本語 — ok" for i in range(400))
    monkeypatch.setattr(rag, "SEGMENT_CHARS", 3_000)
    spans = cl100k_offsets(text)
    encoding = bpe_openai.get_encoding("cl100k_base")
    _, starts = encoding.decode_with_offsets(encoding.encode_ordinary(text))
    assert [start for start, _ in spans] == starts
    assert spans[-1][1] == len(text) and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


class _FakeEncoder:
    def encode(self, texts, show_progress=False):
        return np.ones((len(texts), 4), dtype=np.float32)

    def encode_one(self, text):
        return np.ones(4, dtype=np.float32)


def test_chunks_hold_the_configured_number_of_cl100k_tokens():
    docs = [Document(f"d{i}", "word " * 50, None, None) for i in range(40)]  # 40 x ~51 tokens
    memory = RAGMemory(chunk_tokens=100, k=2, encoder=_FakeEncoder())
    memory.ingest(docs)
    history, _ = rag.build_history(docs)
    total = len(cl100k_offsets(history))
    assert len(memory._chunks) == -(-total // 100)
    with pytest.raises(ValueError, match="tokenizer must be one of"):
        RAGMemory(tokenizer="gpt2", encoder=_FakeEncoder())
