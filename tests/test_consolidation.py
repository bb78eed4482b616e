"""Consolidation (paper Algorithm 2) on a scripted model: grouping, the three labels, and that
nothing is ever deleted."""

from datetime import datetime

import pytest

from memplusplus import Document, MemPPConfig
from memplusplus.consolidation import MAX_MERGED_TOKENS, ConsolidatedMemPP, group_rows
from memplusplus.evidence import render
from tests.write_time_fakes import ScriptedLLM, TopicEncoder

CONFIG = MemPPConfig(k=10, recency_reserve=0)


def docs() -> list[Document]:
    return [
        Document("a1", "budget for Q3 is 10k", "ann", datetime(2024, 1, 5)),
        Document("b1", "office moves to Leeds", "bob", datetime(2024, 1, 6)),
        Document("a2", "budget for Q3 is 12k", "cat", datetime(2024, 3, 1)),
        Document("c1", "launch slips to May", "dan", datetime(2024, 2, 1)),
    ]


def build(reply, tau: float = 0.85) -> tuple[ConsolidatedMemPP, ScriptedLLM]:
    llm = ScriptedLLM(reply)
    return ConsolidatedMemPP(CONFIG, llm, tau=tau, encoder=TopicEncoder()), llm


def test_groups_join_the_first_group_whose_first_row_is_close_enough():
    memory, llm = build(lambda _: {"label": "distinct"})
    memory.ingest(docs())
    assert group_rows(memory, 0.85) == [[0, 2], [1], [3]]
    assert len(llm.calls) == 1  # singletons need no call


def test_conflict_supersedes_the_older_row_and_both_stay_retrievable():
    memory, _ = build(lambda _: {"label": "conflict"})
    memory.ingest(docs())
    rows = {row.doc_id: row for row in memory.store.rows}
    assert rows["a1"].superseded_by == "a2" and rows["a2"].superseded_by is None
    assert rows["a1"].active and rows["a2"].active
    assert len(memory.store) == 4
    assert {"a1", "a2"} <= {hit.doc_id for hit in memory.retrieve("budget Q3")}


def test_restatement_adds_one_merged_row_and_archives_the_originals():
    long_text = "budget " + " ".join(f"w{i}" for i in range(400))
    memory, _ = build(lambda _: {"label": "restatement", "merged": long_text})
    memory.ingest(docs())
    assert len(memory.store) == 5  # nothing deleted: 4 originals + 1 merged
    rows = {row.doc_id: row for row in memory.store.rows}
    merged = rows["merged:a1"]
    assert merged.active and not rows["a1"].active and not rows["a2"].active
    assert merged.date == datetime(2024, 1, 5)  # the group's earliest date
    assert merged.author == "ann, cat"
    assert len(merged.text.split()) == MAX_MERGED_TOKENS
    hits = memory.retrieve("budget Q3")
    assert "a1" not in {h.doc_id for h in hits} and "a2" not in {h.doc_id for h in hits}
    merged_hit = next(h for h in hits if h.doc_id == "merged:a1")
    assert merged_hit.source_ids == ("a1", "a2")
    assert render([merged_hit]).text.startswith("[2024-01-05] ann, cat\nbudget w0")


@pytest.mark.parametrize("reply", [None, "not json at all", {"label": "maybe"}, {"label": "restatement"}, {"label": "distinct"}])
def test_a_failed_unparsable_or_distinct_call_changes_nothing(reply):
    memory, llm = build(lambda _: reply)
    memory.ingest(docs())
    assert len(llm.calls) == 1
    assert len(memory.store) == 4
    assert all(row.active and row.superseded_by is None for row in memory.store.rows)
    assert memory.reports[-1].labels["distinct" if reply == {"label": "distinct"} else "failed"] == 1


def test_conflict_winner_is_the_latest_dated_not_the_last_ingested():
    memory, _ = build(lambda _: {"label": "conflict"})
    memory.ingest([
        Document("new", "budget is 12k", "ann", datetime(2024, 5, 1)),
        Document("old", "budget is 10k", "ann", datetime(2024, 1, 1)),
    ])
    rows = {row.doc_id: row for row in memory.store.rows}
    assert rows["old"].superseded_by == "new" and rows["new"].superseded_by is None


def test_tau_is_checked():
    with pytest.raises(ValueError):
        build(lambda _: None, tau=0.0)
    with pytest.raises(ValueError):
        build(lambda _: None, tau=1.5)
