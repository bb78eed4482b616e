"""The extension points, pinned by behaviour: a benchmark is its module plus its dataset config
(found through ``--config-dir`` and a dotted module path, nothing of ours edited), and a metric
is one registry entry that then reaches the summaries and the tables' number format."""

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.config import DatasetSpec, RunConfig, StoreSpec, SystemSpec
from harness.reports.format import fmt
from harness.runner import run
from judges.metrics.registry import retrieval_summary_keys
from judges.metrics.registry import Metric, lookup, register, unregister
from memory_protocol import ConfigError
from tests.fake_openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent

TOY_MODULE = '''
"""A toy benchmark: two notes, two questions, judged CORRECT/WRONG."""
from harness.benchmarks import AnswerRule, Benchmark
from judges.graders.locomo import LoCoMoJudge
from judges.templates import load_template
from loaders import DatasetLoader
from memory_protocol import Document, Episode, Question


def load_toy(root, size: int = 2):
    documents = (
        Document("n1", "The Atlas launch moved to Friday after the vendor slipped."),
        Document("n2", "Lunch on Thursday is at noon in the big room."),
        Document("n3", "The vendor for Atlas is Northwind."),
    )
    questions = (
        Question("t1", "When is the Atlas launch?", "easy", "Friday", evidence_ids=("n1",)),
        Question("t2", "Who is the Atlas vendor?", "hard", "Northwind", evidence_ids=("n3",)),
    )
    yield Episode("toy", documents, questions[:size])


BENCHMARK = Benchmark(
    name="toy",
    label="Toy",
    loader=DatasetLoader("toy", load_toy, ("easy", "hard"), keep_empty=True),
    judge=lambda prompt_file: LoCoMoJudge(template=load_template("locomo_judge", prompt_file)),
    headline="llm_judge",
    answer=AnswerRule(question_date=False, empty_context="(nothing found)"),
    extra_metrics=("f1",),
    exclude_from_overall=("hard",),
)
'''

TOY_CONFIG = '''
name: toy
benchmark: toy_bench
data_dir: {data_dir}
limit: null
categories: null
options: {{}}
context_budget: null
answer_max_tokens: 64
ks: [1, 2]
mempp: {{k: 3}}
'''


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A folder holding the toy benchmark's module and a config dir with its dataset config."""
    (tmp_path / "toy_bench.py").write_text(textwrap.dedent(TOY_MODULE), encoding="utf-8")
    (tmp_path / "conf" / "dataset").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "conf" / "dataset" / "toy.yaml").write_text(TOY_CONFIG.format(data_dir=tmp_path / "data"), encoding="utf-8")
    return tmp_path


def toy_config(toy: Path) -> RunConfig:
    return RunConfig(
        dataset=DatasetSpec(name="toy", benchmark="toy_bench", data_dir=str(toy / "data"), ks=[1, 2]),
        system=SystemSpec(name="bm25", kind="bm25", k=3, params={"respect_as_of": False}),
        store=StoreSpec(cache_dir=str(toy / "cache"), results_dir=str(toy / "runs")),
        progress=False,
    )


def test_a_benchmark_from_another_package_runs_through_the_runner(toy, monkeypatch):
    monkeypatch.syspath_prepend(str(toy))
    result = run(toy_config(toy))
    assert result.table.startswith("bm25 on toy: retrieval (k=3)")
    summary = result.summary
    # "hard" is kept out of overall because the toy benchmark says so; overall (all) holds it.
    assert list(summary.index) == ["easy", "hard", "overall", "overall (all)"]
    assert summary.loc["overall", "n"] == 1 and summary.loc["overall (all)", "n"] == 2
    assert summary.loc["easy", "recall_any@1"] == 1.0
    assert "session_recall_any@1" not in summary.columns  # no official scorer: no session families


def test_a_toy_benchmark_and_config_run_from_the_command_line_and_print_the_headline(toy):
    def reply(body: dict) -> str:
        return "{\"label\": \"CORRECT\"}"  # the answer and the judge's verdict alike

    server = FakeOpenAIServer(answer_fn=reply).start()
    try:
        overrides = [
            "dataset=toy", "system=bm25", "progress=false",
            f"store.cache_dir={toy / 'cache'}", f"store.results_dir={toy / 'runs'}",
            "answerer=openai_compatible", "answerer.model=fake", f"answerer.base_url={server.base_url}",
            "answerer.max_retries=0", "judge=openai_compatible", "judge.model=fake-judge",
            f"judge.base_url={server.base_url}", "judge.max_retries=0", "judge.api_key_env=null",
        ]
        done = subprocess.run(
            [sys.executable, "run.py", "--config-dir", str(toy / "conf"), *overrides],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
            env={**os.environ, "PYTHONPATH": f"{toy}:{ROOT}"},
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "bm25__openai_compatible on toy: answers by fake, judged 3x by fake-judge" in done.stdout
    header = next(line for line in done.stdout.splitlines() if line.startswith("| category"))
    assert "llm_judge" in header and "f1" in header  # its headline and its extra metric
    overall = next(line for line in done.stdout.splitlines() if line.startswith("| overall "))
    assert "100.000" in overall


def test_an_unknown_benchmark_module_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match="dataset.benchmark='no_such_module'"):
        DatasetSpec(name="toy", benchmark="no_such_module").describe()


@pytest.fixture
def toy_metric():
    metric = register(Metric(
        "gold_at_top", "gold in the top k (count)", per_k=True, decimals=2, higher_is_better=True,
        compute=lambda ranked, gold, k: float(len(set(ranked[:k]) & set(gold))) if gold else math.nan,
    ))
    yield metric
    unregister(metric.name)


def test_a_registered_metric_reaches_the_summary_and_the_table_format(toy, toy_metric, monkeypatch):
    monkeypatch.syspath_prepend(str(toy))
    keys = retrieval_summary_keys([1, 2], sessions=False)
    assert keys[:8] == ["recall_any@1", "recall_all@1", "ndcg@1", "gold_at_top@1",
                        "recall_any@2", "recall_all@2", "ndcg@2", "gold_at_top@2"]
    result = run(toy_config(toy))
    assert result.summary.loc["easy", "gold_at_top@2"] == 1.0
    assert result.records[0]["metrics"]["gold_at_top@1"] == 1.0
    assert lookup("gold_at_top@50") is toy_metric and fmt(0.5, "gold_at_top@50") == "0.50"
    with pytest.raises(ValueError, match="already registered"):
        register(toy_metric)


def test_builtin_metrics_resolve_their_derived_names():
    assert lookup("recall_any@10").name == "recall_any"
    assert lookup("score_std").name == lookup("score_paper").name == lookup("score_run2").name == "score"
    assert lookup("recall_any@all").per_k is False
    assert lookup("not_a_metric") is None
    assert fmt(71.25, "score") == "71.2" and fmt(0.5891, "in_budget_recall") == "0.589"


def test_the_printed_title_of_a_run_without_a_budget_shows_no_none(toy, monkeypatch, capsys):
    """Issue 24: a dataset with ``context_budget: null`` printed ``budget=None`` in the run's title;
    no budget means no cut, so the title leaves the setting out and nothing printed says None."""
    from harness.cli import execute

    monkeypatch.syspath_prepend(str(toy))
    raw = {"dataset": {"name": "toy", "benchmark": "toy_bench", "data_dir": str(toy / "data"), "ks": [1, 2],
                       "context_budget": None},
           "system": {"name": "bm25", "kind": "bm25", "k": 3, "respect_as_of": False},
           "store": {"cache_dir": str(toy / "cache"), "results_dir": str(toy / "runs")}, "progress": False}
    assert execute(raw) == 0
    printed = capsys.readouterr().out
    assert "bm25 on toy: retrieval (k=3)" in printed.splitlines()
    assert "None" not in printed, printed
