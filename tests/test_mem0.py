"""Mem0 (mem0ai) behind the MemorySystem protocol, its model calls through the caching proxy."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import importlib.util

import pytest

from baselines.thirdparty.mem0 import Mem0Memory  # before mem0 itself: it switches mem0's telemetry off

if importlib.util.find_spec("mem0") is None:
    pytest.skip('the mem0 extra is not installed (pip install -e ".[mem0]")', allow_module_level=True)

from memory_protocol.protocol import MemorySystem  # noqa: E402
from model_clients.kvstore import KVStore  # noqa: E402
from model_clients.llm_client import LLMClient, LLMConfig  # noqa: E402
from tests.fake_openai_server import FakeOpenAIServer  # noqa: E402
from tests.thirdparty_conversation import conversation, mem0_extraction_answer as extraction_answer  # noqa: E402


def make(server: FakeOpenAIServer, cache: Path, encoder: Any, cache_only: bool = False, **kw: Any) -> Mem0Memory:
    llm = {"model": "gpt-4o-mini", "base_url": server.base_url, "api_key_env": None, "max_retries": 0}
    client = LLMClient(LLMConfig(**llm, cache_only=cache_only), KVStore(cache / "llm.sqlite"))
    return Mem0Memory(k=3, client=client, store_dir=str(cache), encoder=encoder, **kw)


def test_mem0_ingests_a_conversation_and_returns_source_ids(tmp_path: Path, encoder: Any) -> None:
    docs = conversation()
    with FakeOpenAIServer(answer_fn=extraction_answer) as server:
        with make(server, tmp_path, encoder) as memory:
            assert isinstance(memory, MemorySystem)
            assert memory.ingest(docs) == [d.doc_id for d in docs]
            hits = memory.retrieve("Which adoption agencies is Caroline researching?", k=3)
            memory.respect_as_of = True  # only memories from turns dated up to the as-of day (Mem0's own filter)
            scoped = memory.retrieve("Which adoption agencies is Caroline researching?", as_of=date(2023, 5, 24), k=3)
            assert scoped and {s for h in scoped for s in h.source_ids} <= {"D1:0", "D1:1"}
            memory.respect_as_of = False
            counters = memory.write_counters
            assert memory.proxy is not None and memory.proxy.counters.chat_requests == counters.chat_calls  # no call at read
            assert memory.folder is not None and memory.folder.is_relative_to(tmp_path / "mem0")
        # one extraction call per turn, every one sent through the proxy and answered upstream once
        assert counters.chat_calls == len(docs) == counters.chat.requests_sent == server.request_count
        assert memory.write_calls_per_document == 1.0
        assert counters.embedded_texts > 0 and counters.embedding_requests == 0  # the harness encoder's, never upstream
        assert all(r.body.get("messages") for r in server.requests)
        # the wall-clock date in Mem0's prompt is pinned to the turn's own date
        prompts = [r.last_user_content for r in server.requests]
        assert "## Observation Date\n2023-05-08" in prompts[0] and "## Current Date\n2023-06-09" in prompts[3]

        assert hits and len(hits) <= 3
        assert hits[0].source_ids == ("D1:2",)
        assert "adoption agencies" in hits[0].text and hits[0].text.startswith("[2023-05-25 09:30]")
        assert {s for h in hits for s in h.source_ids} <= {d.doc_id for d in docs}
        assert "adoption agencies" in memory.render(hits).text

        # a re-run makes zero upstream requests, and cache_only replays it
        for cache_only in (False, True):
            with make(server, tmp_path, encoder, cache_only=cache_only) as again:
                again.ingest(docs)
                assert again.write_counters.chat.cache_hits == len(docs) and again.write_counters.chat.requests_sent == 0
                replayed = again.retrieve("Which adoption agencies is Caroline researching?", k=3)
                assert [h.source_ids for h in replayed] == [h.source_ids for h in hits]
        assert server.request_count == len(docs)


def test_mem0_cache_only_miss_fails_clearly(tmp_path: Path, encoder: Any) -> None:
    with FakeOpenAIServer(answer_fn=extraction_answer) as server:
        with make(server, tmp_path, encoder, cache_only=True) as memory:
            with pytest.raises(Exception, match="cache_only"):
                memory.ingest(conversation()[:1])
        assert server.request_count == 0


def test_mem0_groups_turns_per_add_call(tmp_path: Path, encoder: Any) -> None:
    with FakeOpenAIServer(answer_fn=extraction_answer) as server:
        with make(server, tmp_path, encoder, turns_per_add=2) as memory:
            memory.ingest(conversation())
            hits = memory.retrieve("camping at Lake Tahoe", k=1)
        assert server.request_count == 2
        assert hits[0].source_ids == ("D1:2", "D1:3")
