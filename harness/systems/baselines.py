"""The plain baselines as registry entries: BM25, exact vector search, RAG chunks, full context."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from baselines.documents import BM25Memory, FullContextMemory, VectorMemory
from baselines.rag import RAGMemory
from harness.systems.registry import BuiltSystem, RunContext, SystemEntry
from memory_protocol import ConfigError, MemorySystem
from model_clients.cost import CHARS_PER_TOKEN
from model_clients.embedding_cost import EmbedRule


def with_settings(factory: Callable[..., MemorySystem], uses_encoder: bool, uses_k: bool = True) -> Callable[[RunContext], BuiltSystem]:
    """A builder calling ``factory`` with the system's settings (and ``k``, the encoder when it uses one)."""

    def build(context: RunContext) -> BuiltSystem:
        spec = context.spec
        extra: dict[str, Any] = {"encoder": context.encoder} if uses_encoder else {}
        if uses_k:
            extra["k"] = spec.k
        try:
            return BuiltSystem(factory(**spec.params, **extra))
        except TypeError as exc:
            raise ConfigError(f"system ({spec.name}): {exc}") from exc

    return build


def _rag_embeds(params: dict[str, Any]) -> EmbedRule:
    """RAG embeds its chunks (whole on a remote encoder, else by windows) and the questions."""

    def chunk_texts(documents: list, encoder) -> list[str]:
        settings = {key: value for key, value in params.items() if key in ("chunk_tokens", "window_tokens", "tokenizer")}
        return RAGMemory(encoder=encoder, **settings).texts_to_embed(documents)

    return EmbedRule(questions=True, history_views=chunk_texts)


ENTRIES = (
    SystemEntry("bm25", with_settings(BM25Memory, uses_encoder=False)),
    SystemEntry("vector", with_settings(VectorMemory, uses_encoder=True),
                embeds=lambda params: EmbedRule(documents=True, questions=True)),
    SystemEntry("rag", with_settings(RAGMemory, uses_encoder=True),
                embeds=_rag_embeds, version=1,  # 1: chunks whole on a remote encoder
                context_chars=lambda params: int(params.get("chunk_tokens", 0)) * CHARS_PER_TOKEN),
    SystemEntry("full_context", with_settings(FullContextMemory, uses_encoder=False, uses_k=False)),
)
