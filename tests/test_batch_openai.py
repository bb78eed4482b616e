"""batch=true: OpenAI's Batch API through the real SDK against a local fake (tests/fake_batch_provider.py).

Checked on what the fake received (uploads, batch creations, polls, live requests) and on what is
on disk (the cache entries, the batch journal in the cache file).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli import execute
from harness.compose import compose_config
from harness.config import RunConfig
from memory_protocol import ConfigError
from model_clients.batch.journal import OPEN, BatchJob, BatchJournal, JournalLine, pending_in, status_report
from model_clients.batch.openai_batches import MAX_BYTES, MAX_LINES, OpenAIBatches
from model_clients.batch.runner import BatchError, BatchOptions, provider_name, run_batches
from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient, LLMConfig
from tests.fake_batch_provider import BatchScript, FakeBatchServer
from tests.fake_openai_server import last_user_content
from tests.llm_client_support import REPO_ROOT, essence, expected_text, make_client, reqs

POLL = 0.001


@pytest.fixture
def server():
    fake = FakeBatchServer().start()
    yield fake
    fake.stop()


def batch_client(server: FakeBatchServer, cache: Path, sleeps: list[float] | None = None, **limits) -> LLMClient:
    """A client with batch=true on the fake; ``sleeps`` records each wait between polls; ``limits``
    (max_lines, max_bytes) lower the provider's."""
    config = LLMConfig(model="gpt-4.1-mini", base_url=server.base_url, api_key_env=None, timeout_s=5.0, max_retries=3,
                       batch=True, batch_poll_s=POLL)
    record = sleeps.append if sleeps is not None else (lambda seconds: None)
    return LLMClient(config, KVStore(cache), sleep=record, batch_options=BatchOptions(poll_s=POLL, **limits))


def kv_rows(path: Path) -> dict[str, bytes]:
    with sqlite3.connect(path) as conn:
        return {key: bytes(value) for key, value in conn.execute("SELECT key, value FROM kv")}


def journal_rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT batch_id, provider, model, lines, attempt, status, provider_status "
                            "FROM batch_jobs ORDER BY batch_id").fetchall()


# --------------------------------------------------------------------------- the documented limits


def test_limits_are_the_documented_ones():
    # OpenAI API reference, Create batch (input_file_id): 50,000 requests and 200 MB per input file.
    assert (MAX_LINES, MAX_BYTES) == (50_000, 200_000_000)
    provider = OpenAIBatches(sdk=None)  # type: ignore[arg-type]
    assert (provider.max_lines, provider.max_bytes) == (50_000, 200_000_000)


# --------------------------------------------------------------------------- identical to live calls


def test_batched_requests_give_the_live_results_and_cache_entries(server, tmp_path):
    requests = reqs(5)
    live = make_client(server, tmp_path / "live.sqlite")
    live_results = live.complete_many(requests, progress=False)
    live_bodies = {r.last_user_content: r.body for r in server.requests}
    assert server.request_count == 5 and not server.batch_creates

    sleeps: list[float] = []
    batched = batch_client(server, tmp_path / "batch.sqlite", sleeps)
    results = batched.complete_many(requests, progress=False)

    assert server.request_count == 5  # no live call from the batch client
    assert essence(results) == essence(live_results)
    assert [r.text for r in results] == [expected_text(r) for r in requests]
    # One input file, uploaded for purpose "batch"; one batch on the chat endpoint, 24 h window.
    assert server.upload_purposes == ["batch"]
    assert server.batch_creates == [{"input_file_id": "file-fake-0", "endpoint": "/v1/chat/completions",
                                     "completion_window": "24h"}]
    [lines] = server.uploads
    assert [line["custom_id"] for line in lines] == [batched.cache_key(r) for r in requests]
    for line in lines:  # each line's body is exactly what the live call sent
        assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
        assert line["body"] == live_bodies[last_user_content(line["body"])]
    # On disk: the same cache entries, byte for byte, under the same keys.
    assert kv_rows(tmp_path / "batch.sqlite") == kv_rows(tmp_path / "live.sqlite")
    counters = batched.counters
    assert (counters.completed, counters.batch_completed, counters.failures) == (5, 5, 0)
    assert counters.batch_prompt_tokens == counters.prompt_tokens == live.counters.prompt_tokens > 0
    assert counters.batch_completion_tokens == counters.completion_tokens > 0
    assert journal_rows(tmp_path / "batch.sqlite") == [("batch_fake_0", "openai", "gpt-4.1-mini", 5, 0, "done", "ended")]

    # A later live run, or a cache-only replay, on the batch-filled cache sends nothing.
    again = make_client(server, tmp_path / "batch.sqlite").complete_many(requests, progress=False)
    replay = make_client(server, tmp_path / "batch.sqlite", cache_only=True).complete_many(requests, progress=False)
    assert server.request_count == 5 and len(server.batch_creates) == 1
    assert essence(again) == essence(replay) == essence(live_results)


def test_while_an_openai_batch_runs_the_bar_names_its_status_and_counts_its_lines(server, tmp_path, capsys):
    server.script(BatchScript(polls=2))
    batch_client(server, tmp_path / "c.sqlite").complete_many(reqs(3), desc="answers", progress=True)
    frames = [frame for frame in re.split(r"[\r\n]", capsys.readouterr().err) if "(batch)" in frame]
    running = [frame for frame in frames if "openai: in_progress" in frame]
    assert running and all(frame.endswith("0/3 [00:00<?, ?line/s, openai: in_progress]") for frame in running)
    assert not any("reported until" in frame for frame in frames)  # OpenAI counts lines while a batch runs
    assert "3/3" in frames[-1] and "openai:" not in frames[-1]


def test_a_batch_in_progress_is_polled_at_the_interval_until_it_ends(server, tmp_path):
    server.script(BatchScript(polls=3))
    sleeps: list[float] = []
    client = batch_client(server, tmp_path / "c.sqlite", sleeps)
    results = client.complete_many(reqs(2), progress=False)
    assert all(r.ok for r in results)
    assert sleeps == [POLL, POLL, POLL]  # three polls said in_progress, the fourth saw it end
    assert server.batch_polls == 4 + 1  # four polls, and one retrieval to find its files


def test_the_batch_id_is_recorded_before_the_first_poll(server, tmp_path):
    cache = tmp_path / "c.sqlite"
    client = batch_client(server, cache)
    seen: list[list[BatchJob]] = []
    provider = OpenAIBatches(client.sdk_for_batches())
    original = provider.poll

    def poll(batch_id: str):
        seen.append(pending_in(cache))
        return original(batch_id)

    provider.poll = poll  # type: ignore[method-assign]
    requests = reqs(3)
    wanted = {client.cache_key(r): r for r in requests}
    run_batches(client, wanted, progress=False, options=BatchOptions(poll_s=POLL), provider=provider,
                sleep=lambda s: None)
    [job] = seen[0]
    assert (job.batch_id, job.provider, job.model, job.lines, job.status) == ("batch_fake_0", "openai",
                                                                             "gpt-4.1-mini", 3, OPEN)
    assert {line.key for line in BatchJournal(cache).lines_of(job.batch_id)} == set(wanted)
    assert pending_in(cache) == []  # collected: no longer pending


# --------------------------------------------------------------------------- limits and splitting


def test_lines_beyond_a_lowered_line_limit_go_in_several_batches(server, tmp_path):
    client = batch_client(server, tmp_path / "c.sqlite", max_lines=2)
    requests = reqs(5)
    results = client.complete_many(requests, progress=False)
    assert [len(upload) for upload in server.uploads] == [2, 2, 1]
    assert len(server.batch_creates) == 3
    sent = [line["custom_id"] for upload in server.uploads for line in upload]
    assert sent == [client.cache_key(r) for r in requests]  # each line once, in order
    assert [r.text for r in results] == [expected_text(r) for r in requests]


def test_lines_beyond_a_lowered_size_limit_go_in_several_batches(server, tmp_path):
    from model_clients.batch.provider import BatchLine

    probe = batch_client(server, tmp_path / "c.sqlite")
    requests = reqs(4)
    one_line = OpenAIBatches(probe.sdk_for_batches()).line_bytes(
        BatchLine(probe.cache_key(requests[0]), probe.request_body(requests[0])))
    client = batch_client(server, tmp_path / "c.sqlite", max_bytes=2 * one_line + 10)  # two lines fit, not three
    client.complete_many(requests, progress=False)
    assert [len(upload) for upload in server.uploads] == [2, 2]

    # A line larger than a whole batch may be is a failure on its question, never submitted.
    huge = reqs(1, prefix="x" * (3 * one_line))[0]
    [result] = client.complete_many([huge], progress=False)
    assert "over the" in result.error and len(server.batch_creates) == 2


# --------------------------------------------------------------------------- failures and expiry


def test_an_expired_batch_resubmits_its_unfinished_lines_once_then_records_errors(server, tmp_path):
    server.script(BatchScript(end="expired", finish=2), BatchScript(end="expired", finish=1))
    client = batch_client(server, tmp_path / "c.sqlite")
    requests = reqs(5)
    keys = [client.cache_key(r) for r in requests]
    results = client.complete_many(requests, progress=False)

    assert len(server.batch_creates) == 2  # the first batch, and one retry; never a third
    assert [line["custom_id"] for line in server.uploads[1]] == keys[2:]  # only the unfinished lines
    assert [r.ok for r in results] == [True, True, True, False, False]
    assert [r.text for r in results[:3]] == [expected_text(r) for r in requests[:3]]
    for failed in results[3:]:
        assert "batch_fake_1" in failed.error and "batch_expired" in failed.error and "gpt-4.1-mini" in failed.error
    assert set(kv_rows(tmp_path / "c.sqlite")) == set(keys[:3])  # failures are never cached
    counters = client.counters
    assert (counters.completed, counters.batch_completed, counters.failures) == (3, 3, 2)
    assert [row[4:] for row in journal_rows(tmp_path / "c.sqlite")] == [(0, "done", "expired"), (1, "done", "expired")]


def test_line_failures_a_bad_request_is_final_a_server_error_is_retried_once(server, tmp_path):
    def fail(body):
        text = last_user_content(body)
        return (400, "bad request") if text == "q1" else (500, "overloaded") if text == "q3" else None

    server.script(BatchScript(fail=fail))  # the retry batch (unscripted) answers everything
    client = batch_client(server, tmp_path / "c.sqlite")
    requests = reqs(4)
    results = client.complete_many(requests, progress=False)
    assert [[last_user_content(line["body"]) for line in upload] for upload in server.uploads] == [
        ["q0", "q1", "q2", "q3"], ["q3"]]
    assert [r.ok for r in results] == [True, False, True, True]
    assert "HTTP 400" in results[1].error and "bad request" in results[1].error
    assert results[3].text == expected_text(requests[3])


def test_a_batch_refused_as_a_whole_fails_its_lines_with_its_reason_and_is_not_resubmitted(server, tmp_path):
    server.script(BatchScript(end="failed"))
    client = batch_client(server, tmp_path / "c.sqlite")
    results = client.complete_many(reqs(3), progress=False)
    assert len(server.batch_creates) == 1
    assert all(not r.ok and "failed as a whole (invalid_request: scripted refusal)" in r.error for r in results)
    assert client.counters.failures == 3 and len(KVStore(tmp_path / "c.sqlite")) == 0


# --------------------------------------------------------------------------- resume


KILLED_STAGE = """
import sys
from pathlib import Path
from tests.llm_client_support import reqs
from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient, LLMConfig

config = LLMConfig(model="gpt-4.1-mini", base_url=sys.argv[1], api_key_env=None, batch=True, batch_poll_s=0.02,
                   timeout_s=5.0, max_retries=0)
LLMClient(config, KVStore(Path(sys.argv[2]))).complete_many(reqs(4), progress=False)
print("finished")
"""


def test_a_run_killed_while_polling_resumes_its_batch_without_submitting_again(server, tmp_path):
    cache = tmp_path / "c.sqlite"
    server.script(BatchScript(polls=None))  # in progress until released
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    stage = subprocess.Popen([sys.executable, "-c", KILLED_STAGE, server.base_url, str(cache)], cwd=REPO_ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while server.batch_polls < 2 and stage.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # submitted, recorded, and polled at least twice
        assert server.batch_polls >= 2, stage.stderr.read().decode() if stage.poll() is not None else "no poll seen"
    finally:
        stage.kill()
        stage.wait()
    assert stage.returncode != 0 and len(server.batch_creates) == 1
    [job] = pending_in(cache)
    assert (job.batch_id, job.lines) == ("batch_fake_0", 4)
    assert len(KVStore(cache)) == 0  # nothing collected yet

    server.release()
    client = make_client(server, cache, batch=True, batch_poll_s=POLL, sleep=lambda s: None)
    requests = reqs(4)
    results = client.complete_many(requests, progress=False)
    assert len(server.batch_creates) == 1 and len(server.uploads) == 1  # no second POST /v1/batches
    assert server.request_count == 0  # and no live call
    assert [r.text for r in results] == [expected_text(r) for r in requests]
    assert set(kv_rows(cache)) == {client.cache_key(r) for r in requests}
    assert pending_in(cache) == [] and client.counters.batch_completed == 4


def test_an_open_batch_whose_keys_are_all_cached_is_marked_done_without_a_poll(server, tmp_path):
    cache = tmp_path / "c.sqlite"
    requests = reqs(2)
    make_client(server, cache).complete_many(requests, progress=False)  # live: every key cached
    client = batch_client(server, cache)
    keys = [client.cache_key(r) for r in requests]
    journal = BatchJournal(cache)
    journal.record(BatchJob("batch_gone", "openai", client.config.endpoint, "gpt-4.1-mini", 2, 0, "2026-01-01 00:00:00",
                            OPEN), [JournalLine(key, "tmpl-v1", 0) for key in keys])
    client.complete_many(reqs(1, prefix="other"), progress=False)  # a stage that submits something else
    assert server.batch_polls == 2  # the new batch's poll and collect only: batch_gone was never asked for
    assert pending_in(cache) == []
    assert ("batch_gone", "openai", "gpt-4.1-mini", 2, 0, "done", "every key cached") in journal_rows(cache)


def test_a_batch_that_cannot_be_polled_ends_in_one_error_that_keeps_the_journal(server, tmp_path):
    cache = tmp_path / "c.sqlite"
    client = batch_client(server, cache)
    journal = BatchJournal(cache)
    request = reqs(1)[0]
    journal.record(BatchJob("batch_unknown", "openai", client.config.endpoint, "gpt-4.1-mini", 1, 0,
                            "2026-01-01 00:00:00", OPEN), [JournalLine(client.cache_key(request), "tmpl-v1", 0)])
    with pytest.raises(BatchError, match=r"polling batch batch_unknown failed.*re-run to resume"):
        client.complete_many([request], progress=False)
    assert [job.batch_id for job in pending_in(cache)] == ["batch_unknown"]


# --------------------------------------------------------------------------- choosing the provider


def test_auto_picks_anthropic_for_its_host_and_openai_elsewhere():
    def config(base_url: str, api: str = "auto") -> LLMConfig:
        return LLMConfig(model="m", base_url=base_url, api_key_env=None, batch=True, batch_api=api)

    assert provider_name(config("https://api.anthropic.com/v1/")) == "anthropic"
    assert provider_name(config("https://api.openai.com/v1")) == "openai"
    assert provider_name(config("http://127.0.0.1:9/v1", "anthropic")) == "anthropic"
    assert provider_name(config("https://api.anthropic.com/v1/", "openai")) == "openai"


# --------------------------------------------------------------------------- the switch and batch=status


def test_a_roles_own_batch_wins_over_the_top_level_one():
    both = RunConfig.from_dict(compose_config(["answerer=gpt-4.1-mini", "batch=true", "batch_poll_s=5"]))
    assert (both.answerer.batch, both.judge.batch, both.answerer.batch_poll_s) == (True, True, 5.0)
    judge_live = RunConfig.from_dict(compose_config(["answerer=gpt-4.1-mini", "batch=true", "judge.batch=false"]))
    assert (judge_live.answerer.batch, judge_live.judge.batch) == (True, False)
    answer_only = RunConfig.from_dict(compose_config(["answerer=gpt-4.1-mini", "answerer.batch=true"]))
    assert (answer_only.answerer.batch, answer_only.judge.batch) == (True, False)
    assert RunConfig.from_dict(compose_config(["answerer=smollm2-local", "batch=true"])).answerer.batch is False
    with pytest.raises(ConfigError, match=r"answerer.batch=true.*local server"):
        RunConfig.from_dict(compose_config(["answerer=smollm2-local", "answerer.batch=true"]))


def test_write_time_batch_is_noted_and_the_write_time_client_stays_live():
    from harness.plan import write_time_note
    from harness.systems.registry import write_time_endpoint

    config = RunConfig.from_dict(compose_config(["system=mempp_consolidated", "batch=true"]))
    assert config.write_time_batch is True
    assert write_time_endpoint(config.system).batch is False
    note = write_time_note(config.system.name, config.write_time_batch)
    assert note is not None and "mempp_consolidated" in note and "live" in note and len(note) <= 120
    own = RunConfig.from_dict(compose_config(["system=mem0", "system.llm.batch=true"]))
    assert own.write_time_batch is True and own.batch is False
    assert RunConfig.from_dict(compose_config(["system=mempp", "batch=true"])).write_time_batch is False


def test_batch_status_lists_a_pending_batch_in_120_characters(tmp_path, capsys):
    cache_dir = tmp_path / "cache"
    journal = BatchJournal(cache_dir / "llm.sqlite")
    journal.record(BatchJob("batch_6798c0ffee0123456789abcdef012345", "openai", "https://api.openai.com/v1",
                            "gpt-4.1-mini", 12_345, 0, "2026-12-01 20:00:00", OPEN), [])
    journal.record(BatchJob("batch_collected", "openai", "https://api.openai.com/v1", "gpt-4o-mini", 3, 0,
                            "2026-12-01 19:00:00", "done"), [])
    code = execute(compose_config(["batch=status", f"store.cache_dir={cache_dir}"]))
    out = capsys.readouterr().out
    assert code == 0
    assert all(len(line) <= 120 for line in out.splitlines())
    row = next(line for line in out.splitlines() if line.startswith("batch_6798"))
    assert row.split() == ["batch_6798c0ffee0123456789abcdef012345", "openai", "gpt-4.1-mini", "12,345", "2026-12-01",
                           "20:00:00", "pending"]
    assert "batch_collected" not in out
    for heading in ("batch id", "provider", "model", "lines", "submitted", "status"):
        assert heading in out
    assert status_report(tmp_path / "nothing.sqlite").startswith("no pending batch")
    assert not (tmp_path / "nothing.sqlite").exists()  # read only: no file made


# --------------------------------------------------------------------------- a whole answered and judged run


from tests.batch_support import JUDGE_RUNS, QUESTIONS, fresh_cache, retrieved  # noqa: E402,F401 - retrieved is a fixture


def judged_run(server: FakeBatchServer, cache_dir: Path, results: Path, *extra: str):
    from harness.runner import run

    overrides = ["progress=false", "system=bm25", f"dataset.limit={QUESTIONS}", f"store.cache_dir={cache_dir}",
                 f"store.results_dir={results}", "answerer=openai_compatible", "answerer.model=fake-answerer",
                 f"answerer.base_url={server.base_url}", "answerer.max_retries=0", "judge.model=fake-judge",
                 f"judge.base_url={server.base_url}", "judge.api_key_env=null", "judge.max_retries=0",
                 f"judge.runs={JUDGE_RUNS}", f"batch_poll_s={POLL}", *extra]
    return run(RunConfig.from_dict(compose_config(overrides)))


def test_a_batched_answered_and_judged_run_equals_the_live_run(retrieved, tmp_path):
    from tests.test_qa_stage import fixture_reply

    with FakeBatchServer(answer_fn=fixture_reply) as server:
        live = judged_run(server, fresh_cache(retrieved, tmp_path / "live"), tmp_path / "runs")
        assert server.request_count == QUESTIONS * (1 + JUDGE_RUNS) and not server.batch_creates
        live_calls = server.request_count

        cache_dir = fresh_cache(retrieved, tmp_path / "batched")
        batched = judged_run(server, cache_dir, tmp_path / "runs", "batch=true")
        assert server.request_count == live_calls  # not one live chat call
        assert len(server.batch_creates) == 2  # the answers, then the grades
        assert [len(upload) for upload in server.uploads] == [QUESTIONS, QUESTIONS * JUDGE_RUNS]
        assert {line["body"]["model"] for line in server.uploads[0]} == {"fake-answerer"}
        assert {line["body"]["model"] for line in server.uploads[1]} == {"fake-judge"}
        assert sorted(line["body"]["seed"] for line in server.uploads[1]) == sorted(list(range(JUDGE_RUNS)) * QUESTIONS)
        # The lines carry exactly the bodies the live run sent.
        assert sorted(json.dumps(line["body"], sort_keys=True) for upload in server.uploads for line in upload) == sorted(
            json.dumps(request.body, sort_keys=True) for request in server.requests)

        assert batched.records == live.records
        assert batched.summary.equals(live.summary)
        assert batched.summary.loc["overall", "score"] == 100.0
        assert kv_rows(cache_dir / "llm.sqlite") == kv_rows(tmp_path / "live" / "llm.sqlite")
        assert batched.stats["answer_failures"] == batched.stats["judge_failures"] == 0

        # A later live run and a cache-only replay send nothing, and agree.
        again = judged_run(server, cache_dir, tmp_path / "runs")
        replay = judged_run(server, cache_dir, tmp_path / "runs", "cache_only=true")
        assert server.request_count == live_calls and len(server.batch_creates) == 2
        assert again.summary.equals(live.summary) and replay.summary.equals(live.summary)


def test_batch_is_an_execution_setting_outside_the_run_folder_identity():
    from harness.config import run_identity

    plain = ["answerer=gpt-4.1-mini"]
    batched = [*plain, "batch=true", "batch_poll_s=5", "judge.batch=false"]
    assert run_identity(RunConfig.from_dict(compose_config(batched)).as_dict()) == run_identity(
        RunConfig.from_dict(compose_config(plain)).as_dict())


def test_a_batched_run_matches_its_preset_job_in_the_tables():
    from harness.reports.selection import differences, flatten

    plain = ["answerer=gpt-4.1-mini", "system=mem0"]
    job = flatten(RunConfig.from_dict(compose_config(plain)).as_dict())
    run = flatten(RunConfig.from_dict(compose_config([*plain, "batch=true", "batch_poll_s=5", "judge.batch=false",
                                                      "answerer.batch_api=openai", "system.llm.batch=true"])).as_dict())
    assert run != job
    assert differences(run, job, answers=True) == {}  # live or batch: the same requests, the same row
