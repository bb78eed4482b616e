"""Fact-index ablation (paper Table 4, "w/ fact index"): the legs index LLM-extracted fact cards, the
answerer reads their documents. One call per document extracts its facts (a failed call or no fact:
the document's text is its one card, our choice). Cards are fused as in Mem++ and mapped to their
documents (best rank kept); the top-k rule runs over documents, so the recency reserve reaches them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import date, datetime

from memplusplus.ranking import FusedRow, end_of_day, in_scope, select_top_k
from memplusplus.llm import Complete, ask_strings
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memory_protocol import Document, Hit

FACT_PROMPT = (
    "Split the record into its facts: short sentences that each state one fact and can be read "
    "alone (name people, projects and dates instead of using pronouns). Keep every number, name "
    'and date. Reply with JSON only: {"facts": ["..."]}.'
)


class FactIndexMemPP(MemPlusPlus):
    """Mem++ over fact cards that returns the cards' source documents."""

    name = "mempp_fact_index"

    def __init__(self, config: MemPPConfig, complete: Complete, **kwargs) -> None:
        super().__init__(config, **kwargs)
        self.complete = complete
        self.documents: dict[str, Document] = {}
        self.card_sources: dict[str, list[str]] = {}
        self.recency: dict[str, datetime] = {}  # a document's date, else its first card's ingest time

    def facts_of(self, doc: Document) -> list[str]:
        return ask_strings(self.complete, FACT_PROMPT, doc.text, "facts") or [doc.text]

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
                self.recency.setdefault(owner, self.store.rows[self._seq(row_id)].recency)
        return result

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        k = self.config.k if k is None else k
        if k <= 0 or not self.documents:
            return []
        scope = self.scope_mask(as_of)
        rankings = self.leg_rankings(query, scope)
        cards = self.fuse(rankings)
        order = {doc_id: seq for seq, doc_id in enumerate(self.documents)}  # ingest order
        documents = list(self.documents.values())
        visible = [doc for doc in documents if as_of is None or _dated_by(doc, as_of)]
        fused: dict[str, FusedRow] = {}
        for card in cards:
            for doc_id in self.card_sources.get(self.store.rows[card.seq].doc_id, []):
                if doc_id not in fused and (as_of is None or _dated_by(self.documents[doc_id], as_of)):
                    fused[doc_id] = FusedRow(order[doc_id], card.score, dict(card.leg_ranks))
        recent_pool = [order[doc.doc_id] for doc in reversed(visible)][: self.config.candidates]
        recency = {order[doc.doc_id]: self.recency[doc.doc_id] for doc in visible}
        chosen = select_top_k(list(fused.values()), recent_pool, recency, k, self.config.recency_reserve)
        return [self._document_hit(documents[row.seq], row, reserve) for row, reserve in chosen]

    @staticmethod
    def _document_hit(doc: Document, row: FusedRow, reserve: bool) -> Hit:
        return Hit(doc.doc_id, doc.text, doc.date, doc.author, row.score, dict(row.leg_ranks), reserve, doc.thread,
                   evidence=doc.evidence)

    search = retrieve


def _dated_by(doc: Document, as_of: date | datetime) -> bool:
    """The as-of scope on a returned document (a deduplicated card may name a later one)."""
    return in_scope(doc.date, end_of_day(as_of))


__all__ = ["FactIndexMemPP"]
