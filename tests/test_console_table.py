"""The console prints the headline metrics in at most 120 characters a line; print=full and the
run folder's summary.md / summary.csv keep every column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.cli import execute
from harness.compose import compose_config
from judges.aggregate import CONSOLE_WIDTH, console_table
from harness.config import RunConfig
from memory_protocol import ConfigError
from tests.test_longmemeval_run import entry, lme_data_dir


@pytest.fixture(scope="module")
def lme_dir(tmp_path_factory) -> Path:
    return lme_data_dir(tmp_path_factory.mktemp("lme_console"), entry("q1", "single-session-user"),
                        entry("q2", "single-session-preference"),
                        entry("q3", "single-session-assistant", gold_role="assistant"))


def _run(capsys, tmp: Path, *overrides: str) -> tuple[str, Path]:
    raw = compose_config(["system=bm25", "progress=false", f"store.cache_dir={tmp / 'cache'}",
                          "store.results_dir=runs", *overrides])  # relative: the printed path is short
    assert execute(raw) == 0
    out = capsys.readouterr().out
    folder = Path(next(line for line in out.splitlines() if line.startswith("results: ")).split(": ", 1)[1])
    return out, folder


def _header(out: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.startswith("| category"))
    return [cell.strip() for cell in line.strip("|").split("|")]


@pytest.mark.parametrize("dataset", ["longmemeval_s", "orgmem"])
def test_a_run_prints_at_most_120_characters_a_line_and_the_files_keep_every_column(
        dataset, lme_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    where = [f"dataset.data_dir={lme_dir}", "system.k=5"] if dataset == "longmemeval_s" else ["dataset.limit=2"]
    out, folder = _run(capsys, tmp_path, f"dataset={dataset}", *where)
    assert max(len(line) for line in out.splitlines()) <= CONSOLE_WIDTH, out
    summary = pd.read_csv(folder / "summary.csv", index_col="category")
    header = _header(out)
    # the headline retrieval columns, in the summary's order (recall_any@10 first, as before)
    assert header == ["category", "n", "n_scored", "recall_any@10", "ndcg@10", "recall_any@50", "in_budget_recall"]
    assert len(summary.columns) > len(header) - 1  # the file keeps what the console leaves out
    stored = _header((folder / "summary.md").read_text())
    assert stored == ["category", *summary.columns]
    if dataset == "longmemeval_s":
        # n, n_scored and LongMemEval_S's 40 retrieval columns (an answerer adds the judge's 4)
        assert len(summary.columns) == 2 + 40
        assert "(4 of 40 metric columns" in out and "print=full" in out

    full, _ = _run(capsys, tmp_path, f"dataset={dataset}", *where, "print=full")
    assert _header(full) == stored  # print=full prints every column
    assert max(len(line) for line in full.splitlines()) > CONSOLE_WIDTH


def test_with_an_answerer_the_judge_metric_comes_first_and_retrieval_fills_the_rest():
    columns = ["n", "n_scored", "accuracy", "accuracy_std", "accuracy_paper",
               *[f"{m}@{k}" for k in (1, 3, 5, 10, 30, 50) for m in ("recall_any", "recall_all", "ndcg")],
               "in_budget_recall"]
    index = ["single-session-preference", "single-session-assistant", "task_averaged", "overall"]
    summary = pd.DataFrame(np.full((len(index), len(columns)), 0.5), index=index, columns=columns)
    summary.index.name = "category"
    table = console_table(summary, "bm25__gpt-4o-mini on longmemeval_s: answers by gpt-4o-mini, judged 3x by "
                          "gpt-4o-mini (k=50, budget=None) [own wording: not comparable with published scores]",
                          judge_metric="accuracy")
    assert max(len(line) for line in table.text.splitlines()) <= CONSOLE_WIDTH
    assert table.shown[:3] == ("accuracy", "accuracy_std", "accuracy_paper")
    # then what still fits, by priority (recall_any@50 is too wide here, the narrower ndcg@10 is not)
    assert table.shown[3:] == ("recall_any@10", "ndcg@10")
    assert "[own wording: not comparable with published scores]" in " ".join(table.text.split())  # wrapped, not cut


def test_print_takes_headline_or_full_only():
    assert RunConfig.from_dict(compose_config([])).print_mode == "headline"
    assert RunConfig.from_dict(compose_config(["print=full"])).print_mode == "full"
    with pytest.raises(ConfigError, match="print='wide': expected one of headline, full"):
        RunConfig.from_dict(compose_config(["print=wide"]))


def test_a_run_retrieving_k_rows_shows_no_cut_off_past_the_first_at_or_above_k(tmp_path, capsys, monkeypatch):
    """A k=5 LoCoMo run retrieves 5 rows: recall_any@10 already counts all of them, so recall_any@50
    (the same value) is not printed; the summary files keep it."""
    monkeypatch.chdir(tmp_path)
    out, folder = _run(capsys, tmp_path, "dataset=orgmem", "dataset.limit=2", "system.k=5")
    header = _header(out)
    assert header == ["category", "n", "n_scored", "recall_any@10", "ndcg@10", "in_budget_recall"]
    summary = pd.read_csv(folder / "summary.csv", index_col="category")
    assert (summary["recall_any@50"] == summary["recall_any@10"]).all()  # what it would have repeated
    # at k=30 the first cut-off at or above k is 50: both are shown
    out, _ = _run(capsys, tmp_path, "dataset=orgmem", "dataset.limit=2", "system.k=30")
    assert "recall_any@50" in _header(out)
