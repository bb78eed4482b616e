"""Counting model calls: a thread-safe tally of a counters dataclass, and the calls a memory system
made while written (ingest) and read (retrieve). Answering and judging are counted by the QA stage."""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import asdict, dataclass
from typing import Any, Generic, TypeVar

from model_clients.chat_types import LLMCounters

C = TypeVar("C")


class Tally(Generic[C]):
    """Mutable counts, one per field of the dataclass ``kind``, behind a lock."""

    def __init__(self, kind: type[C]) -> None:
        self._kind = kind
        self._lock = threading.Lock()
        self.values: dict[str, int] = {f.name: 0 for f in dataclasses.fields(kind)}  # type: ignore[arg-type]

    def add(self, **deltas: int) -> None:
        with self._lock:
            for name, delta in deltas.items():
                self.values[name] += delta

    def snapshot(self) -> C:
        with self._lock:
            return self._kind(**self.values)


def _combine(first: Any, second: Any, sign: int) -> Any:
    """``first + sign * second``, field by field (nested counters dataclasses included)."""
    if dataclasses.is_dataclass(first):
        return type(first)(**{f.name: _combine(getattr(first, f.name), getattr(second, f.name), sign)
                              for f in dataclasses.fields(first)})
    return first + sign * second


def difference(after: C, before: C) -> C:
    return _combine(after, before, -1)


@dataclass(frozen=True)
class CallCounts:
    """A chat client's counters and the encoder's: ``embedded_texts`` computed (not cached),
    ``embedding_requests`` sent to a remote API (0 for the bundled local encoder)."""

    chat: LLMCounters = LLMCounters()
    embedded_texts: int = 0
    embedding_cache_hits: int = 0
    embedding_requests: int = 0

    @property
    def chat_calls(self) -> int:
        return self.chat.cache_hits + self.chat.completed + self.chat.failures

    def as_dict(self) -> dict[str, Any]:
        return {"chat_calls": self.chat_calls, **asdict(self)}


def snapshot(client: Any, encoder: Any) -> CallCounts:
    """The counts so far of a system's chat ``client`` (None: zeros) and of ``encoder``."""
    embedded = encoder.stats() if encoder is not None else {}
    names = ("embedded_texts", "embedding_cache_hits", "embedding_requests")
    return CallCounts(client.counters if client is not None else LLMCounters(),
                      **{name: int(embedded.get(name, 0)) for name in names})


@dataclass
class ModelCallTally:
    """The run's write-time and read-time counts (``stats["model_calls"]``), and what they were spent on."""

    write: CallCounts = CallCounts()
    read: CallCounts = CallCounts()
    documents: int = 0  # documents ingested
    questions: int = 0  # questions retrieved (not served by the retrieval cache)

    def add_write(self, before: CallCounts, after: CallCounts, documents: int) -> None:
        self.write = _combine(self.write, difference(after, before), 1)
        self.documents += documents

    def add_read(self, before: CallCounts, after: CallCounts, questions: int) -> None:
        self.read = _combine(self.read, difference(after, before), 1)
        self.questions += questions

    def as_dict(self) -> dict[str, Any]:
        per_doc = self.write.chat_calls / self.documents if self.documents else 0.0
        per_q = self.read.chat_calls / self.questions if self.questions else 0.0
        return {"write": self.write.as_dict(), "read": self.read.as_dict(), "documents": self.documents,
                "questions": self.questions, "write_chat_calls_per_document": round(per_doc, 4),
                "read_chat_calls_per_question": round(per_q, 4)}


def format_model_calls(calls: dict[str, Any], retrieval_cache_hits: int) -> str:
    """One summary line per stage; one line when every question came from the retrieval cache; empty
    when there was no retrieval at all ("from the cache" would be false, issue 24)."""
    if not calls["documents"] and not calls["questions"]:
        if retrieval_cache_hits <= 0:
            return ""
        return ("model calls: none in this run (every retrieval came from the cache; the run that "
                "computed them has its counts in history.jsonl)")
    lines = []
    for stage, unit, count, ratio in (
        ("write", "document", calls["documents"], calls["write_chat_calls_per_document"]),
        ("read", "question", calls["questions"], calls["read_chat_calls_per_question"]),
    ):
        c = calls[stage]
        lines.append(
            f"{stage}-time model calls over {count} {unit}(s): chat {c['chat_calls']} "
            f"({ratio:.2f}/{unit}; sent {c['chat']['requests_sent']}, cache hits {c['chat']['cache_hits']}, "
            f"failed {c['chat']['failures']}); texts embedded {c['embedded_texts']} "
            f"(cache hits {c['embedding_cache_hits']}, API requests {c['embedding_requests']})"
        )
    return "\n".join(lines)
