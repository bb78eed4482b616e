"""Fact-index ablation (paper Table 4, "w/ fact index"): the legs index LLM-extracted fact cards,
the answerer still reads the documents they came from.

Write: one model call per document extracts its facts; each fact becomes a row with the
document's date, author and thread. A document whose call fails or yields no fact is indexed by
its own text as a single card (our choice, so a failed call loses nothing).

Read: Mem++ ranks the cards; each card is mapped back to its source document(s), repeats are
dropped and rank order is kept, and the first k documents are returned whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import date, datetime

from memplusplus.llm import Complete, ask_json
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memplusplus.scope import end_of_day, in_scope
from memory_protocol.documents import Document, Hit

FACT_PROMPT = (
    "Split the record into its facts: short sentences that each state one fact and can be read "
    "alone (name people, projects and dates instead of using pronouns). Keep every number, name "
    'and date. Reply with JSON only: {"facts": ["..."]}.'
)
FACT_SCHEMA = {"type": "object", "properties": {"facts": {"type": "array", "items": {"type": "string"}}}, "required": ["facts"]}
CARD_DEPTH = 5  # cards ranked per document slot asked for, so k distinct documents can be filled


class FactIndexMemPP(MemPlusPlus):
    """Mem++ over fact cards that returns the cards' source documents."""

    name = "mempp_fact_index"

    def __init__(self, config: MemPPConfig, complete: Complete, **kwargs) -> None:
        super().__init__(config, **kwargs)
        self.complete = complete
        self.write_calls = 0
        self.documents: dict[str, Document] = {}
        self.card_sources: dict[str, list[str]] = {}

    def facts_of(self, doc: Document) -> list[str]:
        self.write_calls += 1
        reply = ask_json(self.complete, FACT_PROMPT, doc.text, FACT_SCHEMA)
        items = reply.get("facts") if isinstance(reply, dict) else None
        facts = [f.strip() for f in items if isinstance(f, str) and f.strip()] if isinstance(items, list) else []
        return facts or [doc.text]

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        result: list[str | None] = []
        cards: list[Document] = []
        owners: list[str] = []
        for doc in documents:
            if not doc.text.strip():
                result.append(None)
                continue
            self.documents[doc.doc_id] = doc
            result.append(doc.doc_id)
            for number, fact in enumerate(self.facts_of(doc)):
                cards.append(replace(doc, doc_id=f"fact:{doc.doc_id}:{number}", text=fact))
                owners.append(doc.doc_id)
        for row_id, owner in zip(super().ingest(cards, show_progress), owners):
            if row_id is not None:
                sources = self.card_sources.setdefault(row_id, [])
                if owner not in sources:
                    sources.append(owner)
        return result

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        k = self.config.k if k is None else k
        if k <= 0:
            return []
        hits: list[Hit] = []
        seen: set[str] = set()
        for card in super().retrieve(query, as_of, k * CARD_DEPTH):
            for doc_id in self.card_sources.get(card.doc_id, []):
                doc = self.documents[doc_id]
                if doc_id in seen or (as_of is not None and not _dated_by(doc, as_of)):
                    continue
                seen.add(doc_id)
                hits.append(Hit(doc.doc_id, doc.text, doc.date, doc.author, card.score, dict(card.leg_ranks),
                                card.reserve, doc.thread, evidence=doc.evidence))
                if len(hits) == k:
                    return hits
        return hits

    search = retrieve


def _dated_by(doc: Document, as_of: date | datetime) -> bool:
    """A card deduplicated into an earlier document's row may name a later document as a source;
    the as-of scope holds for the documents returned too."""
    return in_scope(doc.date, end_of_day(as_of))


__all__ = ["FactIndexMemPP"]
