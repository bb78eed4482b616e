"""Zep's core (graphiti-core on embedded Kuzu) behind the MemorySystem protocol, run as mem0's LoCoMo
evaluation runs Zep (evaluation/src/zep/{add,search}.py), through the caching proxy."""

from __future__ import annotations

import importlib.util
import re
from datetime import date, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

if importlib.util.find_spec("graphiti_core") is None or importlib.util.find_spec("kuzu") is None:
    pytest.skip('the zep extra is not installed (pip install -e ".[zep]")', allow_module_level=True)

from graphiti_core import Graphiti  # noqa: E402

from baselines.thirdparty.context import ZEP_ENTITIES_HEADER, ZEP_FACTS_HEADER, ZEP_HEADER  # noqa: E402
from baselines.thirdparty.zep import ZepMemory  # noqa: E402
from harness.config import SystemSpec  # noqa: E402
from harness.records import hits_per_leg  # noqa: E402
from harness.retrieval import contexts_of  # noqa: E402
from harness.systems import entry_for  # noqa: E402
from memory_protocol import MemorySystem  # noqa: E402
from model_clients.kvstore import KVStore  # noqa: E402
from model_clients.llm_client import LLMClient, LLMConfig  # noqa: E402
from tests.fake_openai_server import FakeOpenAIServer  # noqa: E402
from tests.schema_fixtures import requested_schema  # noqa: E402
from tests.thirdparty_conversation import ZEP_ANSWER, conversation  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:The Kuzu backend is deprecated:DeprecationWarning")

QUERY = "Where did Melanie go camping with Oscar?"
SUNRISE = "Melanie said: I painted a sunrise for Caroline last week."


def make(server: FakeOpenAIServer, cache: Path, encoder: Any, cache_only: bool = False, **kw: Any) -> ZepMemory:
    llm = {"model": "gpt-4o-mini", "base_url": server.base_url, "api_key_env": None, "max_retries": 0}
    client = LLMClient(LLMConfig(**llm, cache_only=cache_only), KVStore(cache / "llm.sqlite"))
    return ZepMemory(k=5, client=client, store_dir=str(cache), encoder=encoder, **kw)


def context_of(hits: list[Any]) -> str:
    """The text the runner hands the answerer for these hits."""
    config = SimpleNamespace(system=SystemSpec(name="zep", kind="zep", k=5, params={}),
                             dataset=SimpleNamespace(context_budget=None))
    (context,), _ = contexts_of(entry_for(config.system).context, config.dataset.context_budget, [hits])
    return context.text


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, encoder: Any) -> Any:
    """One ingest of the conversation for the module's tests (Graphiti makes several calls per turn)."""
    tmp_path = tmp_path_factory.mktemp("zep")
    episodes: list[dict[str, Any]] = []
    searches: list[Any] = []
    add, search = Graphiti.add_episode, Graphiti.search_

    async def spy_add(self: Any, **kw: Any) -> Any:
        episodes.append(kw)
        return await add(self, **kw)

    async def spy_search(self: Any, query: str, **kw: Any) -> Any:
        searches.append(kw["config"])
        return await search(self, query, **kw)

    patch = pytest.MonkeyPatch()
    patch.setattr(Graphiti, "add_episode", spy_add)
    patch.setattr(Graphiti, "search_", spy_search)
    with FakeOpenAIServer(answer_fn=ZEP_ANSWER) as server:
        memory = make(server, tmp_path, encoder)
        try:
            memory.ingest(conversation())
            yield SimpleNamespace(memory=memory, server=server, episodes=episodes, searches=searches, cache=tmp_path)
        finally:
            memory.close()
            patch.undo()


def test_zep_episodes_are_speaker_lines_dated_only_by_reference_time(built: Any) -> None:
    """add.py:51-61 sends each turn as one message of its speaker; the date goes to the reference
    time (graphiti's way of dating a message), not into the body."""
    docs = conversation()
    assert [(e["name"], e["episode_body"], e["reference_time"].replace(tzinfo=None)) for e in built.episodes] == [
        (d.doc_id, d.text.split("] ", 1)[1], d.date) for d in docs]
    assert built.episodes[0]["episode_body"] == "Caroline: I went to the LGBTQ support group with Melanie yesterday."
    assert built.episodes[0]["source"].value == "message"
    counters = built.memory.write_counters
    assert counters.chat_calls == counters.chat.requests_sent == built.server.request_count >= 2 * len(docs)
    assert {_schema_name(r.body) for r in built.server.requests} >= {"ExtractedEntities", "ExtractedEdges", "EdgeDuplicate"}
    assert counters.embedded_texts > 0 and counters.embedding_requests == 0  # the harness encoder's


def test_zep_searches_20_facts_and_20_entities_and_lays_them_out_as_their_template(built: Any) -> None:
    """search.py:125-139: facts (scope edges, limit 20) and entities (scope nodes, limit 20), RRF
    fusion here (no cross-encoder), our cosine floor; the context lists the facts with their date
    ranges, then the entities with their summaries (search.py:17-47)."""
    memory = built.memory
    built.searches.clear()
    sent = built.server.request_count
    hits = memory.retrieve(QUERY, k=5)
    assert built.server.request_count == sent  # no model call at read
    edges, nodes = built.searches
    assert (edges.limit, edges.edge_config.reranker.value, edges.edge_config.sim_min_score, edges.node_config) == (
        20, "reciprocal_rank_fusion", 0.25, None)
    assert (nodes.limit, nodes.node_config.reranker.value, nodes.node_config.sim_min_score, nodes.edge_config) == (
        20, "reciprocal_rank_fusion", 0.25, None)
    legs = hits_per_leg(hits)
    assert legs["zep:fact"] == 3 and legs["zep:entity"] >= 4  # three turns name two people; five names in all
    facts = [h for h in hits if "zep:fact" in h.leg_ranks]
    tahoe = next(h for h in facts if "Lake Tahoe" in h.text)
    assert tahoe.text == "  - Melanie said: Oscar and I went camping at Lake Tahoe. (2023-06-01 00:00:00+00:00 - present)"
    assert tahoe.source_ids == ("D1:3",)
    sunrise = next(h for h in facts if "sunrise" in h.text)  # invalidated by the Lake Tahoe fact (fixture reply)
    assert sunrise.text == f"  - {SUNRISE} (2023-05-01 00:00:00+00:00 - 2023-06-01 00:00:00+00:00)"
    entities = [h for h in hits if "zep:entity" in h.leg_ranks]
    assert all(re.fullmatch(r"  - [A-Z][a-z]+: .*", h.text, re.S) for h in entities)
    text = context_of(hits)
    fact_lines = "\n".join(h.text for h in facts)
    entity_lines = "\n".join(h.text for h in entities)
    assert text == f"{ZEP_HEADER}\n\n{ZEP_FACTS_HEADER}\n\n{fact_lines}\n\n\n{ZEP_ENTITIES_HEADER}\n\n{entity_lines}\n"


def test_zep_as_of_shows_no_date_after_that_day(built: Any) -> None:
    """The leak the old code had: with respect_as_of, a fact learnt by May 25 was shown with the
    invalid_at a June turn gave it. Now a fact shows as it stood on the as-of day (still holding)
    and no date after that day reaches the answerer."""
    memory = built.memory
    memory.respect_as_of = True
    try:
        hits = memory.retrieve(QUERY, as_of=date(2023, 5, 25), k=5)
        june = memory.retrieve(QUERY, as_of=date(2023, 6, 9), k=5)
    finally:
        memory.respect_as_of = False
    text = context_of(hits)
    assert f"  - {SUNRISE} (2023-05-01 00:00:00+00:00 - present)" in text
    dates = [datetime.fromisoformat(d) for d in re.findall(r"\d{4}-\d{2}-\d{2}", text)]
    assert dates and max(dates) <= datetime(2023, 5, 25)
    assert "Lake Tahoe" not in text and "Oscar" not in text  # first known from the June turn
    assert {s for h in hits for s in h.source_ids if not s.startswith("zep:entity:")} <= {"D1:0", "D1:1", "D1:2"}
    # on the day of the June turn the invalidation is known, and shown
    assert f"  - {SUNRISE} (2023-05-01 00:00:00+00:00 - 2023-06-01 00:00:00+00:00)" in context_of(june)


def test_zep_rerun_is_served_from_the_cache(built: Any, encoder: Any) -> None:
    sent = built.server.request_count
    first = [h.text for h in built.memory.retrieve(QUERY, k=5)]
    for cache_only in (False, True):
        with make(built.server, built.cache, encoder, cache_only=cache_only) as again:
            again.ingest(conversation())
            assert again.write_counters.chat.requests_sent == 0
            assert again.write_counters.chat.cache_hits == built.memory.write_counters.chat_calls
            assert [h.text for h in again.retrieve(QUERY, k=5)] == first
    assert built.server.request_count == sent


def _schema_name(body: dict[str, Any]) -> str | None:
    found = requested_schema(body)
    return found[0] if found else None
