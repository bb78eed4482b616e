"""Mem0 (the open-source ``mem0ai`` library) run locally behind the MemorySystem protocol.

Its LLM and its embedder are Mem0's own OpenAI providers pointed at the harness proxy: chat calls go
through the cached client, embeddings come from the harness encoder (the bundled all-MiniLM-L6-v2,
384-d, cached) -- chosen over Mem0's huggingface embedder so vectors are shared with the harness
cache and nothing is loaded twice. The vector store is Qdrant in local (embedded) mode in
``<cache_dir>/mem0/<corpus>/``, with Mem0's SQLite history beside it. Telemetry is switched off.

Each add call carries ``turns_per_add`` documents (default 1: one call per turn or artefact) as
user messages that lead with their date and speaker, under one ``user_id`` per episode; the
metadata records the source document ids and the date (``created_at``). Mem0 OSS writes the
wall-clock date into its extraction prompt ("Observation Date", "Current Date"); the proxy pins
both to the date of the documents being added, which keeps the prompt (and its cache key) a
function of the data. Without the optional ``fastembed`` and spaCy extras (which download models at
run time) Mem0 runs semantic search only, without its BM25 and entity boosts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

from baselines.thirdparty.common import PROXY_API_KEY, ProxiedMemory, dated_content, memory_hit
from memory_protocol import ConfigError
from memplusplus.scope import end_of_day
from memory_protocol.documents import Document, Hit
from model_clients.llm_client import LLMClient

# Mem0 reads this once, when it is first imported: no posthog events, no ~/.mem0 migrations store.
os.environ.setdefault("MEM0_TELEMETRY", "False")

_DATE_LINES = re.compile(r"(## (?:Observation|Current) Date\n)[^\n]*")


def _import_mem0() -> Any:
    try:
        from mem0 import Memory
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigError('system=mem0 needs the mem0 extra: pip install -e ".[mem0]"') from exc
    return Memory


class Mem0Memory(ProxiedMemory):
    name = "mem0"
    kind = "mem0"

    def __init__(
        self,
        *,
        k: int,
        client: LLMClient,
        store_dir: str,
        encoder: Any,
        turns_per_add: int = 1,
        threshold: float = 0.1,
        infer: bool = True,
        respect_as_of: bool = False,
    ) -> None:
        super().__init__(client=client, store_dir=store_dir, encoder=encoder, k=k)
        if turns_per_add < 1:
            raise ConfigError("system.turns_per_add must be >= 1")
        self.turns_per_add = turns_per_add
        self.threshold = threshold
        self.infer = infer
        self.respect_as_of = respect_as_of
        self.user_id = "episode"
        self.sources: dict[str, list[str]] = {}  # memory id -> source document ids
        self._pinned_date: str | None = None
        self._memory: Any = None

    def close(self) -> None:
        """Release the embedded Qdrant store (it locks its folder) and stop the proxy."""
        client = getattr(getattr(self._memory, "vector_store", None), "client", None)
        if client is not None:
            client.close()
        super().close()

    # ------------------------------------------------------------------ write
    def _pin_dates(self, body: dict[str, Any]) -> dict[str, Any]:
        if self._pinned_date is None:
            return body
        messages = [
            {**m, "content": _DATE_LINES.sub(lambda hit: hit.group(1) + str(self._pinned_date), m["content"])}
            if isinstance(m.get("content"), str)
            else m
            for m in body.get("messages", [])
        ]
        return {**body, "messages": messages}

    def _open(self, documents: Sequence[Document]) -> Any:
        Memory = _import_mem0()
        proxy = self._start_proxy(rewrite=self._pin_dates)
        folder = self._fresh_folder(documents, {"turns_per_add": self.turns_per_add, "infer": self.infer, "model": self.model.model})
        dims = int(self.encoder.dimension)
        config = {
            "llm": {
                "provider": "openai",
                "config": {"model": self.model.model, "openai_base_url": proxy.base_url, "api_key": PROXY_API_KEY,
                           "temperature": self.model.temperature},
            },
            "embedder": {
                "provider": "openai",
                "config": {"model": "harness-encoder", "openai_base_url": proxy.base_url, "api_key": PROXY_API_KEY,
                           "embedding_dims": dims},
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {"path": str(folder / "qdrant"), "collection_name": "mem0", "embedding_model_dims": dims,
                           "on_disk": True},
            },
            "history_db_path": str(folder / "history.db"),
        }
        return Memory.from_config(config)

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        docs = [doc for doc in documents if doc.text.strip()]
        self._memory = self._open(docs)
        assert self.proxy is not None
        before = self._counts()
        added: dict[str, str | None] = {}
        for start in range(0, len(docs), self.turns_per_add):
            group = docs[start : start + self.turns_per_add]
            when = next((d.date for d in reversed(group) if d.date is not None), None)
            self._pinned_date = when.date().isoformat() if when is not None else None
            metadata: dict[str, Any] = {"doc_ids": [d.doc_id for d in group]}
            if when is not None:
                metadata["created_at"] = when.isoformat()
            messages = [{"role": "user", "content": dated_content(d)} for d in group]
            result = self._memory.add(messages, user_id=self.user_id, metadata=metadata, infer=self.infer)
            self._check_proxy()
            for item in result.get("results", []):
                if item.get("event") == "ADD" and item.get("id"):
                    self.sources[str(item["id"])] = metadata["doc_ids"]
            for d in group:
                added[d.doc_id] = d.doc_id
        self._pinned_date = None
        self.ingested += len(docs)
        self._count_write(before)
        return [added.get(doc.doc_id) for doc in documents]

    # ------------------------------------------------------------------ read
    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        """Mem0's search over the episode's memories. With ``respect_as_of`` the as-of date becomes a
        metadata filter of Mem0's own (``created_at`` <= the end of that day): a memory is dated by the
        turns it was extracted from, so memories learnt later are not searched. Otherwise (default, as
        for the other baselines) the date is ignored."""
        if self._memory is None:
            return []
        filters: dict[str, Any] = {"user_id": self.user_id}
        if self.respect_as_of and as_of is not None:
            filters["created_at"] = {"lte": end_of_day(as_of).isoformat()}
        found = self._memory.search(query, filters=filters, top_k=k or self.k, threshold=self.threshold)
        self._check_proxy()
        items = found.get("results", found) if isinstance(found, dict) else found
        hits = []
        for rank, item in enumerate(items):
            memory_id = str(item["id"])
            doc_ids = (item.get("metadata") or {}).get("doc_ids") or self.sources.get(memory_id, [])
            when = _parse_date(item.get("created_at"))
            hits.append(memory_hit(f"mem0:{memory_id}", str(item.get("memory", "")), when, item.get("score") or 0.0,
                                   [str(d) for d in doc_ids], rank, "mem0"))
        return hits


def _parse_date(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed.replace(tzinfo=None)
