"""Tables 1, 2, 3, 4, 7 and Figure 4 from a hand-written results store with known numbers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from harness.reports.ksweep import k_sweep_data, plot_k_sweep
from harness.reports.paper import PAPER_COLUMNS, load_paper
from harness.reports.store import TIDY_COLUMNS, latest_runs, scan_runs

from tests.tables_support import PAPER_DIR, ROOT, built, org_scores, retrieval_row, row, write_run
from tests.tables_support import judged, paper, retrieval_only  # noqa: F401  (fixtures)


# ---------------------------------------------------------------------------------------------
# Scanning and newest-run selection


def test_scan_is_tidy_and_keeps_the_newest_run(judged: Path):
    tidy = scan_runs(judged)
    assert set(TIDY_COLUMNS) <= set(tidy.columns)
    c1 = tidy[(tidy["run"].str.endswith("mempp-new")) & (tidy["category"] == "C1") & (tidy["metric"] == "score")]
    assert c1["value"].tolist() == [70.0]
    assert c1["answerer"].tolist() == ["gpt-4.1-mini"] and c1["k"].tolist() == [50]
    latest = latest_runs(tidy)
    runs = set(latest["run"].map(lambda p: Path(p).name))
    assert "mempp-new" in runs and "mempp-old" not in runs
    assert {"mempp-k10", "mempp-k30"} <= runs  # other k: other key
    assert latest.loc[latest["run"].str.endswith("mempp-plumb"), "plumbing"].all()


def test_newest_is_by_folder_mtime_not_by_name(tmp_path: Path):
    runs = tmp_path / "runs"
    write_run(runs, "orgmem", "mempp-zzz", system="mempp", k=50, answerer="a", summary=org_scores({"overall": 1.0}), mtime=1)
    write_run(runs, "orgmem", "mempp-aaa", system="mempp", k=50, answerer="a", summary=org_scores({"overall": 2.0}), mtime=2)
    latest = latest_runs(scan_runs(runs))
    assert latest["run"].map(lambda p: Path(p).name).unique().tolist() == ["mempp-aaa"]


def test_unfinished_run_is_skipped(tmp_path: Path):
    runs = tmp_path / "runs"
    write_run(runs, "orgmem", "mempp-a", system="mempp", k=50, answerer="a", summary=org_scores({"overall": 1.0}))
    broken = runs / "orgmem" / "mempp-b"
    broken.mkdir()
    (broken / "config.json").write_text("{}", encoding="utf-8")
    assert scan_runs(runs)["run"].map(lambda p: Path(p).name).unique().tolist() == ["mempp-a"]


# ---------------------------------------------------------------------------------------------
# Judge metrics: one row per (answerer, system), each cell "ours (paper)" under the paper's headers


def test_table1_cells_with_paper(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table1"]
    assert table.judge and "ours (the paper's figure" in table.cell_format
    headers = ["Supersession", "Decision Provenance", "Bi-temporal", "Audit Replay", "Justification Chain",
               "Contradiction", "Overall"]  # the paper's own headers (results/paper/table1_orgmembench.csv)
    assert list(table.shown.columns) == ["answerer", "system", *headers]
    mempp = row(table, system="Mem++", answerer="gpt-4.1-mini")  # the paper's row name, not "mempp"
    assert mempp["Supersession"] == "70.0 ± 1.5 (67.7)"
    assert mempp["Audit Replay"] == "80.0 ± 1.5 (83.0)"
    assert mempp["Overall"] == "60.0 ± 0.5 (57.6 ± 0.1)"
    bm25 = row(table, system="bm25", answerer="gpt-4.1-mini")  # our own baseline: no paper row, ours alone
    assert bm25["Supersession"] == "40.0" and bm25["Contradiction"] == "—"
    full = row(table, system="Full Context", answerer="gpt-4.1-mini")
    assert full["Overall"] == "20.0 (17.8 ± 0.1)" and full["Supersession"] == "— (0.0)"
    # the paper's gpt-4o-mini row of a system we show, not run by us: ours "—", the paper's figure beside
    assert row(table, system="Mem++", answerer="gpt-4o-mini")["Overall"] == "— (44.2 ± 0.1)"
    plumbing = row(table, system="Mem++ [1]", answerer="qwen-local")  # the label stays short: a footnote says why
    assert plumbing["Bi-temporal"] == "55.0 (n/a)"
    assert table.footnotes == ["[1] plumbing check (a local model or a non-provider endpoint), not a model score"]
    # one row per (answerer, system): k sweep runs and ablations are not Table 1 rows
    assert len(table.shown) == len(table.shown.drop_duplicates(["answerer", "system"]))
    assert not table.shown["system"].str.startswith("w/").any()
    assert any("bm25 [none]" in note for note in table.notes)
    assert "10.0" not in " ".join(table.frame.astype(str).values.ravel())  # the older run is gone
    assert "Paper, as published" not in table.markdown()  # no separate table: the paper is in the cells


def test_table2_locomo(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table2"]
    mempp = row(table, system="Mem++", answerer="gpt-4o-mini")
    assert mempp["Single-Hop LLM"] == "85.0 ± 0.3 (84.0)"
    assert mempp["Average LLM"] == "78.0 ± 0.2 (77.4)"
    assert mempp["Temporal Reasoning F1"] == "55.5 (56.9)"
    assert mempp["Open Domain BLEU"] == "18.0 (17.8)"
    assert mempp["adversarial (apart) LLM*"] == "30.0 ± 0.3"  # the paper prints no adversarial column
    assert list(table.shown.columns[-4:]) == ["Average BLEU", "adversarial (apart) LLM*", "adversarial (apart) F1*",
                                              "adversarial (apart) BLEU*"]
    assert row(table, system="Mem++", answerer="gpt-4.1-mini")["Average LLM"] == "— (81.5)"


def test_table3_longmemeval(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table3"]
    mempp = row(table, system="Mem++", answerer="gpt-4o-mini")
    assert mempp["Single-session user"] == "97.0 (98.4)"
    assert mempp["Single-session assistant"] == "— (94.6)"
    assert mempp["task-averaged*"] == "75.0"
    assert mempp["Average"] == "73.0 (72.2)"


def test_table4_one_row_per_system_with_the_datasets_as_columns(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table4"]
    assert list(table.shown.columns) == ["answerer", "system", "OrgMemBench", "LoCoMo", "LongMemEval_S"]
    assert len(table.shown) == len(table.shown.drop_duplicates(["answerer", "system"]))
    sonnet = row(table, system="w/o vector leg", answerer="claude-sonnet-4-6")
    assert sonnet["OrgMemBench"] == "25.0 Δ-31.0 (21.3 Δ-35.7)"
    assert sonnet["LoCoMo"] == "— (76.7 Δ-9.1)"
    assert row(table, system="Mem++", answerer="claude-sonnet-4-6")["OrgMemBench"] == "56.0 (57.0)"
    gpt = row(table, system="w/o vector leg", answerer="gpt-4.1-mini")
    assert gpt["OrgMemBench"] == "30.0 Δ-30.0 (n/a)"
    assert gpt["LongMemEval_S"] == "— (n/a)"
    # mempp answered by gpt-4o-mini on LoCoMo and LongMemEval_S: one row, both datasets in it
    both = row(table, system="Mem++", answerer="gpt-4o-mini")
    assert (both["LoCoMo"], both["LongMemEval_S"], both["OrgMemBench"]) == ("78.0 ± 0.2 (n/a)", "73.0 (n/a)", "— (n/a)")


def test_table7_k_sweep(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table7"]
    assert table.judge
    assert list(table.shown.columns[:3]) == ["k", "gpt-4o-mini", "gpt-4.1-mini"]  # the paper's column order
    k10 = row(table, k="10")
    assert k10["gpt-4.1-mini"] == "50.0 ± 1.0 (50.56)" and k10["gpt-4o-mini"] == "— (45.10)"
    assert row(table, csv=True, k="10")["gpt-4.1-mini [parsed grades only]"] == "50.0 ± 1.0"  # CSV only
    assert k10["read tokens / question*"] == "2,500"
    assert k10["Retrieved tokens"] == "0.10M (0.41M)"
    k50 = row(table, k="50 [1]")
    assert k50["gpt-4.1-mini"] == "60.0 ± 0.5 (57.00)" and k50["Retrieved tokens"] == "2.00M (2.01M)"
    assert row(table, k="5")["gpt-4.1-mini"] == "— (43.99)"  # only the paper has k = 5
    full = row(table, k="Full Context")
    assert full["gpt-4.1-mini"] == "20.0 (21.52)" and full["Retrieved tokens"] == "— (18.68M)"
    assert table.shown["k"].str.split(" ").str[0].tolist() == ["5", "10", "15", "30", "50", "70", "100", "Full"]


def test_k_sweep_data_numbers(judged: Path):
    data, judge = k_sweep_data(latest_runs(scan_runs(judged)))
    assert judge
    gpt = data[data["answerer"] == "gpt-4.1-mini"]
    assert gpt["k"].tolist() == [10, 30, 50, "full_context"]
    assert gpt["score"].tolist() == [50.0, 55.0, 60.0, 20.0]
    assert gpt["read_tokens"].tolist() == [2500.0, 7500.0, 10000.0, 10000.0]
    assert gpt["retrieved_tokens_total"].tolist()[:3] == [100_000.0, 300_000.0, 2_000_000.0]


# ---------------------------------------------------------------------------------------------
# Retrieval fallback (no judge metrics) and missing paper


def test_key_less_runs_put_recall_in_a_block_of_its_own_never_under_a_judge_header(retrieval_only: Path,
                                                                                    paper: pd.DataFrame):
    tables = built(retrieval_only)
    table1 = tables["table1"]
    assert not table1.judge
    mempp = row(table1, system="Mem++", answerer="gpt-4.1-mini")  # the paper's row, ours not answered
    assert mempp["Supersession"] == "— (67.7)" and mempp["Overall"] == "— (57.6 ± 0.1)"
    assert "0.933" not in " ".join(table1.shown.astype(str).values.ravel())  # no recall under a score header
    recall = retrieval_row(table1, system="Mem++", metric="recall_any@50")
    assert recall["C1"] == "0.933" and recall["overall"] == "0.904" and recall["C2"] == "—"
    assert retrieval_row(table1, system="Mem++", metric="in_budget_recall")["C1"] == "0.511"
    assert retrieval_row(table1, system="bm25 [1]", metric="recall_all@50")["C1"] == "—"  # --newest: the limited run
    assert table1.footnotes == ["[1] limit=5 (paper: every question)"]
    assert "### Retrieval (no paper counterpart)" in table1.markdown()
    table4 = tables["table4"]
    assert retrieval_row(table4, system="Mem++", metric="recall_any@50")["OrgMemBench"] == "0.904"
    assert retrieval_row(table4, system="Mem++", metric="recall_any@50")["LoCoMo"] == "—"
    assert row(table4, system="Mem++", answerer="claude-sonnet-4-6")["OrgMemBench"] == "— (57.0)"
    table7 = tables["table7"]
    assert row(table7, k="10")["gpt-4o-mini"] == "— (45.10)"
    k10 = retrieval_row(table7, k="10")
    assert k10["recall_any@all"] == "0.740" and k10["in_budget_recall"] == "0.449"
    assert k10["read tokens / question*"] == "5,239"
    assert row(table7, k="10")["Retrieved tokens"] == "— (0.41M)"  # no records.jsonl


def test_no_blank_or_zero_for_missing(retrieval_only: Path, judged: Path):
    for store in (retrieval_only, judged):
        for table in built(store).values():
            cells = table.frame.astype(str).values.ravel().tolist()
            if table.retrieval is not None:
                cells += table.retrieval.astype(str).values.ravel().tolist()
            assert all(cell.strip() for cell in cells), table.key
            assert "nan" not in " ".join(cells).lower(), table.key


def test_without_paper_numbers_the_paper_figure_is_na(judged: Path, tmp_path: Path):
    empty = tmp_path / "paper"
    empty.mkdir()
    (empty / "table1_orgmembench.csv").write_text(",".join(PAPER_COLUMNS) + "\n", encoding="utf-8")
    tables = built(judged, empty)
    mempp = row(tables["table1"], system="Mem++", answerer="gpt-4.1-mini")
    assert mempp["C1*"] == "70.0 ± 1.5"  # no paper headers known: our categories, ours alone
    assert row(tables["table7"], k="10")["gpt-4.1-mini"] == "50.0 ± 1.0 (n/a)"


def test_forced_retrieval_mode_on_a_judged_store(judged: Path):
    table = built(judged, mode="retrieval")["table1"]
    assert not table.judge
    assert retrieval_row(table, system="bm25", metric="recall_any@50")["overall"] == "0.900"


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
    csv = pd.read_csv(out / "table1.csv", dtype=str, keep_default_na=False)
    mempp = csv[(csv["system"] == "Mem++") & (csv["answerer"] == "gpt-4.1-mini")].iloc[0]
    # the CSV keeps every column: the cell as printed, the parsed-only mean, the run folder, the footnote
    assert (mempp["Supersession"], mempp["Supersession [parsed grades only]"]) == ("70.0 ± 1.5 (67.7)", "70.0 ± 1.5")
    assert mempp["run"] == "orgmem/mempp-new"
    assert csv.loc[csv["answerer"] == "qwen-local", "settings"].iloc[0].startswith("plumbing check")
    markdown = (out / "table1.md").read_text(encoding="utf-8")
    assert "| Mem++ [1]" in markdown and "[1] plumbing check" in markdown and "[parsed grades only]" not in markdown
    with pytest.raises(SystemExit):
        module.main(["--runs", str(judged), "--out", str(out), "--tables", "5"])


def test_plot_k_sweep(judged: Path, retrieval_only: Path, tmp_path: Path):
    pytest.importorskip("matplotlib")
    paper_frame = load_paper(PAPER_DIR)
    for store in (judged, retrieval_only):
        path = plot_k_sweep(latest_runs(scan_runs(store)), paper_frame, tmp_path / f"{store.name}.png")
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    with pytest.raises(ValueError, match="no mempp runs"):
        plot_k_sweep(latest_runs(scan_runs(judged)), paper_frame, tmp_path / "x.png", dataset="locomo_missing")


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
