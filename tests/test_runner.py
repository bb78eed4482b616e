"""The runner end to end on real OrgMemBench data: records, caching, results store, CLI errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.compose import compose_config
from memory_protocol import ConfigError
from harness.config import RunConfig
from harness.runner import run

ROOT = Path(__file__).resolve().parent.parent


def config(tmp_path: Path, *overrides: str) -> RunConfig:
    raw = compose_config(
        [
            "progress=false",
            f"store.cache_dir={tmp_path / 'cache'}",
            f"store.results_dir={tmp_path / 'runs'}",
            *overrides,
        ]
    )
    return RunConfig.from_dict(raw)


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> tuple[Path, RunConfig, object]:
    """One cold C4 run whose embedding cache the other tests reuse (embedding is the slow part)."""
    folder = tmp_path_factory.mktemp("orgmem")
    cfg = config(folder, "dataset.categories=[C4]")
    return folder, cfg, run(cfg)


def test_orgmem_run_writes_records_and_a_second_run_recomputes_nothing(shared):
    _, cfg, first = shared
    assert first.stats["questions"] == 15
    assert first.stats["retrieval_cache_hits"] == 0 and first.stats["embedded_texts"] == 443 + 15
    for name in ("config.json", "records.jsonl", "summary.csv", "summary.md", "metrics.json"):
        assert (first.paths.root / name).is_file()
    records = [json.loads(line) for line in (first.paths.root / "records.jsonl").read_text().splitlines()]
    assert len(records) == 15
    record = records[0]
    assert record["as_of"] is not None and len(record["hits"]) == 50
    # As-of is honoured: no hit is dated after the end of the as-of day.
    for rec in records:
        assert all(hit["date"][:10] <= rec["as_of"] for hit in rec["hits"])
    assert any(hit["leg_ranks"] for hit in record["hits"]) and record["hits"][-1]["reserve"] is True
    assert record["read_chars"] <= 40000 <= record["retrieved_chars"]
    calls = first.stats["model_calls"]  # Mem++ calls no model at write time (paper §3)
    assert calls["documents"] == 443 and calls["questions"] == 15
    assert calls["write"]["chat_calls"] == calls["read"]["chat_calls"] == 0
    assert calls["write"]["embedded_texts"] == 443 and calls["read"]["embedded_texts"] == 15

    second = run(cfg)
    assert second.stats["retrieval_cache_hits"] == 15
    assert second.stats["embedded_texts"] == 0 and second.stats["ingested_documents"] == 0
    assert second.summary.equals(first.summary)


def test_a_write_time_system_records_its_calls_per_document_and_per_question(shared):
    from tests.fake_openai_server import FakeOpenAIServer
    from tests.write_time_fakes import fixture_reply

    folder = shared[0]
    with FakeOpenAIServer(answer_fn=fixture_reply) as server:
        llm = [f"system.llm.base_url={server.base_url}", "system.llm.api_key_env=null", "system.llm.max_retries=0"]
        first = run(config(folder, "system=mempp_g", "dataset.limit=3", *llm))
        calls = first.stats["model_calls"]
        # Mem^g++: 1 entity call per document, +1 triple call when entities were found; 1 per question
        assert calls["documents"] == 443 and calls["questions"] == 3
        assert 443 < calls["write"]["chat_calls"] <= 2 * 443 and calls["read"]["chat_calls"] == 3
        assert calls["write"]["chat"]["requests_sent"] + calls["read"]["chat"]["requests_sent"] == server.request_count
        assert calls["write"]["chat"]["cache_hits"] == 0 and calls["write"]["embedding_cache_hits"] == 443  # vectors reused
        assert calls["write"]["embedded_texts"] == 235  # only the graph's entity names (the fixture's), embedded once
        sent = server.request_count
        again = run(config(folder, "system=mempp_g", "dataset.limit=3", "system.k=10", *llm))  # rebuilt from the cache
        assert server.request_count == sent
    replayed = again.stats["model_calls"]
    assert replayed["write"]["chat"]["cache_hits"] == replayed["write"]["chat_calls"] == calls["write"]["chat_calls"]
    assert replayed["write"]["chat"]["requests_sent"] == 0
    stored = json.loads((again.paths.root / "history.jsonl").read_text().splitlines()[-1])
    assert stored["stats"]["model_calls"] == replayed


def test_changing_k_reuses_embeddings_but_not_retrievals(shared):
    folder = shared[0]
    run(config(folder, "dataset.limit=3"))
    again = run(config(folder, "dataset.limit=3", "system.k=10"))
    assert again.stats["retrieval_cache_hits"] == 0
    # 443 turns + 3 questions for retrieval, + 3 questions again for the records' explanation (diagnose)
    assert again.stats["embedded_texts"] == 0 and again.stats["embedding_cache_hits"] == 443 + 3 + 3
    assert all(len(r["hits"]) == 10 for r in again.records)


def test_leg_ablation_config_disables_the_leg(shared):
    result = run(config(shared[0], "system=mempp_no_vector", "dataset.limit=5"))
    assert result.paths.root.name.startswith("mempp_no_vector-")
    assert all("vector" not in hit["leg_ranks"] for r in result.records for hit in r["hits"])


def test_unknown_keys_and_kinds_are_config_errors(tmp_path):
    raw = compose_config(["progress=false"])
    raw["dataset"]["colour"] = "red"
    with pytest.raises(ConfigError, match="colour"):
        RunConfig.from_dict(raw)
    with pytest.raises(ConfigError, match="answerer: unknown key"):
        RunConfig.from_dict({**compose_config([]), "answerer": {"name": "x", "model": "m", "colour": 1}})
    with pytest.raises(ConfigError, match="system.kind='nope' is unknown"):
        RunConfig.from_dict({**compose_config([]), "system": {"name": "n", "kind": "nope", "k": 5}})


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "run.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=1800)  # a hang guard only


def test_cli_reports_a_missing_data_dir_without_a_traceback(tmp_path):
    missing = tmp_path / "nowhere"
    proc = run_cli(f"dataset.data_dir={missing}", "progress=false", f"store.cache_dir={tmp_path}/c")
    assert proc.returncode == 2
    assert str(missing) in proc.stderr and "Traceback" not in proc.stderr


def test_cli_reports_a_truncated_file_naming_it(tmp_path):
    folder = tmp_path / "locomo"
    folder.mkdir()
    (folder / "locomo10.json").write_text('[{"sample_id": "conv-1", "conversation": {')
    proc = run_cli("dataset=locomo", f"dataset.data_dir={tmp_path}", "progress=false", f"store.cache_dir={tmp_path}/c")
    assert proc.returncode == 2
    assert "locomo10.json" in proc.stderr and "Traceback" not in proc.stderr


def test_default_cache_lives_in_the_home_folder_unless_the_env_says_otherwise(monkeypatch, tmp_path):
    import os

    monkeypatch.delenv("MEMPP_CACHE_DIR", raising=False)
    assert RunConfig.from_dict(compose_config([])).cache_dir() == os.path.expanduser("~/.cache/mempp")
    monkeypatch.setenv("MEMPP_CACHE_DIR", str(tmp_path))
    assert RunConfig.from_dict(compose_config([])).cache_dir() == str(tmp_path)


def test_a_multirun_sweep_runs_every_job(shared):
    folder = shared[0]
    proc = run_cli("-m", "system.k=5,10", "dataset.limit=2", "progress=false",
                   f"store.cache_dir={folder}", f"store.results_dir={folder}/sweep")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("2 questions in 1 episode(s)") == 2
    assert len(list((folder / "sweep" / "orgmem").iterdir())) == 2


@pytest.mark.parametrize("failure", [KeyboardInterrupt, RuntimeError])
def test_the_runner_closes_the_system_also_when_a_run_fails(tmp_path, monkeypatch, failure):
    import dataclasses

    import harness.systems as systems
    from harness.errors import RunInterrupted
    from harness.systems import REGISTRY, BuiltSystem

    closed = []

    class Failing:
        name = "failing"

        def ingest(self, documents, show_progress=False):
            raise failure("stop")

        def retrieve(self, query, as_of=None, k=None):
            raise AssertionError("never reached")

        def close(self):
            closed.append(True)

    failing = lambda spec: dataclasses.replace(REGISTRY[spec.kind], build=lambda context: BuiltSystem(Failing()))  # noqa: E731
    monkeypatch.setattr(systems, "entry_for", failing)  # the config resolves the entry once
    with pytest.raises(RunInterrupted if failure is KeyboardInterrupt else RuntimeError):
        run(config(tmp_path, "dataset.limit=1"))
    assert closed == [True]


def test_a_fully_cached_run_says_it_made_no_model_calls_instead_of_counting_over_zero_documents():
    from model_clients.call_counts import ModelCallTally, format_model_calls

    cached = format_model_calls(ModelCallTally().as_dict(), retrieval_cache_hits=73)
    assert cached.startswith("model calls: none in this run") and "over 0" not in cached
    tally = ModelCallTally()
    tally.documents, tally.questions = 443, 73
    counted = format_model_calls(tally.as_dict(), retrieval_cache_hits=0).splitlines()
    assert counted[0].startswith("write-time model calls over 443 document(s): chat 0 (0.00/document")
    assert counted[1].startswith("read-time model calls over 73 question(s): chat 0")


def test_no_retrieval_at_all_is_not_reported_as_every_retrieval_coming_from_the_cache():
    from model_clients.call_counts import ModelCallTally, format_model_calls

    # Issue 24: dataset.limit=0 printed "every retrieval came from the cache" after no retrieval.
    assert format_model_calls(ModelCallTally().as_dict(), retrieval_cache_hits=0) == ""


def test_a_run_resolves_its_benchmark_and_system_entry_once(tmp_path, monkeypatch):
    """Issue 33: the config resolves the benchmark and the system entry once; the plan and stages read them."""
    import harness.systems as systems
    from harness.config import DatasetSpec

    calls = {"describe": 0, "entry_for": 0}
    describe, entry_for = DatasetSpec.describe, systems.entry_for

    def counted(name, function):
        def wrapper(*args):
            calls[name] += 1
            return function(*args)
        return wrapper

    monkeypatch.setattr(DatasetSpec, "describe", counted("describe", describe))
    monkeypatch.setattr(systems, "entry_for", counted("entry_for", entry_for))
    result = run(config(tmp_path, "system=bm25", "dataset.limit=2"))
    assert calls == {"describe": 1, "entry_for": 1} and result.stats["questions"] == 2
