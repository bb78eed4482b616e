"""RAG baseline: the history (every document under its ``[date] author`` header, in ingest order)
cut into chunks of ``chunk_tokens`` tokens, the nearest chunks returned.

Tokens are counted in cl100k_base as the paper's RAG baselines do (offline, ``bpe-openai``) or in
the encoder's word pieces. A remote encoder (text-embedding-3, 8,191 cl100k tokens an input)
embeds a chunk whole; a local one (MiniLM, 256 pieces) embeds the unit mean of a chunk's
``window_tokens`` windows, at fixed multiples in the history, so with 128 the 2048- and 4096-token
configurations embed the same windows (one cache serves both).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import numpy as np

from baselines.documents import DocumentMemory
from memplusplus.encoder import CachedEncoder, Encoder
from memplusplus.evidence import header
from memplusplus.openai_encoder import MODEL_MAX_INPUT_TOKENS, OpenAIEncoder
from memplusplus.tokens import encoding as bpe_encoding
from memory_protocol import Document, Hit, StoreSize

SEPARATOR = "\n\n"
TOKENIZERS = ("cl100k", "encoder")
SEGMENT_CHARS = 200_000  # bpe-openai encodes at most ~1M characters / 200k tokens per call


def cl100k_offsets(text: str) -> list[tuple[int, int]]:
    """Each cl100k_base token's character span, encoded in segments cut after a document separator
    (where cl100k's pre-tokenizer splits anyway, so the tokens are the whole text's)."""
    encoding = bpe_encoding("cl100k_base")
    starts: list[int] = []
    begin = 0
    while begin < len(text):
        end = len(text) if len(text) - begin <= SEGMENT_CHARS else text.rfind(SEPARATOR, begin + 1, begin + SEGMENT_CHARS)
        end = begin + SEGMENT_CHARS if end <= begin else (end if end == len(text) else end + len(SEPARATOR))
        _, offsets = encoding.decode_with_offsets(encoding.encode_ordinary(text[begin:end]))
        starts += [begin + offset for offset in offsets]
        begin = end
    spans = []
    for index, start in enumerate(starts):  # a character split over tokens: later pieces start at it too
        stop = starts[index + 1] if index + 1 < len(starts) else len(text)
        spans.append((start, max(stop, start)))
    return spans


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    text: str
    sources: tuple[tuple[str, int], ...]
    windows: tuple[str, ...]


def build_history(documents: list[Document]) -> tuple[str, list[tuple[str, int, int]]]:
    """The rendered history and each document's (doc_id, start, end) character span in it."""
    parts: list[str] = []
    spans: list[tuple[str, int, int]] = []
    offset = 0
    for doc in documents:
        hit = Hit(doc.doc_id, doc.text, doc.date, doc.author, 0.0)
        block = f"{header(hit)}\n{doc.text}"
        if parts:
            offset += len(SEPARATOR)
        spans.append((doc.doc_id, offset, offset + len(block)))
        parts.append(block)
        offset += len(block)
    return SEPARATOR.join(parts), spans


def cut_chunks(history: str, spans: list[tuple[str, int, int]], offsets: list[tuple[int, int]], chunk_tokens: int,
               window_tokens: int | None) -> list[Chunk]:
    """Split ``history`` every ``chunk_tokens`` tokens; ``window_tokens`` None: one window, the chunk."""
    chunks: list[Chunk] = []
    start_char = 0
    for number, first in enumerate(range(0, len(offsets), chunk_tokens)):
        last = min(first + chunk_tokens, len(offsets)) - 1
        end_char = len(history) if last == len(offsets) - 1 else offsets[last][1]
        text = history[start_char:end_char]
        sources = tuple((doc_id, max(doc_start - start_char, 0)) for doc_id, doc_start, doc_end in spans
                        if doc_start < end_char and doc_end > start_char)
        if window_tokens is None:
            windows = [text]
        else:
            windows = []
            for w_first in range(first, last + 1, window_tokens):
                w_last = min(w_first + window_tokens, last + 1) - 1
                windows.append(history[offsets[w_first][0] : offsets[w_last][1]])
        chunks.append(Chunk(f"chunk-{number}", text, sources, tuple(windows)))
        start_char = end_char
    return chunks


class RAGMemory(DocumentMemory):
    name = "rag"

    def __init__(self, chunk_tokens: int = 4096, k: int = 2, window_tokens: int = 128, encoder: CachedEncoder | None = None,
                 tokenizer: str = "cl100k"):
        if chunk_tokens < 1 or not 1 <= window_tokens <= 254:
            raise ValueError("chunk_tokens must be >= 1 and window_tokens within 1..254 (the encoder reads 256 with [CLS]/[SEP])")
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {list(TOKENIZERS)}, got {tokenizer!r}")
        super().__init__()
        self.tokenizer = tokenizer
        self.chunk_tokens = chunk_tokens
        self.window_tokens = window_tokens
        self.k = k
        self.encoder = encoder if encoder is not None else Encoder()
        self._chunks: list[Chunk] | None = None
        self._vectors: np.ndarray | None = None

    @property
    def embeds_whole_chunks(self) -> bool:
        """A remote encoder reading cl100k chunks that fit its 8,191-token window embeds them whole."""
        return isinstance(self.encoder, OpenAIEncoder) and self.tokenizer == "cl100k" and self.chunk_tokens <= MODEL_MAX_INPUT_TOKENS

    def plan_chunks(self, documents: list[Document]) -> list[Chunk]:
        history, spans = build_history(documents)
        if self.tokenizer == "cl100k":
            offsets = cl100k_offsets(history)
        else:
            encoded = self.encoder.tokenizer(history, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
            offsets = [tuple(pair) for pair in encoded["offset_mapping"]]
        window = None if self.embeds_whole_chunks else self.window_tokens
        return cut_chunks(history, spans, offsets, self.chunk_tokens, window)

    def texts_to_embed(self, documents: list[Document]) -> list[str]:
        """Every text ``ingest`` would embed for ``documents`` (chunks whole or their windows)."""
        return [w for chunk in self.plan_chunks([d for d in documents if d.text.strip()]) for w in chunk.windows]

    def _added(self, documents: list[Document], show_progress: bool = False) -> None:
        """Chunk the whole history again and embed its chunks (cached: unchanged windows cost nothing)."""
        self._chunks = self.plan_chunks(self.documents)
        all_windows = [w for chunk in self._chunks for w in chunk.windows]
        window_vectors = self.encoder.encode(all_windows, show_progress=show_progress)
        vectors = []
        cursor = 0
        for chunk in self._chunks:
            mean = window_vectors[cursor : cursor + len(chunk.windows)].mean(axis=0)
            cursor += len(chunk.windows)
            vectors.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
        self._vectors = np.asarray(vectors, dtype=np.float32).reshape(len(self._chunks), -1)

    def store_size(self, extra_bytes: int = 0) -> StoreSize:
        """Nothing on disk; in memory its documents' and chunks' texts (UTF-8) and the chunk vectors."""
        vectors = self._vectors.nbytes if self._vectors is not None else 0
        chunks = sum(len(chunk.text.encode("utf-8")) for chunk in self._chunks or [])
        return super().store_size(extra_bytes + vectors + chunks)

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        """The ``k`` chunks nearest the query (``as_of`` is ignored: RAG has no dates)."""
        if self._chunks is None:
            self._added([])
        if not self._chunks:
            return []
        sims = self._vectors @ self.encoder.encode_one(query)
        order = np.lexsort((-np.arange(len(sims)), -sims))[: self.k if k is None else k]
        return [
            Hit(chunk.chunk_id, chunk.text, None, None, float(sims[i]), {"vector": rank}, False, None, chunk.sources)
            for rank, i in enumerate(order)
            for chunk in [self._chunks[int(i)]]
        ]

