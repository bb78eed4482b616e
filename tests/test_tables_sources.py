"""The transcribed paper numbers, and which run folder each table takes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from harness.reports import tables as T
from harness.reports.paper import PAPER_COLUMNS, load_paper
from harness.reports.store import latest_runs, scan_runs

from tests.tables_support import BASE_TIME, PAPER_DIR, org_scores, retrieval_row, row, write_run
from tests.tables_support import judged, paper, retrieval_only  # noqa: F401  (fixtures)


# ---------------------------------------------------------------------------------------------
# The transcribed paper numbers


def test_paper_csvs_are_well_formed(paper: pd.DataFrame):
    for path in sorted(PAPER_DIR.glob("*.csv")):
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        assert list(frame.columns) == PAPER_COLUMNS, path.name
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
    tidy = scan_runs(runs)
    assert sorted(tidy.drop_duplicates("run")["answerer"]) == ["gpt-4o-mini", "none"]
    table = T.table1(latest_runs(tidy), load_paper(PAPER_DIR))
    assert row(table, system="Mem++", answerer="gpt-4o-mini")["Supersession"] == "60.0 (57.0)"


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
    assert set(tables["table1"].retrieval["run"]) == {default}  # a key-less run: the retrieval block
    assert retrieval_row(tables["table1"], metric="recall_any@50")["overall"] == "0.904"  # the golden full-run figure
    assert retrieval_row(tables["table7"], k="50")["run"] == default
    notes = " ".join(tables["table1"].notes)
    assert "system.params.conjunctive=false (preset true)" in notes and "dataset.limit=3 (preset null)" in notes
    assert default in tables["table1"].markdown()
    # asked for, the limited run is shown as its own labelled row only where no full run exists
    limited = T.build_tables(runs, PAPER_DIR, (1,), jobs=jobs, options=Options(include_limited=True))[0]
    assert set(limited.retrieval["run"]) == {default}


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
    tidy = scan_runs(runs)
    chosen = select_runs(tidy, [job])
    assert set(chosen.tidy["folder"]) == {"orgmem/good"}
    assert "orgmem/failed: every answer failed" in chosen.notes[0] and "orgmem/local: plumbing" in chosen.notes[0]
    both = select_runs(tidy, [job], Options(include_failed=True, include_plumbing=True))
    assert len(set(both.tidy["folder"])) == 1  # one row per job: the exact, newest match


def test_a_run_is_compared_with_its_own_answerers_job_when_the_preset_runs_both(tmp_path: Path):
    """Issue 32: a gpt-4o-mini run of a preset that runs both answerers was footnoted
    ``answerer.model=gpt-4o-mini (paper: gpt-4.1-mini)``: it was matched to the gpt-4.1-mini job."""
    from harness.reports.selection import Job, Options, select_runs

    runs = tmp_path / "runs"
    base = {"dataset": {"name": "orgmem", "limit": None}, "system": {"name": "mempp", "k": 50},
            "judge": {"name": "gpt-4o-mini", "runs": 3}}
    jobs = [Job("t", (), {**base, "answerer": {"name": name, "model": name}}) for name in ("gpt-4.1-mini", "gpt-4o-mini")]
    path = runs / "orgmem" / "mini"
    path.mkdir(parents=True)
    answerer = {"name": "gpt-4o-mini", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:8080/v1"}
    (path / "config.json").write_text(json.dumps({**base, "answerer": answerer}), encoding="utf-8")
    (path / "metrics.json").write_text(json.dumps({"summary": org_scores({"overall": 50.0}), "stats": {}}), encoding="utf-8")
    chosen = select_runs(scan_runs(runs), jobs, Options(include_plumbing=True))
    assert chosen.filled == {1}
    assert all(not key.startswith("answerer.model") for diff in chosen.differences.values() for key in diff)


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
