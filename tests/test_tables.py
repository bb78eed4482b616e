"""Tables 1, 2, 3, 4, 7 and Figure 4 from a hand-written results store with known numbers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from harness.reports import tables as T

ROOT = Path(__file__).resolve().parent.parent
PAPER_DIR = ROOT / "results" / "paper"
ORG = ["C1", "C2", "C3", "C4", "C5", "C6", "overall"]
BASE_TIME = 1_700_000_000


def write_run(root: Path, dataset: str, folder: str, *, system: str, k: int, answerer: str, summary: dict,
              stats: dict | None = None, mtime: int = 0, limit: int | None = None, run_name: str | None = None,
              records: list[dict] | None = None, default_k: int = 50) -> Path:
    """One run folder as the runner writes it (config.json, metrics.json, optional records.jsonl)."""
    path = root / dataset / folder
    path.mkdir(parents=True)
    config = {
        "answerer": answerer,
        "dataset": {"name": dataset, "limit": limit, "categories": None, "mempp": {"k": default_k}},
        "system": {"name": system, "kind": system.split("_")[0], "k": k, "params": {}},
        "run_name": run_name,
    }
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (path / "metrics.json").write_text(json.dumps({"summary": summary, "stats": stats or {}}), encoding="utf-8")
    if records is not None:
        (path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    os.utime(path, (BASE_TIME + mtime, BASE_TIME + mtime))
    return path


def org_scores(values: dict[str, float], std: float | None = None) -> dict:
    out = {}
    for category, value in values.items():
        out[category] = {"score": value, "n": 10, "n_scored": 10}
        if std is not None:
            out[category]["score_std"] = std
    return out


def row(table: T.Table, **match) -> pd.Series:
    frame = table.frame
    for column, value in match.items():
        frame = frame[frame[column] == value]
    assert len(frame) == 1, f"expected one row for {match}, got {len(frame)}:\n{table.frame}"
    return frame.iloc[0]


@pytest.fixture()
def judged(tmp_path: Path) -> Path:
    """A store with judge metrics on all three datasets, a plumbing run, a k sweep and ablations."""
    runs = tmp_path / "runs"
    full = {"C1": 70.0, "C2": 66.0, "C3": 50.0, "C4": 80.0, "C5": 20.0, "C6": 45.0, "overall": 60.0}
    summary = org_scores(full, std=1.5)
    summary["overall"]["score_std"] = 0.5
    write_run(runs, "orgmem", "mempp-old", system="mempp", k=50, answerer="gpt-4.1-mini",
              summary=org_scores({c: 10.0 for c in ORG}, std=0.0), mtime=10)
    write_run(runs, "orgmem", "mempp-new", system="mempp", k=50, answerer="gpt-4.1-mini", summary=summary,
              stats={"mean_read_chars": 40000.0}, mtime=20,
              records=[{"retrieved_chars": 3_000_000}, {"retrieved_chars": 5_000_000}])
    for k, value, mtime in [(10, 50.0, 30), (30, 55.0, 31)]:
        write_run(runs, "orgmem", f"mempp-k{k}", system="mempp", k=k, answerer="gpt-4.1-mini",
                  summary=org_scores({"overall": value}, std=1.0), stats={"mean_read_chars": 10000.0 * k / 10},
                  mtime=mtime, records=[{"retrieved_chars": 400_000 * k // 10}])
    write_run(runs, "orgmem", "full_context-a", system="full_context", k=50, answerer="gpt-4.1-mini",
              summary=org_scores({"overall": 20.0}), stats={"mean_read_chars": 40000.0}, mtime=5)
    write_run(runs, "orgmem", "bm25-a", system="bm25", k=50, answerer="gpt-4.1-mini",
              summary=org_scores({c: 40.0 for c in ORG if c != "C6"}), mtime=5)
    write_run(runs, "orgmem", "mempp-plumb", system="mempp", k=50, answerer="qwen-local",
              summary=org_scores({c: 55.0 for c in ORG}), stats={"plumbing": True}, mtime=5)
    write_run(runs, "orgmem", "bm25-retrieval", system="bm25", k=50, answerer="none",
              summary={"overall": {"recall_any@50": 0.9, "n": 73, "n_scored": 73}}, mtime=5)
    write_run(runs, "orgmem", "mempp_no_vector-a", system="mempp_no_vector", k=50, answerer="gpt-4.1-mini",
              summary=org_scores({"overall": 30.0}), mtime=5)
    write_run(runs, "orgmem", "mempp-sonnet", system="mempp", k=50, answerer="claude-sonnet-4-6",
              summary=org_scores({"overall": 56.0}), mtime=5)
    write_run(runs, "orgmem", "mempp_no_vector-sonnet", system="mempp_no_vector", k=50, answerer="claude-sonnet-4-6",
              summary=org_scores({"overall": 25.0}), mtime=5)
    locomo = {}
    for category, (judge, f1, bleu) in {
        "single-hop": (85.0, 60.0, 50.0), "multi-hop": (70.0, 40.0, 30.0), "temporal": (75.0, 55.5, 45.0),
        "open-domain": (45.0, 25.0, 18.0), "overall": (78.0, 52.0, 42.5), "adversarial": (30.0, 10.0, 5.0),
    }.items():
        locomo[category] = {"llm_judge": judge, "llm_judge_std": 0.3, "f1": f1, "bleu1": bleu, "n": 5, "n_scored": 5}
    locomo["overall"]["llm_judge_std"] = 0.2
    write_run(runs, "locomo", "mempp-a", system="mempp", k=50, answerer="gpt-4o-mini", summary=locomo, mtime=5)
    lme = {c: {"accuracy": v, "n": 5, "n_scored": 5} for c, v in {
        "single-session-user": 97.0, "single-session-preference": 40.0, "multi-session": 60.0,
        "knowledge-update": 80.0, "temporal-reasoning": 55.0, "task_averaged": 75.0, "overall": 73.0}.items()}
    write_run(runs, "longmemeval_s", "mempp-a", system="mempp", k=50, answerer="gpt-4o-mini", summary=lme, mtime=5)
    return runs


@pytest.fixture()
def retrieval_only(tmp_path: Path) -> Path:
    """Today's store: answerer none, retrieval metrics only."""
    runs = tmp_path / "retrieval"
    metrics = {"recall_any@50": 0.933, "recall_all@50": 0.2, "in_budget_recall": 0.511, "recall_any@all": 0.95,
               "n": 15, "n_scored": 15}
    write_run(runs, "orgmem", "mempp-a", system="mempp", k=50, answerer="none",
              summary={"C1": metrics, "overall": {**metrics, "recall_any@50": 0.904}},
              stats={"mean_read_chars": 40000.0}, mtime=5)
    write_run(runs, "orgmem", "mempp-k10", system="mempp", k=10, answerer="none",
              summary={"overall": {"recall_any@all": 0.74, "in_budget_recall": 0.449, "n": 73, "n_scored": 73}},
              stats={"mean_read_chars": 20956.0}, mtime=6)
    write_run(runs, "orgmem", "bm25-a", system="bm25", k=50, answerer="none", limit=5,
              summary={"C1": {"recall_any@50": 1.0, "n": 5, "n_scored": 5}}, mtime=5)
    return runs


@pytest.fixture()
def paper() -> pd.DataFrame:
    frame = T.load_paper(PAPER_DIR)
    if frame.empty:
        pytest.skip("results/paper holds no published numbers")
    return frame


def built(runs: Path, paper_dir: Path | None = PAPER_DIR, mode: str = "auto") -> dict[str, T.Table]:
    return {t.key: t for t in T.build_tables(runs, paper_dir, mode=mode)}


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
    assert mempp["metric"] == "score"
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
    assert (table.frame["system"] == "mempp").sum() == 2  # gpt-4.1-mini and claude-sonnet-4-6, both at k=50
    assert not table.frame["system"].str.startswith("mempp_").any()
    assert any("bm25 [none]" in note for note in table.notes)
    assert "10.0" not in " ".join(table.frame.astype(str).values.ravel())  # the older run is gone


def test_table2_locomo(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table2"]
    judge = row(table, system="mempp", metric="llm_judge")
    assert judge["single-hop"] == "85.0 ± 0.3 / 84.0"
    assert judge["overall"] == "78.0 ± 0.2 / 77.4"
    assert judge["adversarial (apart)"] == "30.0 ± 0.3 / n/a"
    assert row(table, system="mempp", metric="f1")["temporal"] == "55.5 / 56.9"
    assert row(table, system="mempp", metric="bleu1")["open-domain"] == "18.0 / 17.8"
    assert list(table.frame.columns[-3:]) == ["overall", "adversarial (apart)", "run"]


def test_table3_longmemeval(judged: Path, paper: pd.DataFrame):
    table = built(judged)["table3"]
    mempp = row(table, system="mempp", metric="accuracy")
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
    assert table.judge and "score" in table.frame.columns
    k10 = row(table, answerer="gpt-4.1-mini", k="10")
    assert k10["score"] == "50.0 ± 1.0"
    assert k10["read tokens / question (est.)"] == "2,500"
    assert k10["retrieved tokens, all questions (est.)"] == "0.10M"
    assert k10["paper gpt-4.1-mini"] == "50.56" and k10["paper gpt-4o-mini"] == "45.10"
    assert k10["paper retrieved tokens"] == "0.41M"
    k50 = row(table, answerer="gpt-4.1-mini", k="50")
    assert k50["score"] == "60.0 ± 0.5" and k50["retrieved tokens, all questions (est.)"] == "2.00M"
    k5 = row(table, answerer="gpt-4.1-mini", k="5")  # only the paper has k = 5
    assert k5["score"] == "—" and k5["system"] == "—" and k5["paper gpt-4.1-mini"] == "43.99"
    full = row(table, answerer="gpt-4.1-mini", k="full_context")
    assert full["score"] == "20.0" and full["paper gpt-4.1-mini"] == "21.52" and full["paper retrieved tokens"] == "18.68M"
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
    assert csv.loc[(csv["system"] == "mempp") & (csv["answerer"] == "gpt-4.1-mini"), "C1"].tolist() == ["70.0 ± 1.5 / 67.7"]
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


# ---------------------------------------------------------------------------------------------
# The transcribed paper numbers


def test_paper_csvs_are_well_formed(paper: pd.DataFrame):
    for path in sorted(PAPER_DIR.glob("*.csv")):
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        assert list(frame.columns) == T.PAPER_COLUMNS, path.name
        assert (frame["source"].str.len() > 0).all(), path.name
    numeric = paper[paper["table"].isin(["1", "2", "3", "4", "5", "7"])]
    assert pd.to_numeric(numeric["value"], errors="coerce").notna().all()
    assert (paper["table"] == "1").sum() == 2 * 8 * 7 + 2 * 8  # 2 answerers x 8 methods x 7 columns + overall stds


# Printed averages that disagree with their categories in the source itself (results/paper/README.md).
KNOWN_SOURCE_MISMATCHES = {("1", "gpt-4o-mini", "Mem++", "score"), ("2", "gpt-4o-mini", "Nemori", "bleu1"),
                           ("3", "gpt-4.1-mini", "Nemori", "accuracy")}


def test_paper_overall_is_the_question_weighted_mean(paper: pd.DataFrame):
    """Catches transcription slips: each printed overall/average is the categories weighted by Table 5."""
    counts = paper[paper["table"] == "5"]
    dataset_of = {"OrgMemBench (medium)": "1", "LoCoMo": "2", "LongMemEval_S": "3"}
    weights = {}
    for r in counts.itertuples():
        if r.category != "overall":
            weights.setdefault(dataset_of[r.column], {})[r.category] = float(r.value)
    checked = 0
    for table, w in weights.items():
        part = paper[(paper["table"] == table) & ~paper["metric"].str.endswith("_std")]
        for (answerer, name, metric), group in part.groupby(["answerer", "row", "metric"]):
            values = dict(zip(group["category"], group["value"].astype(float)))
            weighted = sum(values[c] * n for c, n in w.items()) / sum(w.values())
            ok = abs(weighted - values["overall"]) <= 0.1
            assert ok != ((table, answerer, name, metric) in KNOWN_SOURCE_MISMATCHES), (table, answerer, name, metric, weighted)
            checked += 1
    assert checked == 16 + 18 * 3 + 10


def test_answerer_as_written_by_the_config_dataclass(tmp_path: Path):
    """config.json may hold the answerer as a name, as a ModelSpec dict, or as null (no answerer)."""
    runs = tmp_path / "runs"
    write_run(runs, "orgmem", "mempp-dict", system="mempp", k=50, summary=org_scores({"C1": 60.0}),
              answerer={"name": "gpt-4o-mini", "model": "gpt-4o-mini", "runs": 3})
    write_run(runs, "orgmem", "mempp-null", system="mempp", k=50, summary={"C1": {"recall_any@50": 0.5}},
              answerer=None)
    tidy = T.scan_runs(runs)
    assert sorted(tidy.drop_duplicates("run")["answerer"]) == ["gpt-4o-mini", "none"]
    table = T.table1(T.latest_runs(tidy), T.load_paper(PAPER_DIR))
    expected = "60.0 / 57.0" if not T.load_paper(PAPER_DIR).empty else "60.0 / n/a"
    assert row(table, system="mempp", answerer="gpt-4o-mini")["C1"] == expected


# ---------------------------------------------------------------------------------------------
# Real run folders: each table takes the run its preset asks for, not the newest


def test_tables_take_the_preset_run_not_the_newest_variant(tmp_path: Path):
    """The acceptance case of issue 13: a default full run, then system.conjunctive=false and
    dataset.limit=3 runs on top; Tables 1 and 7 still show the default run and name its folder."""
    from harness.compose import compose_config
    from harness.config import RunConfig
    from harness.reports.presets import table_jobs
    from harness.reports.selection import Options
    from harness.runner import run

    runs = tmp_path / "runs"
    folders = {}
    for extra in ([], ["system.conjunctive=false"], ["dataset.limit=3"]):
        raw = compose_config(["progress=false", f"store.results_dir={runs}", *extra])
        folders[tuple(extra)] = run(RunConfig.from_dict(raw), extra).paths.root
        os.utime(folders[tuple(extra)], (BASE_TIME + len(folders), BASE_TIME + len(folders)))  # later = newer
    default = f"orgmem/{folders[()].name}"
    provenance = json.loads((folders[("dataset.limit=3",)] / "metrics.json").read_text())["provenance"]
    assert provenance["overrides"] == ["dataset.limit=3"] and provenance["packages"]["pandas"] == pd.__version__
    assert "git" in provenance and provenance["date"][:2] == "20"
    assert any(name.endswith("benchmark_v0.0.jsonl") for name in provenance["data_files"])
    assert len(provenance["data_files"]) >= 443  # every artefact the loader read, hashed
    assert folders[("system.conjunctive=false",)].name.startswith("mempp__system.conjunctive=false-")
    jobs = {1: table_jobs(1), 7: table_jobs(7)}
    tables = {t.key: t for t in T.build_tables(runs, PAPER_DIR, (1, 7), jobs=jobs)}
    assert set(tables["table1"].frame["run"]) == {default}
    assert row(tables["table1"], metric="recall_any@50")["overall"] == "0.904"  # the golden full-run figure
    assert row(tables["table7"], k="50")["run"] == default
    notes = " ".join(tables["table1"].notes)
    assert "system.params.conjunctive=false (preset true)" in notes and "dataset.limit=3 (preset null)" in notes
    assert default in tables["table1"].markdown()
    # asked for, the limited run is shown as its own labelled row only where no full run exists
    limited = T.build_tables(runs, PAPER_DIR, (1,), jobs=jobs, options=Options(include_limited=True))[0]
    assert set(limited.frame["run"]) == {default}


def test_selection_leaves_out_failed_and_plumbing_runs(tmp_path: Path):
    from harness.reports.selection import Job, Options, select_runs

    runs = tmp_path / "runs"
    job_config = {"dataset": {"name": "orgmem", "limit": None}, "system": {"name": "mempp", "k": 50},
                  "answerer": {"name": "gpt-4.1-mini"}, "judge": {"name": "gpt-4o-mini", "runs": 3}}
    job = Job("t", (), job_config)
    for folder, answerer, summary, stats in [
        ("good", {"name": "gpt-4.1-mini"}, org_scores({"overall": 50.0}), {}),
        ("failed", {"name": "gpt-4.1-mini"}, {"overall": {"score": None, "n": 73}}, {"questions": 73, "answer_failures": 73}),
        ("local", {"name": "gpt-4.1-mini", "base_url": "http://127.0.0.1:8080/v1"}, org_scores({"overall": 99.0}), {}),
    ]:
        path = runs / "orgmem" / folder
        path.mkdir(parents=True)
        (path / "config.json").write_text(json.dumps({**job_config, "answerer": answerer}), encoding="utf-8")
        (path / "metrics.json").write_text(json.dumps({"summary": summary, "stats": stats}), encoding="utf-8")
    tidy = T.scan_runs(runs)
    chosen = select_runs(tidy, [job])
    assert set(chosen.tidy["folder"]) == {"orgmem/good"}
    assert "orgmem/failed: every answer failed" in chosen.notes[0] and "orgmem/local: plumbing" in chosen.notes[0]
    both = select_runs(tidy, [job], Options(include_failed=True, include_plumbing=True))
    assert len(set(both.tidy["folder"])) == 1  # one row per job: the exact, newest match


def test_table1_rag_row_is_the_papers_rag(paper: pd.DataFrame):
    """The paper's Table 1 prints one RAG row; rag_4096 maps to it (it mapped to a missing label before)."""
    from harness.reports.labels import paper_row

    label = paper_row("rag_4096", 1)
    assert label == "RAG"
    assert ((paper["table"] == "1") & (paper["row"] == label)).sum() == 2 * 8
    assert paper_row("rag_4096", 2) == "RAG-4096" and paper_row("rag_2048", 2) == "RAG-2048"
    assert all(paper_row(s, t) is None or paper_row(s, t) in set(paper.loc[paper["table"] == str(t), "row"])
               for s in ("mempp", "full_context", "rag_2048", "rag_4096", "mempp_no_vector", "mempp_no_lexical",
                         "mempp_no_tag") for t in (1, 2, 3, 4, 7))


def test_a_run_against_an_openai_compatible_server_is_named_by_its_model_and_marked_plumbing(tmp_path):
    from harness.reports.store import run_info

    config = {"dataset": {"name": "orgmem"}, "system": {"name": "mempp", "k": 50},
              "answerer": {"name": "openai_compatible", "model": "qwen2.5-7b", "base_url": "http://127.0.0.1:8000/v1"},
              "judge": {"name": "gpt-4o-mini", "model": "gpt-4o-mini", "base_url": None}}
    (tmp_path / "mempp-abc").mkdir()
    info = run_info(tmp_path / "mempp-abc", config, {"stats": {}, "summary": {}})
    assert (info["answerer"], info["plumbing"]) == ("qwen2.5-7b", True)
