"""A run folder is written as one unit, and readers refuse one that mixes two runs (issue 31, item 4).

The hostile test filled the disk while metrics.json was written: records.jsonl and summary.csv held
the new run's 73 questions, metrics.json an older run's 3, and make_tables read the stale file. Here
a real full disk (a tmpfs filled to every possible page count), a fault at each file's write call
and a real SIGKILL at random moments each leave the folder as the previous run or the new one,
byte for byte; make_tables, report and explain refuse a mixed folder in one line with exit code 2.
"""

from __future__ import annotations

import errno
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from harness import safe_write
from harness.question_report import load_record
from harness.results import RunPaths, read_history, write_run
from harness.reports.store import scan_runs
from harness.safe_write import MANIFEST, SEALED, DiskFullError, HalfWrittenRun, check_run_folder
from tests.small_disk import small_disk  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parents[1]
REAL_WRITE = os.write


def summary(n: int) -> pd.DataFrame:
    return pd.DataFrame({"n": [n], "recall_any@10": [round(1 / (n + 1), 4)]}, index=["overall"])


def write(paths: RunPaths, n: int, tag: str) -> None:
    """A run of ``n`` questions; each record is about 1.5 KB, as a retrieval run's are."""
    records = [{"qid": f"q{i}", "tag": tag, "hits": ["d" * 30] * 40} for i in range(n)]
    write_run(paths, {"dataset": {"name": "orgmem", "limit": n}, "system": {"name": "mempp", "k": 10}}, records,
              summary(n), f"table {tag}", {"stats": {"questions": n}, "provenance": {"tag": tag}})


def snapshot(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in (*SEALED, MANIFEST) if (folder / name).exists()}


def leftovers(parent: Path) -> list[str]:
    """Staging folders and temporary files a writer left."""
    return sorted(p.name for p in parent.rglob("*") if p.name.startswith(".") and p.name != ".filler"
                  or p.name.endswith(".tmp"))


def expected_new(tmp_path: Path) -> dict[str, bytes]:
    paths = RunPaths(tmp_path / "expected" / "orgmem" / "mempp-0123456789")
    write(paths, 3, "old")
    write(paths, 73, "new")
    return snapshot(paths.root)


def test_a_full_disk_at_every_page_count_leaves_the_previous_run_or_the_new_one(small_disk, tmp_path):
    new = expected_new(tmp_path)
    paths = RunPaths(small_disk.path / "orgmem" / "mempp-0123456789")
    outcomes = []
    for pages in range(0, 48):
        write(paths, 3, "old")
        old = snapshot(paths.root)
        small_disk.leave(pages)
        try:
            write(paths, 73, "new")
            outcomes.append("new")
        except DiskFullError as exc:
            outcomes.append("full")
            assert "\n" not in str(exc) and str(paths.root) in str(exc) and ".staging" not in str(exc)
        finally:
            small_disk.free()
        assert snapshot(paths.root) == (new if outcomes[-1] == "new" else old), f"{pages} pages free"
        check_run_folder(paths.root)
        assert leftovers(small_disk.path) == []
        history = read_history(paths)
        assert [h["provenance"]["tag"] for h in history] == (["old", "new"] if outcomes[-1] == "new" else ["old"])
        for item in paths.root.parent.iterdir():  # a fresh folder for the next page count
            subprocess.run(["rm", "-rf", str(item)], check=True)
    assert "full" in outcomes and "new" in outcomes, outcomes


@pytest.mark.parametrize("failing", [*SEALED, MANIFEST, "history.jsonl"])
def test_a_full_disk_on_any_file_of_the_run_replaces_nothing(failing, tmp_path, monkeypatch):
    paths = RunPaths(tmp_path / "orgmem" / "mempp-0123456789")
    write(paths, 3, "old")
    old = snapshot(paths.root)

    def full(fd: int, data) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1].startswith(failing):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return REAL_WRITE(fd, data)

    monkeypatch.setattr(safe_write.os, "write", full)
    with pytest.raises(DiskFullError) as caught:
        write(paths, 73, "new")
    monkeypatch.undo()
    assert str(caught.value).startswith(f"no space left on the device writing {paths.root / failing} ")
    assert snapshot(paths.root) == old and [h["provenance"]["tag"] for h in read_history(paths)] == ["old"]
    assert leftovers(tmp_path) == []


WRITER = """
import sys
from pathlib import Path
from harness.results import RunPaths
from tests.test_run_folder import write
paths = RunPaths(Path(sys.argv[1]))
write(paths, 3, "old")
print("ready", flush=True)
while True:
    write(paths, 73, "new")
    write(paths, 3, "old")
"""


def test_a_writer_killed_at_random_moments_leaves_a_whole_run(tmp_path):
    new, old = expected_new(tmp_path), None
    paths = RunPaths(tmp_path / "runs" / "orgmem" / "mempp-0123456789")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    chance = random.Random(31)
    for _ in range(8):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(paths.root)], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        old = old or snapshot(paths.root)
        time.sleep(chance.uniform(0.01, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        assert snapshot(paths.root) in (old, new)
        check_run_folder(paths.root)
        assert all(h["provenance"]["tag"] in ("old", "new") for h in read_history(paths))
    write(paths, 3, "old")  # the next writer clears what killed writers left
    assert [p.name for p in paths.root.parent.iterdir() if p.name.startswith(".")] == []


# ------------------------------------------------------------------------------------------ readers
def mixed_folder(runs: Path) -> Path:
    """The issue's folder: records.jsonl and summary.csv of 73 questions, metrics.json of an older 3."""
    paths = RunPaths(runs / "orgmem" / "mempp-0123456789")
    write(paths, 3, "old")
    stale = paths.metrics.read_bytes()
    write(paths, 73, "new")
    paths.metrics.write_bytes(stale)
    return paths.root


def _one_error_line(capsys) -> str:
    err = [line for line in capsys.readouterr().err.strip().splitlines() if line.strip()]
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("manifest", [True, False], ids=["sealed", "older-harness"])
def test_make_tables_refuses_a_mixed_folder_in_one_line(manifest, tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_tables

    folder = mixed_folder(tmp_path / "runs")
    if not manifest:
        (folder / MANIFEST).unlink()
    assert make_tables.main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "tables"), "--quiet", "--newest"]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"error: {folder} is a half-written run folder (")
    assert ("metrics.json" in line) and line.endswith("re-run its configuration (finished steps are cached) or delete the folder")
    assert not (tmp_path / "tables").exists()


def test_report_and_explain_refuse_it_too(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "scripts"))
    import explain
    import report

    folder = mixed_folder(tmp_path / "runs")
    assert report.main([str(folder), "--out", str(tmp_path / "r.html")]) == 2
    assert "half-written run folder (metrics.json" in _one_error_line(capsys)
    paths = RunPaths(tmp_path / "runs" / "orgmem" / "mempp-9876543210")
    write(paths, 73, "new")
    assert load_record(paths.root, "q1")["tag"] == "new"
    paths.records.write_text("{}\n" * 73)  # the same count of lines, other bytes
    assert explain.main([str(paths.root), "q1"]) == 2
    assert "records.jsonl" in _one_error_line(capsys)


def test_a_whole_folder_is_read_and_a_staging_folder_is_not(tmp_path):
    paths = RunPaths(tmp_path / "orgmem" / "mempp-0123456789")
    write(paths, 3, "old")
    write(paths, 73, "new")
    check_run_folder(paths.root)
    staging = paths.root.with_name(f".{paths.root.name}.999999.abc.staging")
    write(RunPaths(staging), 5, "half")  # what a killed writer leaves beside the folder
    runs = scan_runs(tmp_path)
    assert set(runs["run"]) == {str(paths.root)}
    assert [h["first_run"] for h in read_history(paths)] == [True, True]  # each had its own summary
    write(paths, 73, "new")
    assert [h["first_run"] for h in read_history(paths)] == [True, True, False]  # one line per run
    with pytest.raises(HalfWrittenRun):
        paths.summary_md.write_text("edited")
        check_run_folder(paths.root)
