"""scripts/reliability.py keeps what it measured: its own part of RELIABILITY.md only, a failing
stage as one row, the data directory the user named."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():
    """The script's pieces as its modules hold them (scripts/reliability_suite/)."""
    sys.path.insert(0, str(ROOT))
    from types import SimpleNamespace

    from scripts.reliability_suite import common, live
    return SimpleNamespace(BEGIN=common.BEGIN, END=common.END, with_section=common.with_section, stage=common.stage,
                           broken_data=live.broken_data)


def test_write_replaces_only_the_scripts_own_part():
    script = _script()
    document = f"# Reliability\n\nintro\n\n{script.BEGIN}\nold tables\n{script.END}\n\n### Postgres (another script)\n\nrows\n"
    updated = script.with_section(document, "new tables")
    assert "old tables" not in updated and "new tables" in updated
    assert updated.startswith("# Reliability\n\nintro\n") and updated.endswith("### Postgres (another script)\n\nrows\n")
    appended = script.with_section("# Reliability\n\nother\n", "tables")
    assert appended == f"# Reliability\n\nother\n\n{script.BEGIN}\ntables\n{script.END}\n"


def test_a_failing_stage_is_one_row_and_the_others_still_run():
    script = _script()

    def broken():
        raise OSError("disk gone")

    title, header, body = script.stage("Faults", ["fault", "requests sent", "outcome"], broken)
    assert body == [["stage failed: OSError: disk gone", "", ""]]
    assert script.stage("Keys", ["a"], lambda: [["ok"]])[2] == [["ok"]]


def test_broken_data_is_made_from_the_given_data_dir(tmp_path):
    script = _script()
    data = tmp_path / "elsewhere"
    medium = data / "orgmembench" / "datasets" / "helix" / "medium"
    medium.mkdir(parents=True)
    for name in ("benchmark_v0.0.jsonl", "corpus_index.jsonl"):
        (medium / name).write_text("marker\n")
    made = script.broken_data(tmp_path / "scratch", data)
    copied = made["corpus_index.jsonl"] / "orgmembench" / "datasets" / "helix" / "medium"
    assert (copied / "benchmark_v0.0.jsonl").read_text() == "marker\n"  # copied from the named folder
    assert (copied / "corpus_index.jsonl").read_text() == ""  # the one emptied on purpose
