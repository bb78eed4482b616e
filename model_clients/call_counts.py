"""Model calls a memory system made while it was written (ingest) and read (retrieve).

:func:`snapshot` reads a system's chat client (the cached client of the write-time Mem++
variants, the one behind the proxy of Mem0 and Zep; None for a system that calls no model) and
the run's encoder; the
runner takes snapshots around ``ingest`` and around the retrievals and adds the differences up in
a :class:`ModelCallTally`, which the run's stats record (``stats["model_calls"]``) and the printed
summary shows. Answering and judging are counted apart, by the QA stage.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from model_clients.chat_types import LLMCounters
from model_clients.tally import difference, total

__all__ = ["CallCounts", "ModelCallTally", "format_model_calls", "snapshot"]


@dataclass(frozen=True)
class CallCounts:
    """Chat completions (the client's counters: requests sent, cache hits, completions, failures,
    tokens) and embeddings: ``embedded_texts`` the encoder computed (not found in its cache),
    ``embedding_requests`` sent to a remote embeddings API (0 for the bundled local encoder)."""

    chat: LLMCounters = LLMCounters()
    embedded_texts: int = 0
    embedding_cache_hits: int = 0
    embedding_requests: int = 0

    @property
    def chat_calls(self) -> int:
        """Completions asked for: cache hits + answered + failed."""
        return self.chat.cache_hits + self.chat.completed + self.chat.failures

    def as_dict(self) -> dict[str, Any]:
        return {"chat_calls": self.chat_calls, **asdict(self)}


def snapshot(client: Any, encoder: Any) -> CallCounts:
    """The counts so far of a system's chat ``client`` (None: zeros) and of ``encoder``."""
    embedded = encoder.stats() if encoder is not None else {}
    return CallCounts(
        chat=client.counters if client is not None else LLMCounters(),
        embedded_texts=int(embedded.get("embedded_texts", 0)),
        embedding_cache_hits=int(embedded.get("embedding_cache_hits", 0)),
        embedding_requests=int(embedded.get("embedding_requests", 0)),
    )


@dataclass
class ModelCallTally:
    """The run's write-time and read-time counts, and what they were spent on."""

    write: CallCounts = CallCounts()
    read: CallCounts = CallCounts()
    documents: int = 0  # documents ingested
    questions: int = 0  # questions retrieved (not served by the retrieval cache)

    def add_write(self, before: CallCounts, after: CallCounts, documents: int) -> None:
        self.write = total(self.write, difference(after, before))
        self.documents += documents

    def add_read(self, before: CallCounts, after: CallCounts, questions: int) -> None:
        self.read = total(self.read, difference(after, before))
        self.questions += questions

    def as_dict(self) -> dict[str, Any]:
        per_doc = self.write.chat_calls / self.documents if self.documents else 0.0
        per_q = self.read.chat_calls / self.questions if self.questions else 0.0
        return {
            "write": self.write.as_dict(),
            "read": self.read.as_dict(),
            "documents": self.documents,
            "questions": self.questions,
            "write_chat_calls_per_document": round(per_doc, 4),
            "read_chat_calls_per_question": round(per_q, 4),
        }


def format_model_calls(calls: dict[str, Any], retrieval_cache_hits: int) -> str:
    """One summary line per stage, from :meth:`ModelCallTally.as_dict`; one line when nothing was
    ingested or retrieved and ``retrieval_cache_hits`` > 0 (every question came from the retrieval
    cache); empty when there was no retrieval at all (nothing to say, and "from the cache" would be false)."""
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
