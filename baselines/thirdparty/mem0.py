"""Mem0 (the open-source ``mem0ai`` library) run locally as mem0's own LoCoMo evaluation runs it
(``evaluation/src/memzero/{add,search}.py``).

Its OpenAI LLM and embedder providers point at the harness proxy (the cached client; the harness
encoder, so vectors share its cache); Qdrant in local mode and Mem0's SQLite history live in
``<cache_dir>/mem0/<corpus>/``; telemetry is off. Write (add.py): one user per speaker,
``<speaker>_<conversation>``, each sent every turn (its own as ``user``, the others' as
``assistant``, ``Speaker: text`` without image caption), ``turns_per_add`` (their 2) per ``add()``
within a session, the dataset's date string as ``timestamp``; extraction rules of ours stating
theirs (``EXTRACTION_RULES``); artefacts go to one user. Read (search.py): each speaker searched
apart, ``top_k`` (their 30) each. The proxy pins Mem0's "Observation/Current Date" to the turns'
date so prompts and cache keys depend on the data only. Without the ``fastembed`` and spaCy extras
(which download models) Mem0 runs semantic search only, without its BM25 and entity boosts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from baselines.thirdparty.common import ProxiedMemory, corpus_key, split_stamp, without_caption
from baselines.thirdparty.context import MEM0_LEG
from memory_protocol import ConfigError, Document, Hit
from memplusplus.ranking import end_of_day
from model_clients.llm_client import LLMClient

# Mem0 reads this once, when it is first imported: no posthog events, no ~/.mem0 migrations store.
os.environ.setdefault("MEM0_TELEMETRY", "False")

_DATE_LINES = re.compile(r"(## (?:Observation|Current) Date\n)[^\n]*")
SHARED_USER = "episode"  # the one user of documents that are not speakers' turns

# The rules of the custom instructions mem0's evaluation sets on its project (evaluation/src/memzero/
# add.py:16-42), restated in our words: same five rules, not their sentences.
EXTRACTION_RULES = """Write down memories about the people in this conversation by these rules.

1. A memory must make sense on its own. Name the person (never call them "user") and keep what
   matters about them: their circumstances, hobbies and work or study plans, how they feel and
   react, what they are going through or intend to do, and the dates things happened.
2. Prefer what tells the person's story: who they are and how they came to accept it, family and
   children plans, creative pursuits, care for their mental health, ambitions for career and
   education, and milestones in their life.
3. Be concrete rather than general: give the time (an exact date when one can be worked out), name
   the activity precisely (a charity run for mental health, not "exercise"), and keep the feelings
   and the personal growth involved.
4. Take memories only from the user's messages; the assistant's messages are context, not a source.
5. Write each memory as a short narrative paragraph that shows what the person lived through,
   what was hard and what they hope for."""


@dataclass(frozen=True)
class Mem0User:
    speaker: str
    user_id: str


def _import_mem0() -> Any:
    try:
        from mem0 import Memory
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigError('system=mem0 needs the mem0 extra: pip install -e ".[mem0]"') from exc
    return Memory


def speakers_of(documents: Sequence[Document]) -> list[str]:
    """The speakers in order of first turn; empty for artefacts (they share one user)."""
    if not documents or any(d.author_role != "speaker" for d in documents):
        return []
    return list(dict.fromkeys(d.author or "unknown" for d in documents))


def session_batches(documents: Sequence[Document], size: int) -> list[list[Document]]:
    """Consecutive documents of one session (``thread``), ``size`` at a time, as their add.py."""
    batches: list[list[Document]] = []
    run: list[Document] = []
    for doc in documents:
        if run and doc.thread != run[-1].thread:
            batches += [run[i : i + size] for i in range(0, len(run), size)]
            run = []
        run.append(doc)
    batches += [run[i : i + size] for i in range(0, len(run), size)]
    return batches


def messages_for(user: Mem0User | None, batch: Sequence[Document]) -> list[dict[str, str]]:
    """The batch as ``user``'s messages: own turns ``user``, the others' ``assistant`` (their add.py)."""
    return [
        {"role": "user" if user is None or (d.author or "unknown") == user.speaker else "assistant",
         "content": without_caption(split_stamp(d)[1])}
        for d in batch
    ]


class Mem0Memory(ProxiedMemory):
    name = "mem0"
    kind = "mem0"

    def __init__(self, *, k: int, client: LLMClient, store_dir: str, encoder: Any, turns_per_add: int = 2,
                 top_k: int = 30, threshold: float = 0.1, infer: bool = True, respect_as_of: bool = False) -> None:
        super().__init__(client=client, store_dir=store_dir, encoder=encoder, k=k)
        if turns_per_add < 1:
            raise ConfigError("system.turns_per_add must be >= 1")
        if top_k < 1:
            raise ConfigError("system.top_k must be >= 1")
        self.turns_per_add = turns_per_add
        self.top_k = top_k
        self.threshold = threshold
        self.infer = infer
        self.respect_as_of = respect_as_of
        self.users: list[Mem0User] = []
        self.sources: dict[str, list[str]] = {}  # memory id -> source document ids
        self._pinned_date: str | None = None
        self._memory: Any = None

    def close(self) -> None:
        client = getattr(getattr(self._memory, "vector_store", None), "client", None)
        if client is not None:
            client.close()
        super().close()

    def _pin_dates(self, body: dict[str, Any]) -> dict[str, Any]:
        if self._pinned_date is None:
            return body
        messages = [{**m, "content": _DATE_LINES.sub(lambda hit: hit.group(1) + str(self._pinned_date), m["content"])}
                    if isinstance(m.get("content"), str) else m for m in body.get("messages", [])]
        return {**body, "messages": messages}

    def _settings(self) -> dict[str, Any]:
        return {"turns_per_add": self.turns_per_add, "infer": self.infer, "model": self.model.model,
                "rules": EXTRACTION_RULES}

    def _open(self, documents: Sequence[Document]) -> None:
        Memory = _import_mem0()
        proxy = self._start_proxy(rewrite=self._pin_dates)
        folder = self._fresh_folder(documents, self._settings())
        dims = int(self.encoder.dimension)
        config = {
            "llm": {
                "provider": "openai",
                "config": {"model": self.model.model, "openai_base_url": proxy.base_url, "api_key": proxy.token,
                           "temperature": self.model.temperature},
            },
            "embedder": {
                "provider": "openai",
                "config": {"model": "harness-encoder", "openai_base_url": proxy.base_url, "api_key": proxy.token,
                           "embedding_dims": dims},
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {"path": str(folder / "qdrant"), "collection_name": "mem0", "embedding_model_dims": dims,
                           "on_disk": True},
            },
            "history_db_path": str(folder / "history.db"),
            "custom_instructions": EXTRACTION_RULES,
        }
        self._memory = Memory.from_config(config)

    def _write(self, docs: Sequence[Document]) -> None:
        conversation = corpus_key(docs, self._settings())[:8]
        self.users = [Mem0User(s, f"{s}_{conversation}") for s in speakers_of(docs)]
        for batch in session_batches(docs, self.turns_per_add):
            when = next((d.date for d in reversed(batch) if d.date is not None), None)
            self._pinned_date = when.date().isoformat() if when is not None else None
            metadata: dict[str, Any] = {"doc_ids": [d.doc_id for d in batch], "timestamp": split_stamp(batch[-1])[0]}
            if when is not None:
                metadata["created_at"] = when.isoformat()
            for user in self.users or [None]:
                user_id = user.user_id if user is not None else SHARED_USER
                result = self._memory.add(messages_for(user, batch), user_id=user_id, metadata=metadata, infer=self.infer)
                self._check_proxy()
                for item in result.get("results", []):
                    if item.get("event") == "ADD" and item.get("id"):
                        self.sources[str(item["id"])] = metadata["doc_ids"]
        self._pinned_date = None

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        """Each speaker's memories, ``top_k`` each (a ``k`` above the system's own widens each search by
        as much), one ``timestamp: memory`` hit under leg ``mem0:<speaker>``. ``respect_as_of`` filters
        on ``created_at`` (a memory is dated by its turns, and Mem0 only adds); else dates are ignored."""
        if self._memory is None:
            return []
        per_user = self.top_k + max((k or self.k) - self.k, 0)
        hits: list[Hit] = []
        for user in self.users or [Mem0User("everyone", SHARED_USER)]:
            filters: dict[str, Any] = {"user_id": user.user_id}
            if self.respect_as_of and as_of is not None:
                filters["created_at"] = {"lte": end_of_day(as_of).isoformat()}
            found = self._memory.search(query, filters=filters, top_k=per_user, threshold=self.threshold)
            self._check_proxy()
            items = found.get("results", found) if isinstance(found, dict) else found
            for rank, item in enumerate(items):
                hits.append(self._hit(item, user, rank))
        return hits

    def _hit(self, item: dict[str, Any], user: Mem0User, rank: int) -> Hit:
        memory_id = str(item["id"])
        metadata = item.get("metadata") or {}
        doc_ids = [str(d) for d in (metadata.get("doc_ids") or self.sources.get(memory_id, []))]
        line = f"{metadata.get('timestamp', 'undated')}: {item.get('memory', '')}"
        sources = tuple((doc_id, 0) for doc_id in dict.fromkeys(doc_ids))
        return Hit(f"mem0:{memory_id}", line, _parse_date(item.get("created_at")), user.speaker,
                   float(item.get("score") or 0.0), {MEM0_LEG + user.speaker: rank}, False, None, sources)


def _parse_date(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed.replace(tzinfo=None)
