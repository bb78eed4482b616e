"""The HTML report (issue 24) over real small LoCoMo runs, checked in a real headless Chromium.

Three runs of BM25 on the first 10 LoCoMo questions, offline: k=10 and k=20 retrieval only (they
differ only in ``system.k``: a k sweep), and k=10 answered and judged through the local fake
OpenAI server (the judge says CORRECT when the question names Caroline, WRONG otherwise), so the
judge-grade filter and the answer are there to see. Chromium renders each page (``--dump-dom``
gives the DOM after the page's own JS ran) and takes a screenshot; only the browser tests skip,
and only when no Chromium binary is installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from harness.misses import OUTCOMES, miss_line, miss_table
from harness.reports.html import render_report, write_report
from harness.reports.report_runs import comparison_kind, load_run
from harness.reports.intervals import RESAMPLES, TableIntervals
from harness.reports.svg_charts import fmt_value
from harness.stats.bootstrap import DEFAULT_SEED
from harness.runner import run
from harness.safe_write import seal
from tests.fake_openai_server import FakeOpenAIServer, last_user_content

ROOT = Path(__file__).resolve().parents[1]
KEY_ENV = "MEMPP_TEST_KEY"
ANSWER = "She went on <b>7 May 2023</b> & came back."


def _judge_or_answer(body: dict) -> str:
    if body.get("model") == "fake-answerer":
        return ANSWER
    # mem0's LoCoMo judge reply: a JSON label (CORRECT grades 1, WRONG 0)
    label = "CORRECT" if "Caroline" in last_user_content(body) else "WRONG"
    return json.dumps({"label": label})


def _run(tmp: Path, *extra: str) -> Path:
    overrides = ["dataset=locomo", "system=bm25", "dataset.limit=10", "progress=false",
                 f"store.cache_dir={tmp / 'cache'}", f"store.results_dir={tmp / 'runs'}", *extra]
    result = run(RunConfig.from_dict(compose_config(overrides)), overrides)
    assert result.paths is not None
    return result.paths.root


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("html-report")
    server = FakeOpenAIServer(answer_fn=_judge_or_answer).start()
    patch = pytest.MonkeyPatch()
    patch.setenv(KEY_ENV, "sk-test")
    try:
        answered = _run(tmp, "system.k=10", "run_name=answered",
                        "answerer=openai_compatible", "answerer.model=fake-answerer",
                        f"answerer.base_url={server.base_url}", f"answerer.api_key_env={KEY_ENV}",
                        "answerer.max_retries=0", "judge.model=fake-judge", f"judge.base_url={server.base_url}",
                        f"judge.api_key_env={KEY_ENV}", "judge.max_retries=0", "judge.runs=1")
        return {"k10": _run(tmp, "system.k=10"), "k20": _run(tmp, "system.k=20"), "answered": answered,
                "tmp": tmp}
    finally:
        server.stop()
        patch.undo()


def _records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]


def _copy_run(folder: Path, dest: Path, edit_config=None, edit_records=None, edit_metrics=None) -> Path:
    shutil.copytree(folder, dest)
    if edit_metrics:
        metrics = json.loads((dest / "metrics.json").read_text())
        edit_metrics(metrics)
        (dest / "metrics.json").write_text(json.dumps(metrics))
    if edit_config:
        config = json.loads((dest / "config.json").read_text())
        edit_config(config)
        (dest / "config.json").write_text(json.dumps(config))
    if edit_records:
        records = [edit_records(r) for r in _records(dest)]
        (dest / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    seal(dest)  # an edited copy is another run: its manifest lists the edited files
    return dest


# ---------------------------------------------------------------- without a browser


def test_a_k_sweep_or_a_leg_ablation_is_drawn_only_when_the_runs_differ_only_in_that(runs, tmp_path):
    k10, k20 = load_run(runs["k10"]), load_run(runs["k20"])
    assert comparison_kind([k10, k20]) == "k_sweep"
    assert comparison_kind([k10]) is None
    # the answered run differs in more than k: no sweep
    assert comparison_kind([k10, load_run(runs["answered"])]) is None

    def weights(config):
        config["system"]["name"] = "mempp_no_vector"
        config["system"].setdefault("params", {})["weights"] = {"lexical": 1.0, "tag": 1.0, "vector": 0.0}

    ablated = load_run(_copy_run(runs["k10"], tmp_path / "ablated", weights))
    assert comparison_kind([k10, ablated]) == "legs"
    # weights and k both changed: neither a sweep nor an ablation
    assert comparison_kind([k20, ablated]) is None
    page = render_report([k10, ablated])
    assert 'id="legs"' in page and 'id="k-sweep"' not in page
    page = render_report([k10, k20])
    assert 'id="k-sweep"' in page and 'id="legs"' not in page


HOSTILE = '<img src=x onerror="alert(1)"></script><!--'


def _hostile_run(runs, dest: Path) -> Path:
    """The answered run with markup in every question, in a category name and in the answers."""
    def edit(record):
        record["question"] = HOSTILE + record["question"]
        record["category"] = "<i>" + record["category"]
        return record

    def rename(metrics):
        metrics["summary"] = {"<i>" + name: row for name, row in metrics["summary"].items()}

    return _copy_run(runs["answered"], dest, edit_records=edit, edit_metrics=rename)


def test_every_text_from_the_records_is_escaped(runs, tmp_path):
    hostile = HOSTILE
    folder = _hostile_run(runs, tmp_path / "hostile")
    page = render_report([load_run(folder)])
    assert hostile not in page and "<i>" not in page and "</script><!--" not in page
    assert "&lt;i&gt;" in page  # the summary table's category, escaped by html.escape
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(data)["rows"][0]["question"].startswith(hostile)  # the JSON still holds the text whole


def test_the_script_writes_outputs_reports_by_default_and_refuses_a_folder_that_is_no_run(runs, tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "report.py"), str(runs["k10"])], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "outputs" / "reports" / f"{runs['k10'].name}.html"
    assert proc.stdout.strip() == str(Path("outputs/reports") / out.name)
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>")
    # self-contained: nothing is fetched from anywhere
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', page) and "@import" not in page
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "report.py"), str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr == (f"error: {tmp_path} is not a run folder "
                                                    "(it has no config.json or metrics.json or records.jsonl)\n")


# ---------------------------------------------------------------- in Chromium


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no chromium binary (apt-get install -y chromium)")


def _browser(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=60)


def _dom(tmp_path: Path, page: Path, hash_: str = "") -> str:
    proc = _browser(tmp_path, "--dump-dom", page.as_uri() + hash_)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _visible(dom: str) -> int:
    shown = int(re.search(r'<body[^>]* data-visible-rows="(\d+)"', dom).group(1))
    assert shown == dom.count('data-visible="1"')  # the counter says what the rows say
    return shown


def test_chromium_builds_the_rows_and_the_chart_and_the_filters_change_the_visible_rows(runs, tmp_path):
    records = _records(runs["answered"])
    assert len(records) == 10
    page = write_report([runs["answered"]], tmp_path / "answered.html")
    dom = _dom(tmp_path, page)
    assert len(re.findall(r'<tr class="q-row"', dom)) == 10  # built by the page's JS from the embedded JSON
    summary = json.loads((runs["answered"] / "metrics.json").read_text())["summary"]
    assert len(re.findall(r'<rect class="bar"', dom)) == len(summary)  # one bar per category, one series
    assert "llm_judge per category" in dom  # the headline of an answered LoCoMo run
    assert _visible(dom) == 10

    temporal = sum(r["category"] == "temporal" for r in records)
    assert 0 < temporal < 10
    assert _visible(_dom(tmp_path, page, "#category=temporal")) == temporal
    missed = sum(r["metrics"]["recall_any@10"] == 0 for r in records)
    assert 0 < missed < 10
    assert _visible(_dom(tmp_path, page, "#k=10&hit=miss")) == missed
    correct = sum(r["judge"][0]["score"] == 1 for r in records)
    assert correct == sum("Caroline" in r["question"] for r in records) and 0 < correct < 10
    assert _visible(_dom(tmp_path, page, "#grade=correct")) == correct
    both = sum(r["category"] == "temporal" and r["judge"][0]["score"] == 0 for r in records)
    assert _visible(_dom(tmp_path, page, "#category=temporal&grade=wrong")) == both
    # the answer reaches the page as text, never as markup
    assert "<b>7 May 2023</b>" not in dom


def test_chromium_opens_a_questions_detail_with_gold_ranks_leg_ranks_answer_and_explain(runs, tmp_path):
    def explain(record):
        record["explain"] = {"gold_ranks": {g: {"lexical": 7} for g in record["gold"]}}
        return record

    folder = _copy_run(runs["answered"], tmp_path / "explained", edit_records=explain)
    record = next(r for r in _records(folder) if r["metrics"]["recall_any@10"] == 1)
    rank = next(i for i, h in enumerate(record["hits"], start=1) if h["doc_id"] in record["gold"])
    first = record["hits"][0]
    page = write_report([folder], tmp_path / "detail.html")
    closed = _dom(tmp_path, page)
    assert "<b>gold ids: </b>" not in closed  # details are built when opened
    dom = _dom(tmp_path, page, f"#open={record['qid']}")
    assert dom.count("<b>gold ids: </b>") == 1
    assert f"{record['gold'][0]} (rank {rank})" in dom
    legs = " · ".join(f"{leg} #{r + 1}" for leg, r in sorted(first["leg_ranks"].items()))  # 1-based, as explain
    assert f"<td>{first['doc_id']}</td>" in dom and f"<td>{legs}</td>" in dom
    assert "She went on &lt;b&gt;7 May 2023&lt;/b&gt; &amp; came back." in dom  # the answer, as text
    assert '"gold_ranks"' in dom and '"lexical": 7' in dom  # the explain field, shown when a record has one


def test_chromium_shows_markup_in_the_records_as_text(runs, tmp_path):
    page = write_report([_hostile_run(runs, tmp_path / "hostile")], tmp_path / "hostile.html")
    dom = _dom(tmp_path, page)
    assert "<img" not in dom and "<i>" not in dom
    assert dom.count("&lt;img src=x onerror=\"alert(1)\"&gt;&lt;/script&gt;&lt;!--") == 10  # each question, as text
    assert len(re.findall(r'<tr class="q-row"', dom)) == 10  # and the page's JS still ran to the end


def test_chromium_shows_two_runs_side_by_side_with_the_k_sweep(runs, tmp_path):
    page = write_report([runs["k20"], runs["k10"]], tmp_path / "sweep.html")
    dom = _dom(tmp_path, page)
    assert 'id="k-sweep"' in dom
    sweep = dom[dom.index('id="k-sweep"'):]
    line = re.search(r'<polyline class="series"[^>]* points="([^"]+)"', sweep).group(1)
    assert len(line.split()) == 2  # one point per run, in k order
    assert ">k=10<" in dom and ">k=20<" in dom  # the series are named by what tells them apart
    assert len(re.findall(r'<tr class="q-row"', dom)) == 20
    assert _visible(_dom(tmp_path, page, "#run=1")) == 10


def test_chromium_screenshot_is_a_real_picture(runs, tmp_path):
    from PIL import Image

    page = write_report([runs["k10"], runs["k20"]], tmp_path / "shot.html")
    shot = tmp_path / "report.png"
    proc = _browser(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.stat().st_size > 10_000
    with Image.open(shot) as image:
        assert image.size == (1280, 2000)
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 20  # text, bars in two colours, grid: not one flat colour
    rgb = {colour for _, colour in colours}
    assert (31, 119, 180) in rgb and (255, 127, 14) in rgb  # the two series' bars were painted


def _table_rows(dom: str, table_class: str) -> tuple[list[str], list[list[str]]]:
    """The header and the body rows (cell texts) of the first ``<table class="...">`` of a page."""
    table = re.search(rf'<table class="{table_class}">(.*?)</table>', dom, re.S).group(1)
    header = re.findall(r"<th>(.*?)</th>", table)
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])]
    return header, rows


def test_chromium_shows_each_summary_cells_95_interval_as_the_markdown_tables_do(runs, tmp_path):
    stats = pytest.importorskip("scipy.stats")
    import numpy as np

    folder = runs["answered"]
    dom = _dom(tmp_path, write_report([folder], tmp_path / "intervals.html"))
    summary = json.loads((folder / "metrics.json").read_text())["summary"]
    header, rows = _table_rows(dom, "summary")
    assert header[:4] == ["category", "run", "n", "llm_judge"] and "recall_any@10" in header
    spans, shown = TableIntervals(), 0
    for cat, _label, _n, *cells in rows:
        for metric, cell in zip(header[3:], cells):
            # the markdown tables' own interval text (harness/reports/intervals.py) for the same records
            bounds = spans.bounds(str(folder), cat, metric)
            assert cell == fmt_value(summary[cat][metric]) + bounds
            shown += bool(bounds)
    assert shown == len(rows) * len(header[3:])  # every cell has one
    assert f"{RESAMPLES:,} resamples, seed {DEFAULT_SEED}" in dom and "95% percentile bootstrap" in dom

    # and it is scipy's percentile bootstrap: the 10 questions share one conversation, so the unit is the question
    records = _records(folder)
    assert len({r["episode"] for r in records}) == 1
    recall = np.array([r["metrics"]["recall_any@10"] for r in records if r["category"] == "temporal"])
    theirs = stats.bootstrap((recall,), np.mean, method="percentile", n_resamples=RESAMPLES,
                             rng=np.random.default_rng(DEFAULT_SEED), vectorized=True).confidence_interval
    cell = next(cells[header.index("recall_any@10") - 3] for cat, _l, _n, *cells in rows if cat == "temporal")
    assert cell.endswith(f" [{theirs.low:.3f}, {theirs.high:.3f}]")


def test_chromium_shows_where_each_miss_came_from_per_category_and_in_a_questions_detail(runs, tmp_path):
    folder = runs["answered"]
    records = _records(folder)
    page = write_report([folder], tmp_path / "misses.html")
    dom = _dom(tmp_path, page)
    header, rows = _table_rows(dom, "summary misses")
    assert header == ["category", "run", "n", *OUTCOMES]
    frame = miss_table([("bm25", records)], "llm_judge").set_index("category")
    by_category = {row[0]: row for row in rows}
    assert set(by_category) == set(frame.index)
    for cat, row in by_category.items():
        # the counts the records' own attribution gives (qa.py writes it as each record's "miss")
        kept = [r for r in records if cat == "overall" or r["category"] == cat]
        assert int(row[2]) == len(kept) == frame.loc[cat, "n"]
        for outcome, cell in zip(OUTCOMES, row[3:]):
            count = sum(r["miss"] == outcome for r in kept)
            assert cell == f"{count} ({100 * count / len(kept):.1f}%)"
    assert sum(r["miss"] == "right" for r in records) == sum("Caroline" in r["question"] for r in records)
    assert any(r["miss"] not in ("right", None) for r in records)

    # a missed question's detail says which stage lost it, in the words scripts/explain.py prints
    lost = next(r for r in records if r["miss"] != "right")
    line = miss_line(lost["miss"])
    opened = _dom(tmp_path, page, f"#open={lost['qid']}")
    assert f'<p class="miss">{line}</p>' in opened and dom.count('<p class="miss">') == 0
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "explain.py"), str(folder), lost["qid"]],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert line in proc.stdout.splitlines()


def test_a_retrieval_only_report_has_no_miss_split(runs, tmp_path):
    page = render_report([load_run(runs["k10"])])
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1))
    assert 'id="misses"' not in page and [row["miss"] for row in data["rows"]] == [None] * 10
    assert "95% percentile bootstrap" in page  # its retrieval cells still have their intervals
