"""Without a terminal a run prints a line per stage and a periodic progress line (issue 30, point 9):
a 27-minute LongMemEval run had printed nothing, its progress bars being off in a log."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from harness.stage_log import StageLog
from tests.data_paths import needs_data

ROOT = Path(__file__).resolve().parents[1]


def test_the_progress_line_says_how_far_and_how_long_is_left():
    out = io.StringIO()
    log = StageLog(enabled=True, every=0.0, out=out)
    assert list(log.each(["a", "b", "c", "d"], "retrieval", "episode", "bar", bar=False)) == ["a", "b", "c", "d"]
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("] retrieval: 4 episodes")
    assert "retrieval: 1/4 episodes (25%), about" in lines[1] and lines[1].endswith("min left")
    assert lines[4].endswith("retrieval: 4/4 episodes (100%)")
    quiet = StageLog(enabled=False, every=0.0, out=io.StringIO())
    assert list(quiet.each(["a", "b"], "retrieval", "episode", "bar", bar=False)) == ["a", "b"]
    assert quiet.out.getvalue() == ""


def test_a_line_at_most_every_so_often():
    out = io.StringIO()
    list(StageLog(enabled=True, every=3600.0, out=out).each(range(50), "retrieval", "episode", "bar", bar=False))
    assert out.getvalue().count("\n") == 1  # the stage's line only: the next is due in an hour


@needs_data("locomo/locomo10.json")
def test_a_run_into_a_pipe_prints_its_stages_and_none_with_progress_false(tmp_path):
    def run(*extra: str) -> str:
        proc = subprocess.run([sys.executable, "run.py", "dataset=locomo", "system=bm25", "dataset.limit=3",
                               f"store.cache_dir={tmp_path / 'cache'}", f"store.results_dir={tmp_path / 'runs'}", *extra],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    out = run()
    assert "] bm25 on locomo: loading the data" in out
    assert "] retrieval: 1 episodes" in out
    assert "\r" not in out  # lines, not bars
    assert "loading the data" not in run("progress=false")
