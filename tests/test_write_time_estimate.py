"""A dry run of the write-time systems counts their calls and sends nothing (paper §3.5: Mem^g++
spends 2 calls per document and 1 per question on OrgMemBench)."""

from __future__ import annotations

import pytest

from harness.cli import _print_estimate
from harness.compose import compose_config
from harness.config import RunConfig
from harness.runner import run
from harness.sweep_summary import JobPointer

QUESTIONS = 3
DOCUMENTS = 443  # OrgMemBench medium: every artefact is ingested whatever the question limit


def dry_run(tmp_path, monkeypatch, *overrides: str):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base = [f"dataset.limit={QUESTIONS}", "answerer=gpt-4.1-mini", "estimate=true", "progress=false",
            f"store.cache_dir={tmp_path}/cache", f"store.results_dir={tmp_path}/runs"]
    return run(RunConfig.from_dict(compose_config([*base, *overrides])))


@pytest.mark.parametrize(
    ("system", "write_calls"),
    [
        ("mempp_g", 2 * DOCUMENTS + QUESTIONS),
        ("mempp_fact_index", DOCUMENTS),
        ("mempp_consolidated", 2 * (DOCUMENTS // 2)),  # classify + merge per group of 2 (Algorithm 2)
    ],
)
def test_write_time_calls_are_counted_before_anything_is_sent(tmp_path, monkeypatch, system, write_calls):
    result = dry_run(tmp_path, monkeypatch, f"system={system}")
    write, answers, grades = result.estimates
    assert (write.system, write.cost.model, write.cost.calls) == (system, "gpt-4o-mini", write_calls)
    assert (answers.calls, grades.calls) == (QUESTIONS, 3 * QUESTIONS)
    assert write.usd is not None and write.usd > 0 and "write-time calls of" in write.format()
    assert not (tmp_path / "runs").exists() and result.records == []  # nothing ingested, retrieved or written
    job = JobPointer([f"system={system}"])  # a sweep's total counts the write-time calls its dollars include
    _print_estimate(result, RunConfig.from_dict(compose_config([f"system={system}"])), job)
    assert job.estimate_calls == write_calls + QUESTIONS + 3 * QUESTIONS


def test_mempp_makes_no_write_time_call(tmp_path, monkeypatch):
    result = dry_run(tmp_path, monkeypatch, "system=mempp")
    assert [e.model for e in result.estimates] == ["gpt-4.1-mini", "gpt-4o-mini"]


def test_before_retrieval_answers_are_priced_over_the_episodes_own_text(tmp_path):
    from loaders import load_dataset
    from model_clients.token_count import TokenCounter
    from harness.estimate import approximate_context, approximate_context_chars
    from harness.systems import entry_for

    config = RunConfig.from_dict(compose_config([f"dataset.limit={QUESTIONS}", "answerer=gpt-4.1-mini",
                                                 f"store.cache_dir={tmp_path}/cache"]))
    episode = load_dataset("orgmem", limit=QUESTIONS)[0]
    parts = (entry_for(config.system), config.system, config.dataset.context_budget, episode)
    context = approximate_context(*parts)
    assert len(context) == approximate_context_chars(*parts) == 40_000  # k = 50 documents, cut at the budget
    assert context.startswith(episode.documents[0].text)
    counter = TokenCounter("gpt-4.1-mini")
    # Real text is about twice as dense in tokens as a filler of one repeated letter.
    assert counter.count_text(context) > 1.5 * counter.count_text("x" * len(context))
