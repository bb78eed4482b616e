"""Run folders: safe names, unique temporary files, provenance and history (issues 9 and 13)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pandas as pd
import pytest

from harness import safe_write
from harness.provenance import file_hashes, git_state, recording_reads
from harness.results import RunPaths, readable_suffix, run_folder, safe_part, write_run


@pytest.mark.parametrize("label, expected", [
    ("../../x", "x"), ("/abs/path", "abs_path"), ("..", "run"), ("", "run"), ("mempp", "mempp"),
    ("a/../b", "a___b"), ("C:\\evil", "C_evil"),
])
def test_labels_become_safe_path_parts(label, expected):
    assert safe_part(label) == expected


def test_no_setting_places_a_folder_outside_results_dir(tmp_path):
    root = tmp_path / "runs"
    for dataset, label, overrides in [("orgmem", "../../x", None), ("../..", "/etc/y", ["system.name=../../z"]),
                                      ("orgmem", "mempp", ["run_name=/abs", "dataset.limit=3"])]:
        paths = run_folder(root, dataset, label, "0123456789abcdef", overrides)
        resolved = paths.root.resolve()
        assert resolved.parent.parent == root.resolve(), resolved
        assert ".." not in paths.root.relative_to(root).parts


def test_readable_names_from_the_overrides(tmp_path):
    assert readable_suffix(["system.conjunctive=false", "progress=false", "store.results_dir=/x"]) == \
        "system.conjunctive=false"
    assert readable_suffix(["system=bm25", "answerer=gpt-4o-mini", "+experiment=table1"]) == "experiment=table1"
    paths = run_folder(tmp_path, "orgmem", "mempp", "abcdef0123456789", ["dataset.limit=3"])
    assert paths.root.name == "mempp__dataset.limit=3-abcdef0123"
    paths.root.mkdir(parents=True)
    # the same configuration reached with other overrides lands in the same folder
    assert run_folder(tmp_path, "orgmem", "mempp", "abcdef0123456789", ["+experiment=x"]).root == paths.root


def test_two_writers_never_share_a_temporary_file(tmp_path, monkeypatch):
    names = []
    real_replace = safe_write.os.replace

    def spy(src, dst):
        names.append(Path(src).name)
        real_replace(src, dst)

    monkeypatch.setattr(safe_write.os, "replace", spy)
    target = tmp_path / "records.jsonl"
    threads = [threading.Thread(target=safe_write.atomic_write, args=(target, f"{i}\n")) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(names)) == 8 and all(name != "records.jsonl.tmp" for name in names)
    assert target.read_text() in {f"{i}\n" for i in range(8)}
    assert not list(tmp_path.glob("*.tmp"))


def test_a_rerun_keeps_the_first_cost_and_timing_and_appends_history(tmp_path):
    paths = RunPaths(tmp_path / "orgmem" / "mempp-0123456789")
    summary = pd.DataFrame({"n": [3], "score": [50.0]}, index=["overall"])
    first = {"stats": {"seconds_total": 120.0, "answer_spend": "$1.00"}, "provenance": {"date": "d1"}}
    again = {"stats": {"seconds_total": 0.5, "answer_spend": "$0.00"}, "provenance": {"date": "d2"}}
    write_run(paths, {"x": 1}, [], summary, "t", first)
    write_run(paths, {"x": 1}, [], summary, "t", again)
    metrics = json.loads(paths.metrics.read_text())
    assert metrics["stats"]["seconds_total"] == 120.0 and metrics["provenance"]["date"] == "d1"
    history = [json.loads(line) for line in paths.history.read_text().splitlines()]
    assert [h["provenance"]["date"] for h in history] == ["d1", "d2"]
    assert [h["first_run"] for h in history] == [True, False]
    # a different summary (e.g. new code) is a new first run
    write_run(paths, {"x": 1}, [], summary.assign(score=60.0), "t", again)
    assert json.loads(paths.metrics.read_text())["stats"]["seconds_total"] == 0.5


def test_files_read_under_the_data_dir_are_recorded_and_hashed(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.json").write_text("abc")
    (data / "b.json").write_text("unread")
    (tmp_path / "elsewhere.txt").write_text("x")
    with recording_reads(data) as seen:
        (data / "a.json").read_text()
        (tmp_path / "elsewhere.txt").read_text()
    assert seen == {str(data / "a.json")}
    cache = tmp_path / "cache" / "hashes.json"
    hashes = file_hashes(seen, data, cache)
    assert hashes == {"a.json": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}  # sha256("abc")
    assert file_hashes(seen, data, cache) == hashes and cache.is_file()


def test_git_state_names_the_commit():
    state = git_state()
    assert state["commit"] is None or len(state["commit"]) == 40
    assert state["dirty"] in (True, False, None)
