"""Ctrl-C while answering: the run ends at once, says how many replies are cached, and a re-run asks
only the rest (issue 24, item 11: it took 22 s, one HTTP timeout, because Python joined the thread
pool's requests in flight at exit)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fake_openai_server import FakeOpenAIServer, Hang, JsonDict, default_answer

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = 6
CONCURRENCY = 4
ANSWERED = 2  # the server answers the first two requests, then hangs (longer than the test waits)


class AnswerTwiceThenHang:
    """A rule for the fake server: the first ``ANSWERED`` answer requests get a reply, the rest hang."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answered: list[JsonDict] = []
        self.hang = True

    def __call__(self, body: JsonDict) -> Hang | None:
        with self.lock:
            if len(self.answered) < ANSWERED:
                self.answered.append(body)
                return None
            return Hang(120.0) if self.hang else None


def _command(server: FakeOpenAIServer, tmp_path: Path) -> list[str]:
    return [sys.executable, "run.py", "system=bm25", f"dataset.limit={QUESTIONS}", "progress=false",
            f"store.cache_dir={tmp_path / 'cache'}", f"store.results_dir={tmp_path / 'runs'}",
            "answerer=openai_compatible", "answerer.model=fake-answerer", f"answerer.base_url={server.base_url}",
            f"answerer.concurrency={CONCURRENCY}", "answerer.timeout_s=60", "answerer.max_retries=0",
            "judge=openai_compatible", "judge.model=fake-judge", f"judge.base_url={server.base_url}", "judge.runs=1"]


def _asked(server: FakeOpenAIServer) -> list[str]:
    return [request.body["model"] for request in server.requests]


def _cached_texts(cache: Path) -> list[str]:
    with sqlite3.connect(cache) as conn:
        return sorted(json.loads(value)["text"] for (value,) in conn.execute("SELECT value FROM kv"))


def test_ctrl_c_while_answering_exits_at_once_and_keeps_the_replies_received(tmp_path):
    rule = AnswerTwiceThenHang()
    server = FakeOpenAIServer(rule=rule).start()
    try:
        _interrupt_then_resume(rule, server, tmp_path)
    finally:
        server.stop()


def _ctrl_c_as_in_a_terminal() -> None:
    """In the child, before Python starts: SIGINT at its default, as a terminal gives it. A test
    session started in the background (``cmd &`` in a script, as a CI runner may) inherits SIGINT
    ignored, and Python then never raises KeyboardInterrupt, which is not what a user at a terminal
    sees."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_then_resume(rule: AnswerTwiceThenHang, server: FakeOpenAIServer, tmp_path: Path) -> None:
    proc = subprocess.Popen(_command(server, tmp_path), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=_ctrl_c_as_in_a_terminal)
    try:
        deadline = time.monotonic() + 180
        # two replies received, then every answering thread holds a hanging request, and so does
        # the judge call of each answer received (judging starts as soon as an answer exists)
        while len(_asked(server)) < ANSWERED + CONCURRENCY + ANSWERED and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # nothing more is sent
        assert _asked(server).count("fake-answerer") == ANSWERED + CONCURRENCY
        assert _asked(server).count("fake-judge") == ANSWERED
        assert server.in_flight == CONCURRENCY + ANSWERED
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            pytest.fail("the run was still alive 5 s after Ctrl-C")
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err[-2000:]
    assert took < 5
    assert (f"interrupted (answers): {ANSWERED} of {QUESTIONS} replies are cached; "
            "a re-run resumes and asks only the rest") in err.splitlines(), err[-2000:]
    assert _cached_texts(tmp_path / "cache" / "llm.sqlite") == sorted(default_answer(b) for b in rule.answered)

    # The re-run asks only the four answers not cached, then judges all six.
    rule.hang = False
    seen = server.request_count
    rerun = subprocess.run(_command(server, tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    asked = [request.body["model"] for request in server.requests[seen:]]
    assert asked.count("fake-answerer") == QUESTIONS - ANSWERED
    assert asked.count("fake-judge") == QUESTIONS
