"""The extension points, pinned by behaviour: a benchmark is its module plus its dataset config
(found through ``--config-dir`` and a dotted module path, nothing of ours edited), and a metric
is one registry entry that then reaches the summaries and the tables' number format."""

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.compose import compose_config
from harness.config import DatasetSpec, RunConfig, StoreSpec, SystemSpec
from harness.reports.format import fmt
from harness.runner import run
from judges.metrics.ranking import retrieval_summary_keys
from judges.metrics.ranking import Metric, lookup, register, unregister
from memory_protocol import ConfigError
from tests.fake_openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent

EXAMPLES = ROOT / "examples" / "conf"  # the README's toy benchmark: examples/toy_benchmark.py, conf/dataset/toy.yaml
TOY = "examples.toy_benchmark"


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A folder for the toy runs' caches and results."""
    return tmp_path


def toy_config(toy: Path) -> RunConfig:
    return RunConfig(
        dataset=DatasetSpec(name="toy", benchmark=TOY, ks=[1, 2]),
        system=SystemSpec(name="bm25", kind="bm25", k=3, params={"respect_as_of": False}),
        store=StoreSpec(cache_dir=str(toy / "cache"), results_dir=str(toy / "runs")),
        progress=False,
    )


def test_a_benchmark_from_another_package_runs_through_the_runner(toy):
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
            [sys.executable, "run.py", "--config-dir", str(EXAMPLES), *overrides],
            cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)},
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


def test_a_registered_metric_reaches_the_summary_and_the_table_format(toy, toy_metric):
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


def test_the_printed_title_of_a_run_without_a_budget_shows_no_none(toy, capsys):
    """Issue 24: a dataset with ``context_budget: null`` printed ``budget=None`` in the run's title;
    no budget means no cut, so the title leaves the setting out and nothing printed says None."""
    from harness.cli import execute

    raw = {"dataset": {"name": "toy", "benchmark": TOY, "ks": [1, 2], "context_budget": None},
           "system": {"name": "bm25", "kind": "bm25", "k": 3, "respect_as_of": False},
           "store": {"cache_dir": str(toy / "cache"), "results_dir": str(toy / "runs")}, "progress": False}
    assert execute(raw) == 0
    printed = capsys.readouterr().out
    assert "bm25 on toy: retrieval (k=3)" in printed.splitlines()
    assert "None" not in printed, printed


def test_the_toy_dataset_config_is_four_keys_at_most_and_every_system_composes_with_it():
    """Issue 33: a dataset config is its name, benchmark and ks; Mem++'s per-dataset settings live
    with its system configs, so a dataset without them runs every system on their defaults."""
    assert len(yaml.safe_load((EXAMPLES / "dataset" / "toy.yaml").read_text())) <= 4
    for path in sorted((ROOT / "configs" / "system").glob("*.yaml")):
        raw = compose_config([f"hydra.searchpath=[file://{EXAMPLES}]", "dataset=toy", f"system={path.stem}"])
        config = RunConfig.from_dict(raw)
        assert config.dataset.benchmark == TOY and config.dataset.ks == [1, 2]
        if path.stem == "mempp":
            assert config.system.params["weights"] == {"lexical": 1.0, "tag": 1.0, "vector": 4.0}


RETRIEVAL_ONLY = """
from dataclasses import replace
from examples.toy_benchmark import BENCHMARK as TOY
BENCHMARK = replace(TOY, judge=None, headline=None)
"""


def test_a_retrieval_only_benchmark_runs_without_a_judge_and_refuses_an_answerer(toy, monkeypatch):
    (toy / "toy_retrieval.py").write_text(RETRIEVAL_ONLY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(toy))
    raw = {"dataset": {"name": "toy", "benchmark": "toy_retrieval", "ks": [1, 2]},
           "system": {"name": "bm25", "kind": "bm25", "k": 3}, "judge": {"name": "broken", "model": "???"},
           "store": {"cache_dir": str(toy / "cache"), "results_dir": str(toy / "runs")}, "progress": False}
    config = RunConfig.from_dict(raw)  # the judge section is not read, so not checked
    assert config.judge is None and run(config).summary.loc["easy", "recall_any@1"] == 1.0
    with pytest.raises(ConfigError, match="dataset toy: its benchmark has no judge .*answerer=none"):
        RunConfig.from_dict({**raw, "answerer": {"name": "fake", "model": "fake"}})
