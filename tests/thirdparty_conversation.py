"""A small dated conversation shared by the Mem0 and Zep adapter tests, and fixture replies to the
prompts of their libraries (fixtures, never a model's output: what they give checks plumbing only)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from memory_protocol import Document
from tests.fake_openai_server import last_user_content
from tests.schema_fixtures import schema_answer

TURNS = [
    ("Caroline", "I went to the LGBTQ support group with Melanie yesterday.", datetime(2023, 5, 8, 13, 56)),
    ("Melanie", "I painted a sunrise for Caroline last week.", datetime(2023, 5, 8, 14, 1)),
    ("Caroline", "I am researching adoption agencies in Boston.", datetime(2023, 5, 25, 9, 30)),
    ("Melanie", "Oscar and I went camping at Lake Tahoe.", datetime(2023, 6, 9, 18, 0)),
]


def stamp(when: datetime) -> str:
    """The date as the turn's text writes it (LoCoMo's style)."""
    return f"{when:%I:%M %p on %d %B, %Y}"


def conversation() -> list[Document]:
    """Four turns in three sessions (one per date), shaped as the LoCoMo loader shapes turns."""
    sessions = {day: f"session_{n}" for n, day in enumerate(dict.fromkeys(w.date() for *_, w in TURNS), 1)}
    return [
        Document(f"D1:{i}", f"[{stamp(when)}] {who}: {text}", who, when, sessions[when.date()],
                 author_role="speaker", evidence="as_stored")
        for i, (who, text, when) in enumerate(TURNS)
    ]


def names_in(text: str) -> list[str]:
    """Capitalised words of a turn after its ``[date]`` header (the fixtures' stand-in for entity extraction)."""
    said = re.sub(r"^\s*\[[^\]]*\]", "", text)
    return list(dict.fromkeys(w for w in re.findall(r"\b[A-Z][a-z]+\b", said)))


def mem0_extraction_answer(body: dict[str, Any]) -> str:
    """Mem0's extraction reply: one memory per new ``user`` message (the instructions' rule 4),
    its text the message after the speaker."""
    prompt = last_user_content(body)
    if "## New Messages" not in prompt:
        return "{}"
    new = prompt.split("## New Messages", 1)[1].split("## Observation Date", 1)[0]
    said = [line.split(": ", 2)[-1] for line in new.strip().splitlines() if line.startswith("user: ")]
    return json.dumps({"memory": [{"text": f"Remembered: {text}"} for text in said]})


def current_message(body: dict[str, Any]) -> str:
    """The turn a Graphiti prompt is about (its node and edge prompts spell the tag two ways)."""
    prompt = last_user_content(body)
    for tag in ("CURRENT MESSAGE", "CURRENT_MESSAGE"):
        if f"<{tag}>" in prompt:
            return prompt.split(f"<{tag}>", 1)[1].split(f"</{tag}>", 1)[0]
    return ""


def _entities(body: dict[str, Any]) -> dict[str, Any]:
    return {"extracted_entities": [{"name": n, "entity_type_id": 0} for n in names_in(current_message(body))]}


def _edges(body: dict[str, Any]) -> dict[str, Any]:
    names = names_in(current_message(body))
    if len(names) < 2:
        return {"edges": []}
    said = current_message(body).strip().split("] ", 1)[-1]
    valid_at = "2023-06-01T00:00:00Z" if "Lake Tahoe" in said else "2023-05-01T00:00:00Z"
    fact = {"source_entity_name": names[0], "target_entity_name": names[1], "relation_type": "MENTIONS",
            "fact": f"{names[0]} said: {said.split(': ', 1)[-1]}", "valid_at": valid_at, "invalid_at": None}
    return {"edges": [fact]}


def _contradictions(body: dict[str, Any]) -> dict[str, Any]:
    """The Lake Tahoe fact (June) contradicts the sunrise fact (May): Graphiti then sets the older
    fact's ``invalid_at`` to the newer one's ``valid_at``, a date after the May questions."""
    prompt = last_user_content(body)
    if "Lake Tahoe" not in prompt.split("<NEW FACT>", 1)[-1].split("</NEW FACT>", 1)[0]:
        return {"duplicate_facts": [], "contradicted_facts": []}
    ids = [int(i) for i, fact in re.findall(r"""['"]idx['"]:\s*(\d+),\s*['"]fact['"]:\s*['"]([^'"]*)""", prompt) if "sunrise" in fact]
    return {"duplicate_facts": [], "contradicted_facts": ids}


# Graphiti's replies: entities and one fact per turn naming two people; any other schema's minimal instance.
ZEP_ANSWER = schema_answer({"ExtractedEntities": _entities, "ExtractedEdges": _edges, "EdgeDuplicate": _contradictions},
                           fallback=lambda body: "{}")
