"""Shared fakes for the write-time systems' unit tests: an encoder with chosen directions and a
scripted ``complete`` callable that records every call."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np

from memplusplus.llm import CallFailed


class OneHotEncoder:
    """A stand-in encoder: each text gets the unit vector of the axis ``_index(text)`` names."""

    dimension = 8

    def _index(self, text: str) -> int:
        raise NotImplementedError

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimension, dtype=np.float32)
        vector[self._index(text)] = 1.0
        return vector

    def encode(self, texts, show_progress: bool = False) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        return self._vector(text)


class TopicEncoder(OneHotEncoder):
    """Every text whose first word is a topic gets that topic's unit vector (others: a fresh one),
    so the cosine between two texts is 1 (same topic) or 0 (different)."""

    dimension = 16

    def __init__(self) -> None:
        self.topics: dict[str, int] = {}

    def _index(self, text: str) -> int:
        topic = (text.split() or [""])[0].lower()
        return self.topics.setdefault(topic, len(self.topics) % self.dimension)


class ScriptedLLM:
    """``complete(messages, response_format, max_tokens)``: ``reply(user_text)`` gives a dict (sent
    as JSON), a str (sent as is) or None (the call fails). ``max_tokens`` records each call's cap."""

    def __init__(self, reply: Callable[[str], object]) -> None:
        self.reply = reply
        self.calls: list[list[dict[str, str]]] = []
        self.max_tokens: list[int | None] = []

    def __call__(self, messages, response_format=None, max_tokens=None) -> str:
        self.calls.append(list(messages))
        self.max_tokens.append(max_tokens)
        answer = self.reply(messages[-1]["content"])
        if answer is None:
            raise CallFailed("scripted failure")
        return answer if isinstance(answer, str) else json.dumps(answer)


def _capitalised(text: str, limit: int = 4) -> list[str]:
    import re

    return list(dict.fromkeys(re.findall(r"\b[A-Z][a-zA-Z]{2,}\b", text)))[:limit]


def fixture_reply(body: dict) -> str:
    """Schema-valid fixture JSON for each write-time prompt, told apart by its system message
    (fixtures, never a model's output: the figures they give check plumbing only)."""
    system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
    user = body["messages"][-1]["content"]
    if "organisation's memory" in system:  # consolidation: classify (JSON label), else merge (text)
        if '{"label"' in system:
            return json.dumps({"label": "conflict"})
        return " ".join(part.split(":\n", 1)[-1] for part in user.split("\n\n"))
    if system.startswith("Given a text and entities"):
        names = _capitalised(user.split("\n\n", 1)[-1]) or ["Record"]
        return json.dumps({"triples": [{"subject": a, "relation": "mentioned with", "object": b}
                                       for a, b in zip(names, names[1:] + names[:1])]})
    if "entities" in system:
        return json.dumps({"entities": _capitalised(user)})
    if "facts" in system:
        return json.dumps({"facts": [s.strip() for s in user.split(".") if s.strip()][:5]})
    return "unexpected prompt"


def any_write_time_reply(body: dict) -> str:
    """One fixture ``answer_fn`` for every write-time system: Mem0's extraction prompt, Graphiti's
    structured prompts (a schema not named ``reply``), else Mem++'s variants (:func:`fixture_reply`)."""
    from tests.fake_openai_server import last_user_content
    from tests.schema_fixtures import requested_schema
    from tests.thirdparty_conversation import ZEP_ANSWER, mem0_extraction_answer

    if "## New Messages" in last_user_content(body):
        return mem0_extraction_answer(body)
    found = requested_schema(body)
    if found is not None and found[0] != "reply":  # memplusplus.llm.ask_json names its schema "reply"
        return ZEP_ANSWER(body)
    return fixture_reply(body)
