"""Tables 1, 2, 3, 4, 7 and Figure 4 from a hand-written results store with known numbers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from harness.reports import tables as T

from tests.tables_support import PAPER_DIR, ROOT, built, org_scores, row, write_run
from tests.tables_support import judged, paper, retrieval_only  # noqa: F401  (fixtures)


# ---------------------------------------------------------------------------------------------
# Scanning and newest-run selection


def test_scan_is_tidy_and_keeps_the_newest_run(judged: Path):
    tidy = T.scan_runs(judged)
    assert set(T.TIDY_COLUMNS) <= set(tidy.columns)
    c1 = tidy[(tidy["run"].str.endswith("mempp-new")) & (tidy["category"] == "C1") & (tidy["metric"] == "score")]
    assert c1["value"].tolist() == [70.0]
    assert c1["answerer"].tolist() == ["gpt-4.1-mini"] and c1["k"].tolist() == [50]
    latest = T.latest_runs(tidy)
    runs = set(latest["run"].map(lambda p: Path(p).name))
    assert "mempp-new" in runs and "mempp-old" not in runs
    assert {"mempp-k10", "mempp-k30"} <= runs  # other k: other key
    assert latest.loc[latest["run"].str.endswith("mempp-plumb"), "plumbing"].all()


def test_newest_is_by_folder_mtime_not_by_name(tmp_path: Path):
    runs = tmp_path / "runs"
    write_run(runs, "orgmem", "mempp-zzz", system="mempp", k=50, answerer="a", summary=org_scores({"overall": 1.0}), mtime=1)
    write_run(runs, "orgmem", "mempp-aaa", system="mempp", k=50, answerer="a", summary=org_scores({"overall": 2.0}), mtime=2)
    latest = T.latest_runs(T.scan_runs(runs))
    assert latest["run"].map(lambda p: Path(p).name).unique().tolist() == ["mempp-aaa"]


def test_unfinished_run_is_skipped(tmp_path: Path):
    runs = tmp_path / "runs"
    write_run(runs, "orgmem", "mempp-a", system="mempp", k=50, answerer="a", summary=org_scores({"overall": 1.0}))
    broken = runs / "orgmem" / "mempp-b"
    broken.mkdir()
    (broken / "config.json").write_text("{}", encoding="utf-8")
    assert T.scan_runs(runs)["run"].map(lambda p: Path(p).name).unique().tolist() == ["mempp-a"]


# ---------------------------------------------------------------------------------------------
# Judge metrics, with the paper beside


def test_table1_cells_with_paper(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table1"]
    assert table.judge and "score (0-100), mean ± std" in table.title and "fallback" not in table.title
    mempp = row(table, system="mempp", answerer="gpt-4.1-mini")
    assert mempp["metric"] == "score_paper"  # the paper's kind of number: 100/N, a lost grade counting 0
    assert mempp["C1"] == "70.0 ± 1.5 / 67.7"
    assert mempp["C4"] == "80.0 ± 1.5 / 83.0"
    assert mempp["overall"] == "60.0 ± 0.5 / 57.6 ± 0.1"
    bm25 = row(table, system="bm25", answerer="gpt-4.1-mini")
    assert bm25["C1"] == "40.0 / n/a"
    assert bm25["C6"] == "— / n/a"
    full = row(table, system="full_context", answerer="gpt-4.1-mini")
    assert full["overall"] == "20.0 / 17.8 ± 0.1" and full["C1"] == "— / 0.0"
    plumbing = row(table, system="mempp (plumbing)", answerer="qwen-local")
    assert plumbing["C3"] == "55.0 / n/a"
    # k sweep runs and ablations are not Table 1 rows; the retrieval-only run is left out and named
    assert (table.shown["system"] == "mempp").sum() == 2  # gpt-4.1-mini and claude-sonnet-4-6, both at k=50
    assert not table.shown["system"].str.startswith("mempp_").any()
    assert any("bm25 [none]" in note for note in table.notes)
    assert "10.0" not in " ".join(table.frame.astype(str).values.ravel())  # the older run is gone


def test_table2_locomo(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table2"]
    judge = row(table, system="mempp", metric="llm_judge_paper")
    assert judge["single-hop"] == "85.0 ± 0.3 / 84.0"
    assert judge["overall"] == "78.0 ± 0.2 / 77.4"
    assert judge["adversarial (apart)"] == "30.0 ± 0.3 / n/a"
    assert row(table, system="mempp", metric="f1")["temporal"] == "55.5 / 56.9"
    assert row(table, system="mempp", metric="bleu1")["open-domain"] == "18.0 / 17.8"
    assert list(table.frame.columns[-3:]) == ["overall", "adversarial (apart)", "run"]


def test_table3_longmemeval(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table3"]
    mempp = row(table, system="mempp", metric="accuracy_paper")
    assert mempp["single-session-user"] == "97.0 / 98.4"
    assert mempp["single-session-assistant"] == "— / 94.6"
    assert mempp["task-averaged"] == "75.0 / n/a"
    assert mempp["overall"] == "73.0 / 72.2"


def test_table4_ablation_deltas_and_paper(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table4"]
    sonnet = row(table, system="mempp_no_vector", answerer="claude-sonnet-4-6")
    assert sonnet["OrgMemBench"] == "25.0 (-31.0) / 21.3"
    assert sonnet["LoCoMo"] == "— / 76.7"
    assert row(table, system="mempp", answerer="claude-sonnet-4-6")["OrgMemBench"] == "56.0 / 57.0"
    gpt = row(table, system="mempp_no_vector", answerer="gpt-4.1-mini")
    assert gpt["OrgMemBench"] == "30.0 (-30.0) / n/a"
    assert gpt["LongMemEval_S"] == "— / n/a"
    assert row(table, system="mempp", answerer="gpt-4o-mini")["LoCoMo"] == "78.0 ± 0.2 / n/a"


def test_table7_k_sweep(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table7"]
    assert table.judge and "score_paper" in table.shown.columns and "score" not in table.shown.columns
    k10 = row(table, answerer="gpt-4.1-mini", k="10")
    assert k10["score_paper"] == "50.0 ± 1.0"
    assert row(table, csv=True, answerer="gpt-4.1-mini", k="10")["score"] == "50.0 ± 1.0"  # parsed-only, CSV
    assert k10["read tokens / question (est.)"] == "2,500"
    assert k10["retrieved tokens, all questions (est.)"] == "0.10M"
    assert k10["paper gpt-4.1-mini"] == "50.56" and k10["paper gpt-4o-mini"] == "45.10"
    assert k10["paper retrieved tokens"] == "0.41M"
    k50 = row(table, answerer="gpt-4.1-mini", k="50")
    assert k50["score_paper"] == "60.0 ± 0.5" and k50["retrieved tokens, all questions (est.)"] == "2.00M"
    k5 = row(table, answerer="gpt-4.1-mini", k="5")  # only the paper has k = 5
    assert k5["score_paper"] == "—" and k5["system"] == "—" and k5["paper gpt-4.1-mini"] == "43.99"
    full = row(table, answerer="gpt-4.1-mini", k="full_context")
    assert full["score_paper"] == "20.0" and full["paper gpt-4.1-mini"] == "21.52" and full["paper retrieved tokens"] == "18.68M"
    assert table.frame[table.frame["answerer"] == "gpt-4.1-mini"]["k"].tolist() == [
        "5", "10", "15", "30", "50", "70", "100", "full_context"]


def test_k_sweep_data_numbers(judged: Path):
    data, judge = T.k_sweep_data(T.latest_runs(T.scan_runs(judged)))
    assert judge
    gpt = data[data["answerer"] == "gpt-4.1-mini"]
    assert gpt["k"].tolist() == [10, 30, 50, "full_context"]
    assert gpt["score"].tolist() == [50.0, 55.0, 60.0, 20.0]
    assert gpt["read_tokens"].tolist() == [2500.0, 7500.0, 10000.0, 10000.0]
    assert gpt["retrieved_tokens_total"].tolist()[:3] == [100_000.0, 300_000.0, 2_000_000.0]


# ---------------------------------------------------------------------------------------------
# Retrieval fallback (no judge metrics) and missing paper


def test_fallback_tables(retrieval_only: Path, paper: pd.DataFrame):
    tables = built(retrieval_only)
    table1 = tables["table1"]
    assert not table1.judge and "retrieval fallback" in table1.title
    assert "recall_any@50, recall_all@50, in_budget_recall" in table1.title
    any50 = row(table1, system="mempp", metric="recall_any@50")
    assert any50["C1"] == "0.933" and any50["overall"] == "0.904" and any50["C2"] == "—"
    assert row(table1, system="mempp", metric="in_budget_recall")["C1"] == "0.511"
    assert row(table1, system="bm25 (limit=5)", metric="recall_all@50")["C1"] == "—"
    assert table1.paper is not None and "Mem++" in set(table1.paper["row"])
    mempp_41 = table1.paper[(table1.paper["row"] == "Mem++") & (table1.paper["answerer"] == "gpt-4.1-mini")].iloc[0]
    assert mempp_41["Overall"] == "57.6 ± 0.1" and mempp_41["Supersession"] == "67.7"
    assert "Paper, as published" in table1.markdown() and "57.6 ± 0.1" in table1.markdown()
    assert tables["table2"].frame.empty and "_No runs found._" in tables["table2"].markdown()
    table4 = tables["table4"]
    assert row(table4, system="mempp", metric="recall_any@50")["OrgMemBench"] == "0.904"
    assert row(table4, system="mempp", metric="recall_any@50")["LoCoMo"] == "—"
    table7 = tables["table7"]
    assert "retrieval fallback" in table7.title and "recall_any@all" in table7.frame.columns
    k10 = row(table7, k="10")
    assert k10["recall_any@all"] == "0.740" and k10["in_budget_recall"] == "0.449"
    assert k10["read tokens / question (est.)"] == "5,239"
    assert k10["retrieved tokens, all questions (est.)"] == "—"  # no records.jsonl
    assert k10["paper gpt-4o-mini"] == "45.10"


def test_no_blank_or_zero_for_missing(retrieval_only: Path, judged: Path):
    for store in (retrieval_only, judged):
        for table in built(store).values():
            cells = table.frame.astype(str).values.ravel().tolist()
            assert all(cell.strip() for cell in cells), table.key
            assert "nan" not in " ".join(cells).lower(), table.key


def test_without_paper_numbers_the_paper_column_is_na(judged: Path, tmp_path: Path):
    empty = tmp_path / "paper"
    empty.mkdir()
    (empty / "table1_orgmembench.csv").write_text(",".join(T.PAPER_COLUMNS) + "\n", encoding="utf-8")
    tables = built(judged, empty)
    assert row(tables["table1"], system="mempp", answerer="gpt-4.1-mini")["C1"] == "70.0 ± 1.5 / n/a"
    k10 = row(tables["table7"], answerer="gpt-4.1-mini", k="10")
    assert k10["paper score"] == "n/a" and k10["paper retrieved tokens"] == "n/a"
    assert "n/a (paper numbers not found)" in tables["table1"].markdown()


def test_forced_retrieval_mode_on_a_judged_store(judged: Path):
    table = built(judged, mode="retrieval")["table1"]
    assert not table.judge
    assert row(table, system="bm25", answerer="none", metric="recall_any@50")["overall"] == "0.900"


# ---------------------------------------------------------------------------------------------
# Output files and scripts


def test_write_tables_and_cli(judged: Path, tmp_path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_tables", ROOT / "scripts" / "make_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "out"
    assert module.main(["--runs", str(judged), "--out", str(out), "--tables", "1,7", "--quiet", "--newest"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "table1.csv", "table1.md", "table1_paper.csv", "table7.csv", "table7.md", "tables.md"]
    csv = pd.read_csv(out / "table1.csv", dtype=str)
    mempp = csv[(csv["system"] == "mempp") & (csv["answerer"] == "gpt-4.1-mini")]
    assert dict(zip(mempp["metric"], mempp["C1"])) == {"score_paper": "70.0 ± 1.5 / 67.7", "score": "70.0 ± 1.5"}
    assert "| mempp (plumbing) |" in (out / "table1.md").read_text(encoding="utf-8").replace("  ", " ").replace("  ", " ")
    with pytest.raises(SystemExit):
        module.main(["--runs", str(judged), "--out", str(out), "--tables", "5"])


def test_plot_k_sweep(judged: Path, retrieval_only: Path, tmp_path: Path):
    pytest.importorskip("matplotlib")
    paper_frame = T.load_paper(PAPER_DIR)
    for store in (judged, retrieval_only):
        path = T.plot_k_sweep(T.latest_runs(T.scan_runs(store)), paper_frame, tmp_path / f"{store.name}.png")
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    with pytest.raises(ValueError, match="no mempp runs"):
        T.plot_k_sweep(T.latest_runs(T.scan_runs(judged)), paper_frame, tmp_path / "x.png", dataset="locomo_missing")


def test_make_tables_writes_by_default_to_an_untracked_folder(judged: Path, tmp_path: Path, monkeypatch):
    """Generated tables no longer land in the tracked results/ tree (they showed up in git status)."""
    import importlib.util
    import subprocess

    spec = importlib.util.spec_from_file_location("make_tables", ROOT / "scripts" / "make_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.chdir(tmp_path)  # the default is relative to where the script runs (the repository root)
    assert module.main(["--runs", str(judged), "--tables", "1", "--quiet", "--newest"]) == 0
    assert (tmp_path / "outputs" / "tables" / "table1.csv").is_file() and not (tmp_path / "results").exists()
    ignored = subprocess.run(["git", "check-ignore", "-q", "outputs/tables/table1.csv"], cwd=ROOT)
    assert ignored.returncode == 0  # .gitignore covers it in the repository
    tracked = subprocess.run(["git", "ls-files", "--error-unmatch", "results/paper/table1_orgmembench.csv"],
                             cwd=ROOT, capture_output=True)
    assert tracked.returncode == 0  # the paper's numbers stay tracked where they are
