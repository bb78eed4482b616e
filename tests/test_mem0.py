"""Mem0 (mem0ai) behind the MemorySystem protocol, run as mem0's LoCoMo evaluation runs it
(evaluation/src/memzero/{add,search}.py), its model calls through the caching proxy."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import importlib.util

import pytest

from baselines.thirdparty.mem0 import EXTRACTION_RULES, Mem0Memory  # before mem0 itself: it switches mem0's telemetry off

if importlib.util.find_spec("mem0") is None:
    pytest.skip('the mem0 extra is not installed (pip install -e ".[mem0]")', allow_module_level=True)

from mem0 import Memory  # noqa: E402

from harness.config import SystemSpec  # noqa: E402
from harness.records import hits_per_leg  # noqa: E402
from harness.retrieval import contexts_of  # noqa: E402
from harness.systems import entry_for  # noqa: E402
from memory_protocol import MemorySystem  # noqa: E402
from model_clients.kvstore import KVStore  # noqa: E402
from model_clients.llm_client import LLMClient, LLMConfig  # noqa: E402
from tests.fake_openai_server import FakeOpenAIServer  # noqa: E402
from tests.thirdparty_conversation import conversation, mem0_extraction_answer as extraction_answer  # noqa: E402

QUESTION = "Which adoption agencies is Caroline researching?"


def make(server: FakeOpenAIServer, cache: Path, encoder: Any, cache_only: bool = False, **kw: Any) -> Mem0Memory:
    llm = {"model": "gpt-4o-mini", "base_url": server.base_url, "api_key_env": None, "max_retries": 0}
    client = LLMClient(LLMConfig(**llm, cache_only=cache_only), KVStore(cache / "llm.sqlite"))
    return Mem0Memory(k=3, client=client, store_dir=str(cache), encoder=encoder, **kw)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[dict[str, Any]]]:
    """What Mem0's add() and search() were called with (the library's own methods, wrapped)."""
    seen: dict[str, list[dict[str, Any]]] = {"add": [], "search": []}
    add, search = Memory.add, Memory.search

    def spy_add(self: Any, messages: Any, **kw: Any) -> Any:
        seen["add"].append({"messages": messages, **kw})
        return add(self, messages, **kw)

    def spy_search(self: Any, query: str, **kw: Any) -> Any:
        seen["search"].append({"query": query, **kw})
        return search(self, query, **kw)

    monkeypatch.setattr(Memory, "add", spy_add)
    monkeypatch.setattr(Memory, "search", spy_search)
    return seen


def test_mem0_adds_each_session_in_pairs_to_one_user_per_speaker_with_roles_swapped(
    tmp_path: Path, encoder: Any, calls: dict[str, list[dict[str, Any]]]
) -> None:
    """add.py:80-130: a user per speaker (speaker + conversation), the speaker's own turns as
    ``user`` and the other's as ``assistant``, ``Speaker: text``, two messages per add() within a
    session, the session date in the metadata; one extraction call per add()."""
    docs = conversation()
    with FakeOpenAIServer(answer_fn=extraction_answer) as server:
        with make(server, tmp_path, encoder) as memory:
            assert isinstance(memory, MemorySystem)
            assert memory.ingest(docs) == [d.doc_id for d in docs]
            counters = memory.write_counters
            users = {u.speaker: u.user_id for u in memory.users}
        prompts = [r.last_user_content for r in server.requests]
    assert set(users) == {"Caroline", "Melanie"} and users["Caroline"] != users["Melanie"]
    assert users["Caroline"].startswith("Caroline_") and users["Melanie"].startswith("Melanie_")
    adds = [(c["user_id"], [(m["role"], m["content"]) for m in c["messages"]], c["metadata"]["timestamp"]) for c in calls["add"]]
    caroline, melanie = users["Caroline"], users["Melanie"]
    assert adds == [
        # session 1: both turns in one add(), for each speaker's user, roles swapped
        (caroline, [("user", "Caroline: I went to the LGBTQ support group with Melanie yesterday."),
                    ("assistant", "Melanie: I painted a sunrise for Caroline last week.")], "02:01 PM on 08 May, 2023"),
        (melanie, [("assistant", "Caroline: I went to the LGBTQ support group with Melanie yesterday."),
                   ("user", "Melanie: I painted a sunrise for Caroline last week.")], "02:01 PM on 08 May, 2023"),
        # sessions 2 and 3 hold one turn each: a batch never reaches into the next session
        (caroline, [("user", "Caroline: I am researching adoption agencies in Boston.")], "09:30 AM on 25 May, 2023"),
        (melanie, [("assistant", "Caroline: I am researching adoption agencies in Boston.")], "09:30 AM on 25 May, 2023"),
        (caroline, [("assistant", "Melanie: Oscar and I went camping at Lake Tahoe.")], "06:00 PM on 09 June, 2023"),
        (melanie, [("user", "Melanie: Oscar and I went camping at Lake Tahoe.")], "06:00 PM on 09 June, 2023"),
    ]
    assert counters.chat_calls == len(adds) == server.request_count == counters.chat.requests_sent
    # our wording of their custom instructions reaches the extraction prompt; the date is the turns'
    assert all(f"## Custom Instructions\n{EXTRACTION_RULES}" in p for p in prompts)
    assert "## Observation Date\n2023-05-08" in prompts[0] and "## Current Date\n2023-06-09" in prompts[5]
    assert counters.embedded_texts > 0 and counters.embedding_requests == 0  # the harness encoder's, never upstream


def test_mem0_searches_each_speaker_top_30_and_the_answerer_reads_their_layout(
    tmp_path: Path, encoder: Any, calls: dict[str, list[dict[str, Any]]]
) -> None:
    """search.py:37-110 with the Makefile's --top_k 30: both speakers' memories searched apart,
    listed per speaker as ``timestamp: memory`` lines, each list a JSON array indented by 4."""
    docs = conversation()
    with FakeOpenAIServer(answer_fn=extraction_answer) as server:
        with make(server, tmp_path, encoder, threshold=0.0) as memory:  # every memory, however far from the question
            memory.ingest(docs)
            users = {u.speaker: u.user_id for u in memory.users}
            calls["search"].clear()
            hits = memory.retrieve(QUESTION, k=3)
            sent = server.request_count
            assert memory.proxy is not None and memory.proxy.counters.chat_requests == sent  # no call at read
    assert [(c["filters"], c["top_k"]) for c in calls["search"]] == [
        ({"user_id": users["Caroline"]}, 30), ({"user_id": users["Melanie"]}, 30)]
    assert hits_per_leg(hits) == {"mem0:Caroline": 2, "mem0:Melanie": 2}  # each user holds its own speaker's memories
    caroline = [h for h in hits if "mem0:Caroline" in h.leg_ranks]
    assert caroline[0].text == "09:30 AM on 25 May, 2023: Remembered: I am researching adoption agencies in Boston."
    assert caroline[0].source_ids == ("D1:2",)

    spec = SystemSpec(name="mem0", kind="mem0", k=3, params={})
    config = SimpleNamespace(system=spec, dataset=SimpleNamespace(context_budget=None))
    # what the runner gives the answerer
    (context,), layouts = contexts_of(entry_for(config.system).context, config.dataset.context_budget, [hits])
    lines = {speaker: [h.text for h in hits if f"mem0:{speaker}" in h.leg_ranks] for speaker in ("Caroline", "Melanie")}
    assert context.text == (f"Caroline's memories:\n\n{json.dumps(lines['Caroline'], indent=4)}\n\n"
                            f"Melanie's memories:\n\n{json.dumps(lines['Melanie'], indent=4)}")
    # where the runner's in-budget metrics find each memory: its JSON string inside the array
    assert layouts is not None
    for hit, line in zip(hits, layouts[0]):
        assert context.text[line.start : line.start + line.length] == json.dumps(hit.text)


def test_mem0_as_of_searches_only_memories_of_turns_up_to_that_day(tmp_path: Path, encoder: Any,
                                                                   calls: dict[str, list[dict[str, Any]]]) -> None:
    """The as-of filter is Mem0's own metadata filter on ``created_at`` (the turns' date)."""
    with FakeOpenAIServer(answer_fn=extraction_answer) as server:
        with make(server, tmp_path, encoder, respect_as_of=True, threshold=0.0) as memory:
            memory.ingest(conversation())
            calls["search"].clear()
            scoped = memory.retrieve(QUESTION, as_of=date(2023, 5, 24), k=3)
            unscoped = memory.retrieve(QUESTION, k=3)
    assert calls["search"][0]["filters"]["created_at"] == {"lte": "2023-05-24T23:59:59.999999"}
    assert {s for h in scoped for s in h.source_ids} == {"D1:0", "D1:1"}
    assert {s for h in unscoped for s in h.source_ids} == {"D1:0", "D1:1", "D1:2", "D1:3"}
    assert all("May, 2023" in h.text and "08 May" in h.text for h in scoped)


def test_mem0_rerun_is_served_from_the_cache(tmp_path: Path, encoder: Any) -> None:
    docs = conversation()
    with FakeOpenAIServer(answer_fn=extraction_answer) as server:
        with make(server, tmp_path, encoder) as memory:
            memory.ingest(docs)
            first = [h.text for h in memory.retrieve(QUESTION, k=3)]
            calls_made = memory.write_counters.chat_calls
        for cache_only in (False, True):
            with make(server, tmp_path, encoder, cache_only=cache_only) as again:
                again.ingest(docs)
                assert again.write_counters.chat.cache_hits == calls_made and again.write_counters.chat.requests_sent == 0
                assert [h.text for h in again.retrieve(QUESTION, k=3)] == first
        assert server.request_count == calls_made


def test_mem0_cache_only_miss_fails_clearly(tmp_path: Path, encoder: Any) -> None:
    with FakeOpenAIServer(answer_fn=extraction_answer) as server:
        with make(server, tmp_path, encoder, cache_only=True) as memory:
            with pytest.raises(Exception, match="cache_only"):
                memory.ingest(conversation()[:1])
        assert server.request_count == 0
