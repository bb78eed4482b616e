"""rescore on the published per-question files: their own metadata and SOURCE.md's figures come out
of our aggregation, each with an interval; a file that does not match our questions is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.rescore import METRIC, metadata_check, rescore
from harness.rescore_report import rescore_file
from harness.run_data import CliError
from loaders.published import load_errata
from loaders.locomo import CATEGORY_NAMES, load_locomo
from loaders.published import read_published
from tests.data_paths import needs_data, require_data

pytestmark = needs_data("locomo/locomo10.json", "published/audit/gpt-4o-mini-memos.eval_results.json")
AUDIT = "published/audit/gpt-4o-mini-memos.eval_results.json"


@pytest.fixture(scope="module")
def episodes():
    return list(load_locomo(require_data("locomo/locomo10.json").parent.parent))


@pytest.fixture(scope="module")
def audited(episodes):
    path = require_data(AUDIT)
    errata = load_errata("locomo-audit", file=require_data("published/audit/errors.json"))
    return rescore(read_published(path), episodes, errata, "locomo-audit", n_resamples=2000), json.loads(path.read_text())


def test_reproduces_the_files_metadata(audited) -> None:
    result, data = audited
    meta = data["metadata"]
    overall = result.summary.loc["overall"]
    assert overall[METRIC] == pytest.approx(100 * meta["mean_accuracy"], abs=0.01)
    assert overall[f"{METRIC}_std"] == pytest.approx(100 * meta["std_accuracy"], abs=0.01)
    for interval, published in zip(result.run_intervals, meta["run_scores"], strict=True):
        assert interval.estimate == pytest.approx(100 * published, abs=0.01)
        assert interval.low < interval.estimate < interval.high
    for key, figures in meta["category_accuracies"].items():
        name = CATEGORY_NAMES[int(key)]
        assert result.summary.loc[name, METRIC] == pytest.approx(100 * figures["mean"], abs=0.01)
        assert result.summary.loc[name, "n"] == figures["total"]
        assert result.intervals[name].low < result.intervals[name].estimate < result.intervals[name].high
    assert result.majority.estimate == pytest.approx(100 * meta["majority_vote_accuracy"], abs=0.01)
    assert metadata_check(result) == []
    assert "conversations" in result.intervals["overall"].method and result.intervals["overall"].clusters == 10


def test_errata_ceiling_is_93_57(audited) -> None:
    # SOURCE.md: 156 entries, 99 wrong gold answers; the sound-gold ceiling is 93.57 overall.
    result, _ = audited
    assert result.ceilings["overall"] == pytest.approx(93.57, abs=0.01)
    assert result.wrong_golds["overall"] == 99
    assert sum(1 for r in result.records if "erratum" in r) == 156
    sound = result.sound_intervals["overall"]
    assert sound.n == 1540 - 99 and sound.low < sound.estimate < sound.high


def test_leniency_reference_figures_from_source_md(episodes) -> None:
    # AP_BASELINE_REPORT.md as SOURCE.md quotes it: v1 10.61 +- 0.13, v2 62.81 +- 0.24.
    for name, mean, std in (("ap_v1", 10.61, 0.13), ("ap_v2", 62.81, 0.24)):
        result = rescore(read_published(require_data(f"published/audit/{name}.scored.json")), episodes, n_resamples=200)
        assert result.summary.loc["overall", METRIC] == pytest.approx(mean, abs=0.01)
        assert result.summary.loc["overall", f"{METRIC}_std"] == pytest.approx(std, abs=0.01)


@pytest.mark.parametrize("relative,fmt", [("mem0/results_81a0fba.json", "mem0"), ("zep/zep_locomo_grades.json", "zep")])
def test_other_formats_map_one_to_one(episodes, relative: str, fmt: str) -> None:
    path = require_data(f"published/{relative}")
    run = read_published(path)
    assert run.format == fmt
    result = rescore(run, episodes, n_resamples=200)
    assert len({r["qid"] for r in result.records}) == 1540
    data = json.loads(path.read_text())
    key = "llm_score" if fmt == "mem0" else "grade"
    expected = 100 * sum(bool(x[key]) for items in data.values() for x in items) / 1540
    assert result.summary.loc["overall", METRIC] == pytest.approx(expected)


def test_a_file_that_does_not_match_is_refused_in_one_line(tmp_path: Path) -> None:
    data = json.loads(require_data(AUDIT).read_text())
    first = next(iter(data["detailed_results"].values()))
    first[0]["golden_answer"] = "8 May 2023"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(CliError) as caught:
        rescore_file(bad, {"resamples": "10"})
    message = str(caught.value)
    assert "\n" not in message and "1 of 1540 questions match none" in message and "8 May 2023" in message


def test_report_lines_fit_120_characters() -> None:
    lines = rescore_file(require_data(AUDIT), {"dataset.errata": "locomo-audit", "resamples": "200"})
    assert all(len(line) <= 120 for line in lines)
    assert any("agrees to 0.01" in line for line in lines)
    assert any("93.57" in line for line in lines)
