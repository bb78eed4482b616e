"""End of a -m sweep: one table over the jobs, a dry run's grand total, silent legs (issue 13, items 5-6)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from harness.cli import enabled_legs, silent_legs, silent_legs_note
from harness.sweep_summary import SUMMARY_NAME, JobPointer, grand_total, read_pointers, sweep_table, write_pointer

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD_S = 1800  # a hang guard only: a warm run takes seconds


def _run_py(args: list[str], tmp: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMPP_RESULTS_DIR": str(tmp / "runs")}
    return subprocess.run(
        [sys.executable, "run.py", *args, f"hydra.sweep.dir={tmp / 'sweep'}", "progress=false"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S,
    )


@pytest.fixture(scope="module")
def k_sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("k_sweep")
    proc = _run_py(["-m", "system.k=5,10", "dataset.limit=3"], tmp)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return tmp, proc.stdout


def _table_rows(text: str) -> list[list[str]]:
    """The body rows of the last markdown table in ``text``."""
    block = text.rsplit("Sweep of", 1)[1]
    lines = [line for line in block.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def _overall(folder: str | Path) -> dict:
    return json.loads((Path(folder) / "metrics.json").read_text())["summary"]["overall"]


def _summary_rows(tmp: Path) -> list[list[str]]:
    """The body rows of the full table the sweep wrote to its folder's summary.md."""
    text = (tmp / "sweep" / SUMMARY_NAME).read_text()
    lines = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def test_a_sweep_ends_with_one_row_per_job_holding_each_runs_overall_metrics(k_sweep):
    tmp, stdout = k_sweep
    pointers = read_pointers(tmp / "sweep")
    assert [p.overrides[0] for p in pointers] == ["system.k=5", "system.k=10"]
    assert "Sweep of 2 job(s)" in stdout
    assert "every job: dataset.limit=3 progress=False" in stdout.splitlines()  # the overrides the jobs share
    rows = _table_rows(stdout)
    assert len(rows) == 2
    for row, full_row, pointer in zip(rows, _summary_rows(tmp), pointers):
        job, n, r10, r50, budget = row  # the console names a job by what sets it apart, without its folder
        assert job == pointer.overrides[0]
        assert full_row[0] == " ".join(pointer.overrides) and full_row[1:5] == row[1:]
        folder = full_row[5]
        assert folder == pointer.run_folder and Path(folder).is_relative_to(tmp / "runs")
        overall = _overall(folder)
        assert int(n) == overall["n"] == 3
        assert float(r10) == pytest.approx(overall["recall_any@10"], abs=5e-4)
        assert float(r50) == pytest.approx(overall["recall_any@50"], abs=5e-4)
        assert float(budget) == pytest.approx(overall["in_budget_recall"], abs=5e-4)
    # k=5 returns at most 5 rows, so nothing of the k=10 run's top 10 beyond rank 5 can count
    assert _overall(pointers[0].run_folder)["recall_any@50"] <= _overall(pointers[1].run_folder)["recall_any@50"]


LONG_NAMES = ("mempp_with_a_run_name_long_enough_to_push_a_sweep_table_past_the_terminal_first",
              "mempp_with_a_run_name_long_enough_to_push_a_sweep_table_past_the_terminal_second")


def test_a_sweep_of_runs_with_long_names_prints_at_most_120_characters_a_line(tmp_path, capsys):
    proc = _run_py(["-m", "system.k=5,10", f"run_name={','.join(LONG_NAMES)}", "dataset.limit=3"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = "Sweep of" + proc.stdout.rsplit("Sweep of", 1)[1]
    assert max(len(line) for line in summary.splitlines()) <= 120, summary
    pointers = read_pointers(tmp_path / "sweep")
    assert len(pointers) == 4
    # too long for the table: the rows are numbered and the numbers named under it, each by what sets it apart
    rows = _table_rows(proc.stdout)
    assert [row[0] for row in rows] == ["1", "2", "3", "4"]
    for number, (row, pointer) in enumerate(zip(rows, pointers), start=1):
        assert f"{number}: {' '.join(o for o in pointer.overrides if o not in ('dataset.limit=3', 'progress=False'))}" in summary
        job, n, r10, r50, budget = row
        overall = _overall(pointer.run_folder)
        assert (int(n), float(r10), float(r50), float(budget)) == pytest.approx(
            (overall["n"], overall["recall_any@10"], overall["recall_any@50"], overall["in_budget_recall"]), abs=5e-4)
    # the full table, every override and run folder, is in the sweep folder and print=full prints it
    full = [row for row in _summary_rows(tmp_path) if row]
    assert [(row[0], row[-1]) for row in full] == [(" ".join(p.overrides), p.run_folder) for p in pointers]
    from run import SweepSummary

    SweepSummary().on_multirun_end(OmegaConf.create({"print": "full", "hydra": {"sweep": {"dir": str(tmp_path / "sweep")}}}))
    printed = capsys.readouterr().out
    assert all(pointer.run_folder in printed for pointer in pointers)
    assert max(len(line) for line in printed.splitlines()) > 120


def test_sweep_table_marks_a_folder_without_metrics_and_shows_a_judge_column(k_sweep, tmp_path):
    tmp, _ = k_sweep
    real = read_pointers(tmp / "sweep")[0].run_folder
    judged = tmp_path / "judged"
    judged.mkdir()
    overall = {**_overall(real), "score": 0.5}
    (judged / "metrics.json").write_text(json.dumps({"summary": {"overall": overall}}))
    text = sweep_table([real, judged, tmp_path / "missing"], ["a", "b", "c"])
    header = [cell.strip() for cell in text.splitlines()[0].strip("|").split("|")]
    assert header == ["job", "n", "recall_any@10", "recall_any@50", "in_budget_recall", "score", "run folder", "note"]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines()[2:]]
    assert rows[0][5] == "" and rows[1][5] == "0.500"
    assert rows[2][0] == "c" and rows[2][-1] == "no metrics.json"


def test_the_console_prints_the_paper_comparable_judge_figure(k_sweep, tmp_path):
    """Issue 32: the sweep console printed the parsed-only ``score`` where the tables print ``score_paper``."""
    from harness.sweep_summary import fitted_sweep_table

    tmp, _ = k_sweep
    real = read_pointers(tmp / "sweep")[0].run_folder
    judged = tmp_path / "judged"
    judged.mkdir()
    overall = {**_overall(real), "score": 62.5, "score_paper": 50.0}
    (judged / "metrics.json").write_text(json.dumps({"summary": {"overall": overall}}))
    console = fitted_sweep_table([judged], ["a"])
    header = [cell.strip() for cell in console.splitlines()[0].strip("|").split("|")]
    assert "score_paper" in header and "score" not in header and "50.000" in console and "62.500" not in console
    full = [cell.strip() for cell in sweep_table([judged], ["a"]).splitlines()[0].strip("|").split("|")]
    assert {"score_paper", "score"} <= set(full)  # the full table keeps both


def test_a_dry_run_sweep_prints_the_sum_of_its_jobs_calls_and_dollars(tmp_path):
    proc = _run_py(["-m", "system.k=5,10", "dataset.limit=3", "answerer=gpt-4o-mini", "estimate=true"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    calls = [int(n) for n in re.findall(r"-> ([\d,]+) calls to send", proc.stdout.replace(",", ""))]
    costs = [float(c) for c in re.findall(r"^  cost \$([\d.]+)", proc.stdout, flags=re.M)]
    assert len(calls) == 4  # answers and judge grades for each of the 2 jobs
    match = re.search(r"sweep total over 2 dry-run job\(s\): ([\d,]+) calls, \$([\d.]+)", proc.stdout)
    assert match, proc.stdout[-1500:]
    assert int(match.group(1).replace(",", "")) == sum(calls)
    assert float(match.group(2)) == pytest.approx(sum(costs), abs=2e-4)  # per-model costs print 4 decimals


def test_grand_total_says_when_a_price_is_unknown(tmp_path):
    pointers = [JobPointer(["a=1"], estimate_usd=0.5, estimate_calls=10),
                JobPointer(["a=2"], estimate_usd=0.25, estimate_calls=5, estimate_priced=False),
                JobPointer(["a=3"], run_folder="x")]  # not a dry run
    assert grand_total(pointers) == "sweep total over 2 dry-run job(s): 15 calls, at least $0.7500 (1 job(s) with an unknown price)"
    assert grand_total(pointers[2:]) is None
    for num, pointer in enumerate(pointers):
        write_pointer(tmp_path / str(num) / "sweep_job.json", pointer)
    assert read_pointers(tmp_path) == pointers


def test_orgmem_runs_say_the_lexical_and_tag_legs_placed_no_row(k_sweep):
    tmp, stdout = k_sweep
    folder = read_pointers(tmp / "sweep")[1].run_folder
    records = [json.loads(line) for line in (Path(folder) / "records.jsonl").read_text().splitlines()]
    params = json.loads((Path(folder) / "config.json").read_text())["system"]["params"]
    assert enabled_legs(params) == ["lexical", "tag", "vector"]
    assert silent_legs(records, enabled_legs(params)) == ["lexical", "tag"]
    assert "note: the lexical leg and the tag leg placed no row among the hits of any of the 3 question(s) (each matched nothing" in stdout


def test_a_leg_with_one_ranked_hit_is_not_silent():
    records = [{"hits": [{"leg_ranks": {"vector": 0}}]}, {"hits": [{"leg_ranks": {"vector": 3, "lexical": 7}}]}]
    params = {"legs": ["lexical", "tag", "vector"], "weights": {"lexical": 1.0, "tag": 0.0, "vector": 4.0}}
    assert enabled_legs(params) == ["lexical", "vector"]  # weight 0: not fused, not reported
    assert silent_legs(records, enabled_legs(params)) == []
    assert silent_legs_note(records, params) is None
    assert silent_legs_note([{"hits": [{"leg_ranks": {"vector": 0}}]}], params).startswith(
        "note: the lexical leg placed no row among the hits of any of the 1 question(s) (it matched")
    assert silent_legs_note([], params) is None  # no questions, nothing to say


def test_grand_total_of_a_batch_sweep_shows_the_live_total_beside():
    pointers = [JobPointer(["a=1"], estimate_usd=0.5, estimate_calls=10, estimate_live_usd=1.0),
                JobPointer(["a=2"], estimate_usd=0.25, estimate_calls=5)]  # a job with no call by batch
    assert grand_total(pointers) == ("sweep total over 2 dry-run job(s): 15 calls, $0.7500 by batch where set "
                                     "(all live: $1.25)")
