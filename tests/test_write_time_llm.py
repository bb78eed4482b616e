"""Write-time systems through the harness's cached client against the local fake server:
calls are counted, cached (a rebuilt system makes zero requests) and replayable with cache_only."""

import json
from datetime import datetime

import pytest

from memory_protocol import ConfigError

from harness.config import SystemSpec
from model_clients.kvstore import KVStore
from model_clients.llm_client import CacheMissError
from harness.systems import RunContext, build_system
from memplusplus import Document
from memplusplus.consolidation import CLASSIFY_PROMPT, MAX_MERGED_TOKENS, MERGE_PROMPT
from tests.fake_openai_server import FakeOpenAIServer
from tests.write_time_fakes import fixture_reply

DOCS = [
    Document("d1", "Alice moved the Atlas launch to May.", "Alice", datetime(2024, 1, 2)),
    Document("d2", "Bob says the Atlas launch is in June.", "Bob", datetime(2024, 2, 2)),
    Document("d3", "Carol hired two engineers for Berlin.", "Carol", datetime(2024, 3, 2)),
]
BASE = {"weights": {"lexical": 1.0, "tag": 1.0, "vector": 4.0}, "candidates": 10}


def spec(kind: str, base_url: str, **extra) -> SystemSpec:
    llm = {"model": "gpt-4o-mini", "base_url": base_url, "api_key_env": None, "max_retries": 0}
    return SystemSpec(name=kind, kind=kind, k=3, params={**BASE, "llm": llm, **extra})


def build(kind_spec: SystemSpec, encoder, cache: KVStore | None, cache_only: bool = False):
    return build_system(RunContext(kind_spec, encoder, "unused", cache, cache_only)).memory


@pytest.fixture
def server():
    fake = FakeOpenAIServer(answer_fn=fixture_reply).start()
    yield fake
    fake.stop()


@pytest.mark.parametrize("kind,write_calls,read_calls", [("mempp_g", 2 * 3, 1), ("mempp_fact_index", 3, 0)])
def test_calls_per_document_and_question_are_counted_then_cached(server, encoder, tmp_path, kind, write_calls, read_calls):
    cache = KVStore(tmp_path / "llm.sqlite")
    system = build(spec(kind, server.base_url), encoder, cache)
    system.ingest(DOCS)
    assert server.request_count == write_calls
    hits = system.retrieve("When is the Atlas launch?", None, 3)
    assert server.request_count == write_calls + read_calls
    replay = build(spec(kind, server.base_url), encoder, cache, cache_only=True)
    replay.ingest(DOCS)
    assert [h.doc_id for h in replay.retrieve("When is the Atlas launch?", None, 3)] == [h.doc_id for h in hits]
    assert server.request_count == write_calls + read_calls  # the re-run made zero requests


def test_consolidation_through_the_client_supersedes_and_a_cache_miss_is_loud(server, encoder, tmp_path):
    cache = KVStore(tmp_path / "llm.sqlite")
    system = build(spec("mempp_consolidated", server.base_url, tau=0.5), encoder, cache)
    system.ingest(DOCS)
    rows = {row.doc_id: row for row in system.store.rows}
    assert len(rows) == 3 and server.request_count == system.reports[-1].calls >= 1
    assert rows["d1"].superseded_by == "d2" and rows["d1"].active
    fresh = build(spec("mempp_consolidated", server.base_url, tau=0.5), encoder, KVStore(tmp_path / "empty.sqlite"), True)
    with pytest.raises(CacheMissError):
        fresh.ingest(DOCS)


@pytest.mark.parametrize("label,calls", [("restatement", 2), ("conflict", 1), ("distinct", 1)])
def test_consolidation_sends_a_classify_request_then_a_merge_request_only_for_a_restatement(encoder, tmp_path, label, calls):
    def answer(body: dict) -> str:
        system = body["messages"][0]["content"]
        return json.dumps({"label": label}) if system == CLASSIFY_PROMPT else "Atlas launch: May (Alice), June (Bob)."

    fake = FakeOpenAIServer(answer_fn=answer).start()
    try:
        system = build(spec("mempp_consolidated", fake.base_url, tau=0.5), encoder, KVStore(tmp_path / "llm.sqlite"))
        system.ingest(DOCS)
        bodies = [request.body for request in fake.requests]
    finally:
        fake.stop()
    assert [body["messages"][0]["content"] for body in bodies] == [CLASSIFY_PROMPT, MERGE_PROMPT][:calls]
    for body in bodies:  # the one group (d1, d2) travels whole in each request; d3 is in no group
        user = body["messages"][-1]["content"]
        assert DOCS[0].text in user and DOCS[1].text in user and DOCS[2].text not in user
    assert "[2024-01-02T00:00:00] by Alice" in bodies[0]["messages"][-1]["content"]  # the classify call sees dates
    assert bodies[0]["max_tokens"] == 512  # the client's own cap (the model config); only the merge call sets one
    if label == "restatement":
        assert bodies[1]["max_tokens"] == MAX_MERGED_TOKENS == 220
        assert [row.text for row in system.store.rows if row.active] == [DOCS[2].text, "Atlas launch: May (Alice), June (Bob)."]


def test_a_write_time_system_without_the_run_cache_is_a_config_error(encoder):
    with pytest.raises(ConfigError):
        build(spec("mempp_g", "http://127.0.0.1:9/v1"), encoder, None)
