"""The context the answerer reads for Mem0 and Zep, laid out as mem0's LoCoMo evaluation does.

Mem0 (``evaluation/src/memzero/search.py:98-110``): per speaker, ``timestamp: memory`` lines as a
JSON array indented by 4, under a line naming the speaker. Zep (``evaluation/src/zep/search.py:17-47``):
facts as ``  - FACT (from - to)`` lines (``date unknown`` / ``present`` for a missing bound), then
entities as ``  - NAME: summary``. The layouts are theirs, the header sentences ours. A hit's section
is its only leg (``mem0:<speaker>``, ``zep:fact``, ``zep:entity``); each renderer says where every
hit's line sits (``PlacedLine``) for the in-budget metrics.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from memplusplus.evidence import RenderedContext
from memory_protocol import Hit

MEM0_LEG = "mem0:"  # + the speaker whose memories the hit is one of
ZEP_FACT_LEG = "zep:fact"
ZEP_ENTITY_LEG = "zep:entity"

ZEP_HEADER = "Facts and entities from the memory graph that bear on this conversation."
ZEP_FACTS_HEADER = "# Facts, most relevant first, each followed by the period it held\n# layout: FACT (from - to)"
ZEP_ENTITIES_HEADER = "# Entities, most relevant first\n# layout: NAME: summary"


@dataclass(frozen=True)
class PlacedLine:

    start: int
    length: int
    sources: tuple[tuple[str, int], ...]


def leg_of(hit: Hit) -> str:
    return next(iter(hit.leg_ranks), "")


class _Writer:

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.offset = 0
        self.placed: list[tuple[Hit, PlacedLine]] = []
        self.starts: dict[str, int] = {}

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.offset += len(text)

    def line(self, hit: Hit, shown: str, prefix: str = "", suffix: str = "") -> None:
        self.write(prefix)
        for doc_id in hit.source_ids:
            self.starts.setdefault(doc_id, self.offset)
        self.placed.append((hit, PlacedLine(self.offset, len(shown), tuple((d, 0) for d in hit.source_ids))))
        self.write(shown + suffix)

    def done(self, hits: Sequence[Hit], budget: int | None) -> tuple[RenderedContext, list[PlacedLine]]:
        order = {id(hit): n for n, hit in enumerate(hits)}
        placed = [line for _, line in sorted(self.placed, key=lambda pair: order[id(pair[0])])]
        return RenderedContext("".join(self.parts), self.starts, budget), placed


def render_mem0(hits: Sequence[Hit], budget: int | None = None) -> tuple[RenderedContext, list[PlacedLine]]:
    """One section per speaker, each a JSON array indented by 4 (non-ASCII escaped, as ``json.dumps``)."""
    speakers: dict[str, list[Hit]] = {}
    for hit in hits:
        speakers.setdefault(leg_of(hit).removeprefix(MEM0_LEG), []).append(hit)
    out = _Writer()
    for n, (speaker, group) in enumerate(speakers.items()):
        out.write(("\n\n" if n else "") + f"{speaker}'s memories:\n\n")
        if not group:
            out.write("[]")
            continue
        out.write("[\n")
        for i, hit in enumerate(group):
            out.line(hit, json.dumps(hit.text), prefix="    ", suffix=",\n" if i + 1 < len(group) else "\n")
        out.write("]")
    return out.done(hits, budget)


def render_zep(hits: Sequence[Hit], budget: int | None = None) -> tuple[RenderedContext, list[PlacedLine]]:
    facts = [hit for hit in hits if leg_of(hit) == ZEP_FACT_LEG]
    entities = [hit for hit in hits if leg_of(hit) == ZEP_ENTITY_LEG]
    out = _Writer()
    out.write(f"{ZEP_HEADER}\n\n{ZEP_FACTS_HEADER}\n\n")
    for i, hit in enumerate(facts):
        out.line(hit, hit.text, prefix="\n" if i else "")
    out.write(f"\n\n\n{ZEP_ENTITIES_HEADER}\n\n")
    for i, hit in enumerate(entities):
        out.line(hit, hit.text, prefix="\n" if i else "")
    out.write("\n")
    return out.done(hits, budget)


def fact_line(fact: str, valid_from: str, valid_to: str) -> str:
    return f"  - {fact} ({valid_from} - {valid_to})"


def entity_line(name: str, summary: str) -> str:
    return f"  - {name}: {summary}"
