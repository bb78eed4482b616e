"""Mem^g++ (paper §3.5, Appendix): Mem++ plus an entity-relation graph built at write time.

Write: each unit (a document; on conversational sets ten consecutive speaker turns) costs two
calls, its entities then its (subject, relation, object) triples, kept in a networkx graph; new
entity names are embedded. Read, as Mem0^g (arXiv 2504.19413 §2.2; mem0ai/mem0
mem0/memory/graph_memory.py ``search``): one call names the question's entities, each matching the
graph entities at cosine (rounded to 4 places) >= 0.7; the relations one hop from a match are the
candidates, a repeated relation being one (Mem0^g MERGEs it); the top five by BM25 against the
question follow the fused rows. No as-of filter on triples unless ``graph_as_of``.
Our choices where Mem0^g is no guide: BM25 (bm25s, k1 = 1.5, b = 0.75) over stemmed content words of
"subject relation object"; ties go to the better matched entity, then the older relation."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime

import networkx as nx
import numpy as np

from memplusplus.llm import Complete, ask_json, ask_strings
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memplusplus.ranking import end_of_day
from memplusplus.lexical import bm25_index, bm25_scores
from memplusplus.text import content_terms, stems
from memory_protocol import Document, Hit

MAX_TRIPLES = 5
ENTITY_MATCH = 0.7  # Mem0^g's node-similarity threshold (graph_memory.py, MemoryGraph.__init__)
BM25_K1, BM25_B = 1.5, 0.75

ENTITY_PROMPT = (
    "List the named entities in the text: people, teams, organisations, projects, products, places, "
    'dates and other specific things it talks about. Reply with JSON only: {"entities": ["..."]}.'
)
RELATION_PROMPT = (
    "Given a text and entities found in it, state the facts the text gives as relations between "
    "those entities, each as subject, relation, object (short phrases, the relation in a few words). "
    'Reply with JSON only: {"triples": [{"subject": "...", "relation": "...", "object": "..."}]}.'
)
QUESTION_PROMPT = (
    "List the named entities a question asks about (people, teams, projects, products, places, "
    'specific things). Reply with JSON only: {"entities": ["..."]}.'
)
_TRIPLE = {"type": "object", "properties": {k: {"type": "string"} for k in ("subject", "relation", "object")},
           "required": ["subject", "relation", "object"]}
TRIPLE_SCHEMA = {"type": "object", "properties": {"triples": {"type": "array", "items": _TRIPLE}}, "required": ["triples"]}


@dataclass(frozen=True)
class Triple:
    subject: str
    relation: str
    obj: str
    sources: tuple[str, ...]
    date: datetime | None
    order: int

    @property
    def text(self) -> str:
        return f"{self.subject} — {self.relation} — {self.obj}"


def _key(name: str) -> str:
    return " ".join(name.lower().split())


def units(documents: list[Document], chunk_turns: int) -> list[list[Document]]:
    """Write units: each document alone; runs of consecutive speaker turns in chunks of ``chunk_turns``."""
    out: list[list[Document]] = []
    run: list[Document] = []
    for doc in documents:
        if doc.author_role == "speaker":
            run.append(doc)
            if len(run) == chunk_turns:
                out.append(run)
                run = []
            continue
        if run:
            out.append(run)
            run = []
        out.append([doc])
    if run:
        out.append(run)
    return out


def merge_repeats(candidates: Iterable[tuple[float, Triple]]) -> list[tuple[float, Triple]]:
    """One candidate per (subject, relation, object) up to case and spaces, as Mem0^g MERGEs a
    repeated relation: the first wording and position, every source, the latest date, the best similarity."""
    merged: dict[tuple[str, str, str], tuple[float, Triple]] = {}
    for similarity, triple in sorted(candidates, key=lambda item: item[1].order):
        key = (_key(triple.subject), _key(triple.relation), _key(triple.obj))
        if key not in merged:
            merged[key] = (similarity, triple)
            continue
        best, kept = merged[key]
        dates = [d for d in (kept.date, triple.date) if d is not None]
        union = tuple(dict.fromkeys(kept.sources + triple.sources))
        merged[key] = (max(best, similarity), replace(kept, sources=union, date=max(dates) if dates else None))
    return list(merged.values())


class GraphMemPP(MemPlusPlus):

    name = "mempp_g"

    def __init__(
        self, config: MemPPConfig, complete: Complete, chunk_turns: int = 10, graph_as_of: bool = False, **kwargs
    ) -> None:
        if chunk_turns < 1:
            raise ValueError(f"chunk_turns must be >= 1, got {chunk_turns}")
        super().__init__(config, **kwargs)
        self.complete = complete
        self.chunk_turns = chunk_turns
        self.graph_as_of = graph_as_of
        self.graph = nx.MultiDiGraph()
        self._edges = 0
        self.entity_names: list[str] = []  # graph nodes in the order they were embedded
        self.entity_vectors = np.zeros((0, self.encoder.dimension), dtype=np.float32)

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        docs = list(documents)
        ids = super().ingest(docs, show_progress)
        for unit in units([d for d in docs if d.text.strip()], self.chunk_turns):
            self._extract(unit)
        self._embed_new_entities()
        return ids

    def _embed_new_entities(self) -> None:
        known = set(self.entity_names)
        fresh = [node for node in self.graph.nodes if node not in known]
        if fresh:
            self.entity_vectors = np.vstack([self.entity_vectors, _unit_rows(self.encoder.encode(fresh))])
            self.entity_names += fresh

    def _extract(self, unit: list[Document]) -> None:
        text = "\n".join(doc.text for doc in unit)
        entities = ask_strings(self.complete, ENTITY_PROMPT, text, "entities")
        if not entities:
            return
        reply = ask_json(self.complete, RELATION_PROMPT, f"Entities: {', '.join(entities)}\n\nText:\n{text}", TRIPLE_SCHEMA)
        triples = reply.get("triples") if isinstance(reply, dict) else None
        dates = [doc.date for doc in unit if doc.date is not None]
        sources = tuple(doc.doc_id for doc in unit)
        for item in triples if isinstance(triples, list) else []:
            parts = [item.get(k) for k in ("subject", "relation", "object")] if isinstance(item, dict) else []
            if len(parts) != 3 or not all(isinstance(p, str) and p.strip() for p in parts):
                continue
            subject, relation, obj = (p.strip() for p in parts)
            triple = Triple(subject, relation, obj, sources, max(dates) if dates else None, self._edges)
            self._edges += 1
            self.graph.add_edge(_key(subject), _key(obj), triple=triple)

    def matched_entities(self, names: list[str]) -> dict[str, float]:
        """Graph entities whose best cosine with ``names``, rounded to 4 places, is >= 0.7."""
        if not names or not self.entity_names:
            return {}
        sims = _unit_rows(self.encoder.encode(names)) @ self.entity_vectors.T
        best = np.round(sims.max(axis=0).astype(np.float64), 4)
        return {self.entity_names[i]: float(best[i]) for i in np.flatnonzero(best >= ENTITY_MATCH)}

    def triples_for(self, query: str, as_of: date | datetime | None = None) -> list[Triple]:
        """At most five relations one hop from the question's entities, by BM25 against it (one call)."""
        if self.graph.number_of_edges() == 0:
            return []
        names = ask_strings(self.complete, QUESTION_PROMPT, query, "entities")
        matched = self.matched_entities(names)
        if not matched:
            return []
        theta = end_of_day(as_of) if (self.graph_as_of and as_of is not None) else None
        found: dict[int, tuple[float, Triple]] = {}
        for node, similarity in matched.items():
            edges = [*self.graph.out_edges(node, data="triple"), *self.graph.in_edges(node, data="triple")]
            for _, _, triple in edges:
                if theta is not None and (triple.date is None or triple.date > theta):
                    continue
                if triple.order not in found or found[triple.order][0] < similarity:
                    found[triple.order] = (similarity, triple)
        if not found:
            return []
        candidates = merge_repeats(found.values())
        corpus = [stems(f"{t.subject} {t.relation} {t.obj}") for _, t in candidates]
        scores = np.asarray(bm25_scores(bm25_index(corpus, BM25_K1, BM25_B), content_terms(query), len(corpus)), dtype=np.float32)
        ranked = sorted(zip(scores, candidates), key=lambda item: (-item[0], -item[1][0], item[1][1].order))
        return [triple for _, (_, triple) in ranked[:MAX_TRIPLES]]

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        hits = super().retrieve(query, as_of, k)
        extra = [
            Hit(doc_id=f"triple:{t.order}", text=t.text, date=t.date, author=None, score=0.0,
                sources=tuple((doc_id, 0) for doc_id in t.sources))
            for t in self.triples_for(query, as_of)
        ]
        return hits + extra

    search = retrieve


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


__all__ = ["ENTITY_MATCH", "GraphMemPP", "MAX_TRIPLES", "Triple", "merge_repeats", "units"]
