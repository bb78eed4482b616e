"""batch=true for Claude: the batch runner on Anthropic's Message Batches, end to end against local fakes.

The Anthropic fake (tests/fake_anthropic_batches.py) and the OpenAI-compatible fake
(tests/fake_openai_server.py) answer with the same function, and both sit at a loopback ``/v1``
path, so a Claude-like answerer (``max_tokens`` set, ``seed`` null) gives the same cache keys whether
it is called live through the compatible endpoint or batched through Message Batches. Checked on
what the fakes received, on the run's records and scores, and on the cache file.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic", reason='the anthropic extra is not installed (pip install -e ".[anthropic]")')

from harness.compose import compose_config
from harness.config import RunConfig
from harness.plan import check_qa_ready
from memory_protocol import ConfigError
from model_clients.batch.anthropic_batches import INSTALL_HINT
from model_clients.batch.journal import pending_in
from model_clients.batch.runner import BatchOptions, refusal, unavailable
from model_clients.chat_types import ChatRequest
from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient, LLMConfig
from tests.fake_anthropic_batches import Expired, FakeAnthropicBatches, default_answer
from tests.fake_openai_server import FakeOpenAIServer, last_user_content
from tests.llm_client_support import REPO_ROOT, reqs

MODEL = "claude-sonnet-4-6"
KEY_ENV = "MEMPP_TEST_ANTHROPIC_KEY"
FAKE_KEY = "sk-ant-test-not-sent-anywhere"
MAX_TOKENS = 64
POLL = 0.001
FIRST_BATCH = "msgbatch_fake0000"


def claude_config(base_url: str, **overrides: Any) -> LLMConfig:
    """A Claude-like answerer (max_tokens set, seed null) batched through Message Batches at ``base_url``."""
    settings: dict[str, Any] = dict(model=MODEL, base_url=base_url, api_key_env=KEY_ENV, seed=None,
                                    max_tokens=MAX_TOKENS, timeout_s=5.0, max_retries=0, batch=True,
                                    batch_api="anthropic", batch_poll_s=POLL)
    settings.update(overrides)
    return LLMConfig(**settings)


def claude_client(fake: FakeAnthropicBatches, cache: Path, **overrides: Any) -> LLMClient:
    return LLMClient(claude_config(fake.base_url, **overrides), KVStore(cache), sleep=lambda seconds: None,
                     batch_options=BatchOptions(poll_s=POLL))


def claude_text(request: ChatRequest) -> str:
    """What the Anthropic fake's default answer gives for ``request`` sent by :func:`claude_client`."""
    return default_answer({"model": MODEL, "messages": list(request.messages), "temperature": 0.0,
                           "max_tokens": MAX_TOKENS})


def kv_rows(path: Path) -> dict[str, bytes]:
    with sqlite3.connect(path) as conn:
        return {key: bytes(value) for key, value in conn.execute("SELECT key, value FROM kv")}


@pytest.fixture(autouse=True)
def anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-sent")


# --------------------------------------------------------------------------- refused before anything is sent


WITHOUT_SDK = "import sys; sys.modules['anthropic'] = None  # as if the extra were not installed\n"

CHECK_WITHOUT_SDK = WITHOUT_SDK + """
from harness.compose import compose_config
from harness.config import RunConfig
from harness.plan import check_qa_ready
from model_clients.batch.runner import unavailable

config = RunConfig.from_dict(compose_config(["answerer=claude-sonnet-4-6", "batch=true"]))
assert config.answerer.batch and config.judge.batch
print(unavailable(config.judge, "judge"))  # gpt-4o-mini goes by OpenAI's Batch API: no extra needed
check_qa_ready(config)
"""

STAGE_WITHOUT_SDK = WITHOUT_SDK + """
from pathlib import Path
from tests.llm_client_support import reqs
from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient, LLMConfig

config = LLMConfig(model="claude-sonnet-4-6", base_url=sys.argv[1], api_key_env=None, seed=None, max_tokens=64,
                   batch=True, batch_api="anthropic", max_retries=0)
LLMClient(config, KVStore(Path(sys.argv[2]))).complete_many(reqs(2), progress=False)
"""


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_without_the_anthropic_sdk_a_claude_batch_run_stops_before_retrieval_naming_the_extra():
    done = run_python(CHECK_WITHOUT_SDK)  # check_qa_ready raises before the model-list check: no server is asked
    assert done.returncode != 0 and done.stdout == "None\n"
    last = done.stderr.strip().splitlines()[-1]
    assert last == ("memory_protocol.ConfigError: answerer: batch=true for 'claude-sonnet-4-6' goes by "
                    "Anthropic's Message Batches, which need the anthropic SDK: pip install -e \".[anthropic]\" "
                    "(or run this role live: answerer.batch=false)")


def test_without_the_anthropic_sdk_the_client_refuses_before_any_request(tmp_path):
    with FakeAnthropicBatches() as fake:
        done = run_python(STAGE_WITHOUT_SDK, fake.base_url, str(tmp_path / "c.sqlite"))
        assert fake.created == []
    assert done.returncode != 0
    assert "BatchError: model: batch=true for 'claude-sonnet-4-6'" in done.stderr and INSTALL_HINT in done.stderr


def test_with_the_sdk_a_claude_answerer_may_be_batched():
    config = RunConfig.from_dict(compose_config(["answerer=claude-sonnet-4-6", "batch=true"]))
    assert unavailable(config.answerer, "answerer") is None


def test_the_locomo_judges_json_mode_on_anthropic_batches_is_refused_in_one_line_before_retrieval():
    # mem0's LoCoMo judge asks response_format json_object (judges/graders/locomo.py, MEM0_JUDGE_PARAMS).
    config = RunConfig.from_dict(compose_config(["dataset=locomo", "answerer=gpt-4.1-mini", "judge.batch=true",
                                                 "judge.batch_api=anthropic"]))
    with pytest.raises(ConfigError) as raised:
        check_qa_ready(config)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("judge: batch=true for 'gpt-4o-mini' goes by Anthropic's Message Batches, which refuse")
    assert "json_object" in message and message.endswith("run this role live: judge.batch=false")
    # The same judge live, or batched on OpenAI's Batch API (which takes JSON mode), passes this check.
    for extra in (["judge.batch=false"], ["judge.batch_api=openai"]):
        fine = RunConfig.from_dict(compose_config(["dataset=locomo", "answerer=gpt-4.1-mini", "judge.batch=true",
                                                   "judge.batch_api=anthropic", *extra, "estimate=true"]))
        assert check_qa_ready(fine) is not None


def test_refusal_judges_a_roles_request_shape_only_for_anthropic():
    claude = LLMConfig(model=MODEL, base_url="https://api.anthropic.com/v1/", seed=None)
    no_tokens = refusal(claude, "judge", None, {})
    assert no_tokens is not None and "max_tokens is None, but Anthropic requires it" in no_tokens
    assert refusal(claude, "answerer", 1024, {}) is None
    assert refusal(claude, "answerer", 1024, {"response_format": {"type": "text"}}) is None
    json_mode = {"response_format": {"type": "json_object"}}
    assert refusal(claude, "judge", 512, json_mode) is not None
    openai_side = LLMConfig(model="gpt-4o-mini", batch_api="auto")  # OpenAI's Batch API takes JSON mode and no cap
    assert refusal(openai_side, "judge", None, json_mode) is None


def test_a_json_mode_request_in_a_claude_batch_fails_before_anything_is_sent(tmp_path):
    request = ChatRequest([{"role": "user", "content": "grade"}], extra={"response_format": {"type": "json_object"}})
    with FakeAnthropicBatches() as fake:
        with pytest.raises(ConfigError, match=r"json_object.*without batch=true"):
            claude_client(fake, tmp_path / "c.sqlite").complete_many([request], progress=False)
        assert fake.created == []
    assert pending_in(tmp_path / "c.sqlite") == []


# --------------------------------------------------------------------------- an answered and judged run


from tests.batch_support import JUDGE_RUNS, QUESTIONS, fresh_cache, retrieved  # noqa: E402,F401 - retrieved is a fixture


def claude_run(answer_url: str, judge_url: str, cache_dir: Path, results: Path, *extra: str):
    """A run whose answerer is the Claude config (max_tokens from the dataset, seed null) at
    ``answer_url`` and whose judge is a fake OpenAI-compatible model at ``judge_url``, live."""
    from harness.runner import run

    overrides = ["progress=false", "system=bm25", f"dataset.limit={QUESTIONS}", f"store.cache_dir={cache_dir}",
                 f"store.results_dir={results}", "answerer=claude-sonnet-4-6", f"answerer.base_url={answer_url}",
                 "answerer.max_retries=0", "judge.model=fake-judge", f"judge.base_url={judge_url}",
                 "judge.api_key_env=null", "judge.max_retries=0", f"judge.runs={JUDGE_RUNS}",
                 f"batch_poll_s={POLL}", *extra]
    return run(RunConfig.from_dict(compose_config(overrides)))


def test_a_claude_answerer_batched_on_message_batches_equals_the_live_run(retrieved, tmp_path):
    from tests.test_qa_stage import fixture_reply

    with FakeOpenAIServer(answer_fn=fixture_reply) as live_server, \
            FakeAnthropicBatches(answer_fn=fixture_reply) as fake:
        live = claude_run(live_server.base_url, live_server.base_url, fresh_cache(retrieved, tmp_path / "live"),
                          tmp_path / "runs")
        live_calls = live_server.request_count
        assert live_calls == QUESTIONS * (1 + JUDGE_RUNS)
        live_answers = [r.body for r in live_server.requests if r.body["model"] == MODEL]
        assert len(live_answers) == QUESTIONS
        assert {(b["max_tokens"], b["temperature"], "seed" in b) for b in live_answers} == {(1024, 0.0, False)}

        cache_dir = fresh_cache(retrieved, tmp_path / "batched")
        batched = claude_run(fake.base_url, live_server.base_url, cache_dir, tmp_path / "runs",
                             "answerer.batch=true", "answerer.batch_api=anthropic")
        # The answers went as one Message Batch; only the judge's calls went live.
        assert live_server.request_count == live_calls + QUESTIONS * JUDGE_RUNS
        [created] = fake.created
        assert FAKE_KEY in created.headers.get("x-api-key", "") + created.headers.get("authorization", "")
        sent = {request["params"]["messages"][-1]["content"]: request["params"] for request in created.requests}
        for body in live_answers:  # each line is the live call in Messages form: same words, settings, no seed
            params = sent[last_user_content(body)]
            assert params == {"model": MODEL, "max_tokens": 1024, "temperature": 0.0, "messages": body["messages"]}

        assert batched.records == live.records
        assert batched.summary.equals(live.summary)
        assert batched.summary.loc["overall", "score"] == 100.0
        assert kv_rows(cache_dir / "llm.sqlite") == kv_rows(tmp_path / "live" / "llm.sqlite")
        assert {r.get("custom_id") for r in created.requests} <= set(kv_rows(cache_dir / "llm.sqlite"))
        assert batched.stats["answer_failures"] == batched.stats["judge_failures"] == 0
        assert pending_in(cache_dir / "llm.sqlite") == []

        # A later live run on the batch-filled cache sends nothing more.
        again = claude_run(live_server.base_url, live_server.base_url, cache_dir, tmp_path / "runs")
        assert live_server.request_count == live_calls + QUESTIONS * JUDGE_RUNS and len(fake.created) == 1
        assert again.summary.equals(live.summary)


# --------------------------------------------------------------------------- resume and retry


KILLED_STAGE = """
import sys
from pathlib import Path
from tests.llm_client_support import reqs
from tests.test_batch_claude import claude_config
from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient

LLMClient(claude_config(sys.argv[1]), KVStore(Path(sys.argv[2]))).complete_many(reqs(4), progress=False)
print("finished")
"""


def test_a_claude_stage_killed_while_polling_resumes_its_batch_without_creating_another(tmp_path):
    cache = tmp_path / "c.sqlite"
    with FakeAnthropicBatches(polls_in_progress=10**9) as fake:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        stage = subprocess.Popen([sys.executable, "-c", KILLED_STAGE, fake.base_url, str(cache)], cwd=REPO_ROOT,
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while stage.poll() is None and time.monotonic() < deadline:
                if fake.created and fake.retrievals(FIRST_BATCH) >= 2:
                    break  # created, recorded, and polled twice
                time.sleep(0.02)
            assert fake.created and fake.retrievals(FIRST_BATCH) >= 2, (
                stage.stderr.read().decode() if stage.poll() is not None else "no poll seen")
        finally:
            stage.kill()  # SIGKILL: no cleanup runs in the stage
            stage.wait()
        assert stage.returncode == -9 and len(fake.created) == 1
        [job] = pending_in(cache)
        assert (job.batch_id, job.provider, job.lines) == (FIRST_BATCH, "anthropic", 4)
        assert fake.result_downloads(FIRST_BATCH) == 0

        fake.polls_in_progress = 0  # the batch has ended by the time the run is restarted
        requests = reqs(4)
        client = claude_client(fake, cache)
        results = client.complete_many(requests, progress=False)
        assert len(fake.created) == 1  # no second POST /v1/messages/batches
        assert fake.result_downloads(FIRST_BATCH) == 1
        assert [r.text for r in results] == [claude_text(r) for r in requests]
        assert set(kv_rows(cache)) == {client.cache_key(r) for r in requests}
        assert pending_in(cache) == [] and client.counters.batch_completed == 4


def test_an_expired_claude_batch_sends_its_unfinished_lines_in_one_new_batch(tmp_path, capsys):
    fake: FakeAnthropicBatches

    def fate(custom_id: str, params: dict) -> Expired | None:  # the first batch's 24 hours end before q1, q3
        first = len(fake.created) == 1
        return Expired() if first and params["messages"][-1]["content"] in ("q1", "q3") else None

    with FakeAnthropicBatches(fate=fate) as fake:
        requests = reqs(4)
        client = claude_client(fake, tmp_path / "c.sqlite")
        results = client.complete_many(requests, progress=False)
        assert [[r["params"]["messages"][-1]["content"] for r in batch.requests] for batch in fake.created] == [
            ["q0", "q1", "q2", "q3"], ["q1", "q3"]]
        assert [r["custom_id"] for r in fake.created[1].requests] == [client.cache_key(requests[i]) for i in (1, 3)]
    assert [r.text for r in results] == [claude_text(r) for r in requests]
    assert client.counters.batch_completed == 4 and client.counters.failures == 0
    err = capsys.readouterr().err
    assert "2 line(s) failed or were left unfinished in their batch; submitting them once more" in err


def test_lines_that_expire_twice_are_recorded_as_failures_after_exactly_one_new_batch(tmp_path):
    with FakeAnthropicBatches(expire_all=True) as fake:
        client = claude_client(fake, tmp_path / "c.sqlite")
        results = client.complete_many(reqs(3), progress=False)
        assert [len(batch.requests) for batch in fake.created] == [3, 3]
    assert all(not r.ok and r.error.endswith(": batch msgbatch_fake0001: expired: the batch's 24 hours ended before "
                                             "this request ran") for r in results)
    assert client.counters.failures == 3 and kv_rows(tmp_path / "c.sqlite") == {}
    assert pending_in(tmp_path / "c.sqlite") == []


# --------------------------------------------------------------------------- the progress bar


def bar_frames(stderr: str) -> list[str]:
    return [frame for frame in re.split(r"[\r\n]", stderr) if "(batch)" in frame]


def test_while_a_claude_batch_runs_the_bar_says_no_line_is_reported_before_it_ends(tmp_path, capsys):
    with FakeAnthropicBatches(polls_in_progress=2) as fake:
        results = claude_client(fake, tmp_path / "c.sqlite").complete_many(reqs(3), desc="answers", progress=True)
    assert all(r.ok for r in results)
    frames = bar_frames(capsys.readouterr().err)
    running = [frame for frame in frames if "0/3" in frame and "anthropic: in_progress" in frame]
    assert running and all(frame.endswith("anthropic: in_progress, 0 of 3 reported until it ends]")
                           for frame in running)
    assert frames[-1].startswith("answers (batch): 100%") and "3/3" in frames[-1]
    assert "reported until" not in frames[-1]
    assert all(len(frame) <= 120 for frame in frames)
