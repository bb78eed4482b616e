"""Mem^g++ (paper §3.5, Appendix): Mem++ plus an entity-relation graph built at write time.

Write: each unit (one document; on conversational sets, ten consecutive speaker turns) costs two
model calls: one names its entities, one states the relations between them as (subject, relation,
object) triples. The triples go into an in-process networkx graph whose edges remember the
documents they came from and the latest of those documents' dates.

Read: one call names the question's entities; the graph is searched breadth-first from the nodes
they name (nearest edges first, ingest order within a hop) and at most five triples are appended
after the fused rows as chunk-like hits ("subject — relation — object", sources = their
documents). As in the paper no as-of filter applies to triples unless ``graph_as_of`` is set.

The graph is not stored apart: it is rebuilt from the cached model calls (a replay costs none).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

import networkx as nx

from memplusplus.llm import Complete, ask_json
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memplusplus.scope import end_of_day
from memory_protocol.documents import Document, Hit

MAX_TRIPLES = 5

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
ENTITY_SCHEMA = {"type": "object", "properties": {"entities": {"type": "array", "items": {"type": "string"}}}, "required": ["entities"]}
TRIPLE_SCHEMA = {
    "type": "object",
    "properties": {
        "triples": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {k: {"type": "string"} for k in ("subject", "relation", "object")},
                "required": ["subject", "relation", "object"],
            },
        }
    },
    "required": ["triples"],
}


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


def _strings(value: object, field: str) -> list[str]:
    items = value.get(field) if isinstance(value, dict) else None
    return [s.strip() for s in items if isinstance(s, str) and s.strip()] if isinstance(items, list) else []


class GraphMemPP(MemPlusPlus):
    """Mem++ whose retrieval is followed by at most five graph triples (see the module docstring)."""

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
        self.write_calls = 0
        self.read_calls = 0
        self._edges = 0

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        docs = list(documents)
        ids = super().ingest(docs, show_progress)
        for unit in units([d for d in docs if d.text.strip()], self.chunk_turns):
            self._extract(unit)
        return ids

    def _extract(self, unit: list[Document]) -> None:
        text = "\n".join(doc.text for doc in unit)
        self.write_calls += 1
        entities = _strings(ask_json(self.complete, ENTITY_PROMPT, text, ENTITY_SCHEMA), "entities")
        if not entities:
            return
        self.write_calls += 1
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

    def triples_for(self, query: str, as_of: date | datetime | None = None) -> list[Triple]:
        """At most five triples nearest to the question's entities (one model call)."""
        if self.graph.number_of_edges() == 0:
            return []
        self.read_calls += 1
        names = {_key(n) for n in _strings(ask_json(self.complete, QUESTION_PROMPT, query, ENTITY_SCHEMA), "entities")}
        starts = [node for node in self.graph.nodes if node in names]
        if not starts:
            return []
        theta = end_of_day(as_of) if (self.graph_as_of and as_of is not None) else None
        undirected = self.graph.to_undirected(as_view=True)
        distance = nx.multi_source_dijkstra_path_length(undirected, starts)
        found: dict[int, tuple[int, Triple]] = {}
        for u, v, data in self.graph.edges(data=True):
            if u not in distance and v not in distance:
                continue
            triple: Triple = data["triple"]
            if theta is not None and (triple.date is None or triple.date > theta):
                continue
            found[triple.order] = (min(distance.get(u, 1 << 30), distance.get(v, 1 << 30)), triple)
        ranked = sorted(found.values(), key=lambda pair: (pair[0], pair[1].order))
        return [triple for _, triple in ranked[:MAX_TRIPLES]]

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        hits = super().retrieve(query, as_of, k)
        extra = [
            Hit(doc_id=f"triple:{t.order}", text=t.text, date=t.date, author=None, score=0.0,
                sources=tuple((doc_id, 0) for doc_id in t.sources))
            for t in self.triples_for(query, as_of)
        ]
        return hits + extra

    search = retrieve


__all__ = ["GraphMemPP", "MAX_TRIPLES", "Triple", "units"]
