"""The registry and the endpoint settings as the run sees them: what a dry run would embed, which
settings name a system's results (and so its cache keys) and which only say how calls are made."""

from __future__ import annotations

from harness.compose import compose_config
from harness.config import RunConfig
from harness.plan import system_identity
from harness.retrieval import retrieval_key
from harness.config import run_identity
from harness.systems import REGISTRY, entry_for, write_time_kinds
from loaders import load_dataset
from memory_protocol import Question
from model_clients.embedding_cost import texts_to_embed
from model_clients.kvstore import stable_hash

QUESTION = Question("q1", "Who moved the launch?", "C1", None, "", None, ())


def config(*overrides: str) -> RunConfig:
    return RunConfig.from_dict(compose_config(list(overrides)))


def key(cfg: RunConfig) -> str:
    return retrieval_key(system_identity(cfg.system), "encoder", "corpus", QUESTION)


def test_a_dry_run_of_mempp_plus_counts_its_sentence_and_clause_views():
    cfg = config("dataset=orgmem", "system=mempp_plus", "dataset.limit=3")
    episode = load_dataset("orgmem", limit=3)[0]
    rule = entry_for(cfg.system).embed_rule(cfg.system.params)
    texts = texts_to_embed(rule, [episode], lambda ep: ep.questions)
    plain = [d.text for d in episode.documents] + [q.text for q in episode.questions]
    assert len(texts) > len(plain) and texts[: len(episode.documents)] == plain[: len(episode.documents)]
    off = config("dataset=orgmem", "system=mempp_plus", "system.plus.sentence_views=false", "system.plus.clause_views=false")
    rule_off = entry_for(off.system).embed_rule(off.system.params)
    assert texts_to_embed(rule_off, [episode], lambda ep: ep.questions) == plain


def test_write_time_kinds_come_from_the_registry():
    assert write_time_kinds() == ["mem0", "mempp_consolidated", "mempp_fact_index", "mempp_g", "zep"]
    assert {"mempp", "mempp_plus", "bm25", "vector", "rag", "full_context"} <= set(REGISTRY)


def test_execution_only_endpoint_settings_leave_the_keys_alone():
    base = config("system=mempp_g")
    slow = config("system=mempp_g", "system.llm.timeout_s=5", "system.llm.concurrency=1", "system.llm.max_retries=0")
    assert key(base) == key(slow)
    assert key(base) != key(config("system=mempp_g", "system.llm.model=gpt-4.1-mini"))
    answered = ["answerer=gpt-4.1-mini"]
    first = run_identity(config(*answered).as_dict())
    second = run_identity(config(*answered, "answerer.timeout_s=5", "judge.concurrency=1", "+answerer.price_in_per_mtok=3").as_dict())
    assert stable_hash(first) == stable_hash(second)
    assert stable_hash(first) != stable_hash(run_identity(config(*answered, "answerer.temperature=0.5").as_dict()))


def test_mem0_and_zep_keys_do_not_hold_the_cache_folder_or_cache_only():
    for system in ("mem0", "zep"):
        cfg = config(f"system={system}")
        assert "cache_dir" not in cfg.system.params and "cache_only" not in cfg.system.params
        assert key(cfg) == key(config(f"system={system}", "cache_only=true", "store.cache_dir=/elsewhere"))


def test_tuning_one_dataset_leaves_the_other_datasets_mempp_plus_identity_alone():
    orgmem = config("dataset=orgmem", "system=mempp_plus")
    assert "by_dataset" not in orgmem.system.params and orgmem.system.params["plus"]["lexical_weight"] == 8.0
    assert "locomo" not in str(system_identity(orgmem.system)) and "longmemeval" not in str(system_identity(orgmem.system))
    retuned = config("dataset=orgmem", "system=mempp_plus", "system.plus.lexical_weight=4.0")
    assert retuned.system.params["plus"]["lexical_weight"] == 4.0 and key(orgmem) != key(retuned)
    locomo = config("dataset=locomo", "system=mempp_plus")
    assert locomo.system.params["plus"]["lexical_weight"] == 2.0
    assert system_identity(orgmem.system)["version"] == REGISTRY["mempp_plus"].version
