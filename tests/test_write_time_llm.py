"""Write-time systems through the harness's cached client against the local fake server:
calls are counted, cached (a rebuilt system makes zero requests) and replayable with cache_only."""

from datetime import datetime

import pytest

from memory_protocol import ConfigError

from harness.config import SystemSpec
from model_clients.kvstore import KVStore
from model_clients.llm_client import CacheMissError
from harness.systems import RunContext, build_system
from memplusplus import Document
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


def test_a_write_time_system_without_the_run_cache_is_a_config_error(encoder):
    with pytest.raises(ConfigError):
        build(spec("mempp_g", "http://127.0.0.1:9/v1"), encoder, None)
