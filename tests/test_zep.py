"""Zep's core (graphiti-core on embedded Kuzu) behind the MemorySystem protocol, through the caching proxy."""

from __future__ import annotations

import importlib.util
from datetime import date
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("graphiti_core") is None or importlib.util.find_spec("kuzu") is None:
    pytest.skip('the zep extra is not installed (pip install -e ".[zep]")', allow_module_level=True)

from baselines.thirdparty.zep import ZepMemory  # noqa: E402
from memory_protocol.protocol import MemorySystem  # noqa: E402
from model_clients.kvstore import KVStore  # noqa: E402
from model_clients.llm_client import LLMClient, LLMConfig  # noqa: E402
from tests.fake_openai_server import FakeOpenAIServer  # noqa: E402
from tests.schema_fixtures import requested_schema  # noqa: E402
from tests.thirdparty_conversation import ZEP_ANSWER, conversation  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:The Kuzu backend is deprecated:DeprecationWarning")


ANSWER = ZEP_ANSWER


def make(server: FakeOpenAIServer, cache: Path, encoder: Any, cache_only: bool = False, **kw: Any) -> ZepMemory:
    llm = {"model": "gpt-4o-mini", "base_url": server.base_url, "api_key_env": None, "max_retries": 0}
    client = LLMClient(LLMConfig(**llm, cache_only=cache_only), KVStore(cache / "llm.sqlite"))
    return ZepMemory(k=5, client=client, store_dir=str(cache), encoder=encoder, **kw)


def test_zep_ingests_a_conversation_and_returns_facts_with_sources(tmp_path: Path, encoder: Any) -> None:
    docs = conversation()
    query = "Where did Melanie go camping with Oscar?"
    with FakeOpenAIServer(answer_fn=ANSWER) as server:
        with make(server, tmp_path, encoder) as memory:
            assert isinstance(memory, MemorySystem)
            assert memory.ingest(docs) == [d.doc_id for d in docs]
            hits = memory.retrieve(query, k=5)
            assert memory.retrieve(query, as_of=date(2023, 5, 10), k=5) == hits  # the as-of date is ignored by default
            memory.respect_as_of = True  # facts only from documents dated up to the as-of day
            before = memory.retrieve(query, as_of=date(2023, 6, 8), k=5)
            assert before and {s for h in before for s in h.source_ids} <= {"D1:0", "D1:1", "D1:2"}  # not D1:3 (June 9)
            assert [h.source_ids for h in memory.retrieve(query, as_of=date(2023, 6, 9), k=5)][:1] == [("D1:3",)]
            counters = memory.write_counters
            assert memory.proxy is not None and memory.proxy.counters.chat_requests == counters.chat_calls  # no call at read
            assert memory.folder is not None and (memory.folder / "graph.kuzu").exists()
        sent = server.request_count
        # every write-time call went through the proxy; each was answered upstream once
        assert counters.chat_calls == counters.chat.requests_sent == sent >= 2 * len(docs)
        assert {_schema_name(r.body) for r in server.requests} >= {"ExtractedEntities", "ExtractedEdges"}
        assert counters.embedded_texts > 0 and counters.embedding_requests == 0  # the harness encoder's

        assert hits and all("valid from 2023-05-01 00:00 to present" in h.text for h in hits)
        assert {s for h in hits for s in h.source_ids} <= {d.doc_id for d in docs}
        top = hits[0]
        assert "Lake Tahoe" in top.text and top.source_ids == ("D1:3",)

        # a re-run makes zero upstream requests, and cache_only replays it
        for cache_only in (False, True):
            with make(server, tmp_path, encoder, cache_only=cache_only) as again:
                again.ingest(docs)
                assert again.write_counters.chat.requests_sent == 0
                assert again.write_counters.chat.cache_hits == counters.chat_calls
                assert [h.text for h in again.retrieve(query, k=5)] == [h.text for h in hits]
        assert server.request_count == sent


def _schema_name(body: dict[str, Any]) -> str | None:
    found = requested_schema(body)
    return found[0] if found else None
