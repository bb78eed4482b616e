"""A full disk or a kill never leaves a half file, a torn history line or a temporary file (issue 23, items 6-7).

The full disk is simulated by making ``os.write`` to one file write part of its bytes and then fail
with ENOSPC, as a real full file system does; every check reads the files back from disk.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pandas as pd
import pytest

from harness import safe_write
from harness.results import RunPaths, read_history, write_run
from harness.safe_write import DiskFullError, StagedWrites, append_line, atomic_write, read_lines

SUMMARY = pd.DataFrame({"n": [3], "score": [50.0]}, index=["overall"])
REAL_WRITE = os.write


def _path_of(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


@pytest.fixture()
def full_disk(monkeypatch):
    """``full_disk("metrics.json")``: writes to files whose path contains the text fill the disk
    after 7 bytes (the first write lands 7 bytes and returns short, the next raises ENOSPC)."""
    def arm(fragment: str) -> None:
        def write(fd: int, data) -> int:
            if fragment not in _path_of(fd):
                return REAL_WRITE(fd, data)
            if os.fstat(fd).st_size % 4096 == 0 and len(data) > 7:  # room for 7 more bytes, then none
                return REAL_WRITE(fd, bytes(data[:7]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        monkeypatch.setattr(safe_write.os, "write", write)
    return arm


def _tmp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


# ------------------------------------------------------------------------------------ history.jsonl
def test_a_torn_history_line_is_set_aside_and_never_merged_with_the_next_run(tmp_path, capsys):
    paths = RunPaths(tmp_path / "orgmem" / "mempp-0123456789")
    write_run(paths, {"x": 1}, [], SUMMARY, "t", {"provenance": {"date": "d1"}})
    # what the old append left on a full disk: the start of the second run's line, no newline
    with paths.history.open("a", encoding="utf-8") as handle:
        handle.write('{"first_run": false, "provenance": {"da')
    write_run(paths, {"x": 1}, [], SUMMARY, "t", {"provenance": {"date": "d3"}})
    lines = paths.history.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["provenance"]["date"] for line in lines] == ["d1", "d3"]
    assert (paths.root / "history.jsonl.torn").read_text(encoding="utf-8") == '{"first_run": false, "provenance": {"da\n'
    warning = capsys.readouterr().err.strip()
    assert warning.count("\n") == 0 and warning.startswith("warning: ") and "history.jsonl.torn" in warning


def test_reading_history_sets_a_torn_last_line_aside(tmp_path):
    paths = RunPaths(tmp_path / "run")
    write_run(paths, {"x": 1}, [], SUMMARY, "t", {"provenance": {"date": "d1"}})
    with paths.history.open("ab") as handle:
        handle.write(b'{"first_ru')
    assert [h["provenance"]["date"] for h in read_history(paths)] == ["d1"]
    assert paths.history.read_bytes().endswith(b"}\n")
    assert read_lines(tmp_path / "missing.jsonl") == []


def test_a_full_disk_while_appending_leaves_the_history_as_it_was(tmp_path, full_disk):
    paths = RunPaths(tmp_path / "run")
    write_run(paths, {"x": 1}, [], SUMMARY, "t", {"provenance": {"date": "d1"}})
    before = paths.history.read_bytes()
    full_disk("history.jsonl")
    with pytest.raises(DiskFullError) as caught:
        append_line(paths.history, json.dumps({"provenance": {"date": "d2"}}))
    assert paths.history.read_bytes() == before  # the 7 bytes that landed were cut back off
    assert str(paths.history) in str(caught.value) and "\n" not in str(caught.value)


def test_one_line_is_one_write(tmp_path, monkeypatch):
    calls = []

    def spy(fd: int, data) -> int:
        calls.append(bytes(data))
        return REAL_WRITE(fd, data)

    monkeypatch.setattr(safe_write.os, "write", spy)
    append_line(tmp_path / "h.jsonl", '{"a": 1}')
    assert calls == [b'{"a": 1}\n']
    with pytest.raises(ValueError):
        append_line(tmp_path / "h.jsonl", "two\nlines")


# ------------------------------------------------------------------------------- whole files
def test_a_full_disk_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, full_disk):
    target = tmp_path / "metrics.json"
    atomic_write(target, '{"old": true}\n')
    full_disk("metrics.json")
    with pytest.raises(DiskFullError, match=r"no space left on the device writing .*metrics\.json"):
        atomic_write(target, json.dumps({"new": "x" * 100}))
    assert target.read_text() == '{"old": true}\n'
    assert _tmp_files(tmp_path) == []


def test_a_failed_batch_replaces_no_table(tmp_path, full_disk):
    out = tmp_path / "tables"
    with StagedWrites() as staged:
        for name in ("table1.md", "table1.csv", "tables.md"):
            staged.write(out / name, f"old {name}\n")
    full_disk("table1.csv")
    with pytest.raises(DiskFullError):
        with StagedWrites() as staged:
            for name in ("table1.md", "table1.csv", "tables.md"):
                staged.write(out / name, f"new {name}, a longer text\n")
    assert {p.name: p.read_text() for p in out.iterdir()} == {
        "table1.md": "old table1.md\n", "table1.csv": "old table1.csv\n", "tables.md": "old tables.md\n"}


def _make_tables():
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("make_tables", root / "scripts" / "make_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_make_tables_on_a_full_disk_keeps_the_previous_tables_and_exits_2(tmp_path, full_disk, capsys):
    from tests.tables_support import write_run as write_fixture_run

    runs = tmp_path / "runs"
    overall = {"overall": {"n": 73, "recall_any@10": 0.5, "ndcg_any@10": 0.4, "budget_recall": 0.3}}
    write_fixture_run(runs, "orgmem", "mempp-a", system="mempp", k=10, answerer="none", summary=overall)
    module = _make_tables()
    out = tmp_path / "out"
    args = ["--runs", str(runs), "--out", str(out), "--tables", "1,7", "--quiet", "--newest"]
    assert module.main(args) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert all(before.values())  # no empty table
    write_fixture_run(runs, "orgmem", "mempp-b", system="mempp", k=10, answerer="none",
                      summary={"overall": {**overall["overall"], "recall_any@10": 0.9}}, mtime=10)
    capsys.readouterr()
    full_disk("table7.csv")
    assert module.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: no space left") and "table7.csv" in err[0]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no mix of new and old, no temp file


def test_a_full_disk_during_a_run_is_one_line_exit_2_and_no_temporary_file(tmp_path, full_disk, capsys):
    from harness.cli import execute
    from harness.compose import compose_config

    results_dir = tmp_path / "runs"
    config = compose_config(["dataset.limit=3", "progress=false", f"store.results_dir={results_dir}"])
    full_disk("metrics.json")
    assert execute(config) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: no space left on the device writing ") and "metrics.json" in err[0]
    # the run folder is written as one unit: a first run that could not finish leaves no folder at all
    assert list((results_dir / "orgmem").iterdir()) == []
    assert _tmp_files(results_dir) == []
