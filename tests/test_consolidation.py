"""Consolidation (paper Algorithm 2) on a scripted model: grouping over current rows only, a
classify call then a merge call only for a restatement, the 220 cl100k-token limit, and that
nothing is ever deleted."""

from datetime import datetime

import bpe_openai
import pytest

from memplusplus import Document, MemPPConfig
from memplusplus.consolidation import CLASSIFY_PROMPT, MAX_MERGED_TOKENS, MERGE_PROMPT, ConsolidatedMemPP, group_rows
from memplusplus.evidence import render
from tests.write_time_fakes import ScriptedLLM, TopicEncoder

CL100K = bpe_openai.get_encoding("cl100k_base")

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


def is_classify(user: str) -> bool:
    """The classify call's records carry their date and author ("Record 1 [2024-01-05] by ann"),
    the merge call's only their text ("Record 1:")."""
    return user.startswith("Record 1 [")


def two_step(label: object, merged: object = None):
    """A scripted model: ``label`` for the classify call, ``merged`` for the merge call."""
    return lambda user: label if is_classify(user) else merged


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
    memory, _ = build(two_step({"label": "restatement"}, "budget for Q3 is 10k, later 12k"))
    memory.ingest(docs())
    assert len(memory.store) == 5  # nothing deleted: 4 originals + 1 merged
    rows = {row.doc_id: row for row in memory.store.rows}
    merged = rows["merged:a1"]
    assert merged.active and not rows["a1"].active and not rows["a2"].active
    assert merged.text == "budget for Q3 is 10k, later 12k"
    assert merged.date == datetime(2024, 1, 5)  # the group's earliest date
    assert merged.author == "ann, cat"
    hits = memory.retrieve("budget Q3")
    assert "a1" not in {h.doc_id for h in hits} and "a2" not in {h.doc_id for h in hits}
    merged_hit = next(h for h in hits if h.doc_id == "merged:a1")
    assert merged_hit.source_ids == ("a1", "a2")
    assert render([merged_hit]).text.startswith("[2024-01-05] ann, cat\nbudget for Q3")


def test_a_restatement_costs_a_classify_call_then_a_separate_merge_call():
    memory, llm = build(two_step({"label": "restatement"}, "budget for Q3 is 10k"))
    memory.ingest(docs())
    assert [call[0]["content"] for call in llm.calls] == [CLASSIFY_PROMPT, MERGE_PROMPT]
    classify_user, merge_user = (call[-1]["content"] for call in llm.calls)
    assert classify_user == "Record 1 [2024-01-05T00:00:00] by ann:\nbudget for Q3 is 10k\n\n" \
                            "Record 2 [2024-03-01T00:00:00] by cat:\nbudget for Q3 is 12k"
    assert merge_user == "Record 1:\nbudget for Q3 is 10k\n\nRecord 2:\nbudget for Q3 is 12k"
    assert llm.max_tokens == [None, MAX_MERGED_TOKENS]  # only the merge reply is capped, at 220
    assert memory.reports[-1].calls == 2 and memory.reports[-1].groups == 1


@pytest.mark.parametrize("label", ["conflict", "distinct"])
def test_conflict_and_distinct_cost_only_the_classify_call(label):
    memory, llm = build(two_step({"label": label}, "never asked for"))
    memory.ingest(docs())
    assert [call[0]["content"] for call in llm.calls] == [CLASSIFY_PROMPT]
    assert "never asked for" not in {row.text for row in memory.store.rows}


@pytest.mark.parametrize("merged", [None, "", "   "])
def test_a_failed_or_empty_merge_changes_nothing(merged):
    memory, llm = build(two_step({"label": "restatement"}, merged))
    memory.ingest(docs())
    assert len(llm.calls) == 2
    assert len(memory.store) == 4
    assert all(row.active and row.superseded_by is None for row in memory.store.rows)
    assert memory.reports[-1].merge_failures == 1


def test_the_merged_text_is_cut_at_220_cl100k_tokens_not_220_words():
    at_limit = "budget" + " apple" * 219  # 220 cl100k tokens, 220 words
    over = "budget" + " x7" * 110  # 221 cl100k tokens, 111 words
    assert len(CL100K.encode_ordinary(at_limit)) == 220 and len(CL100K.encode_ordinary(over)) == 221
    memory, _ = build(two_step({"label": "restatement"}, at_limit))
    memory.ingest(docs())
    assert memory.store.rows[-1].text == at_limit
    memory, _ = build(two_step({"label": "restatement"}, over))
    memory.ingest(docs())
    kept = memory.store.rows[-1].text
    assert len(CL100K.encode_ordinary(kept)) == 220 and kept == over[:-1]  # the 221st token ("7") is cut


def test_a_superseded_or_archived_row_is_never_grouped_again():
    memory, llm = build(two_step({"label": "conflict"}))
    memory.ingest(docs())  # a1 is superseded by a2 (both stay active)
    memory.ingest([Document("a3", "budget for Q3 is 15k", "eve", datetime(2024, 4, 1))])
    assert memory.reports[-1].groups == 1 and memory.reports[-1].superseded == ["a2"]  # a1 was not grouped
    second_pass = llm.calls[-1][-1]["content"]
    assert "is 12k" in second_pass and "is 15k" in second_pass and "is 10k" not in second_pass

    memory, llm = build(two_step({"label": "restatement"}, "budget for Q3: 10k or 12k"))
    memory.ingest(docs())  # a1 and a2 archived, merged:a1 added
    memory.ingest([Document("a3", "budget for Q3 is 15k", "eve", datetime(2024, 4, 1))])
    assert memory.reports[-1].archived == ["merged:a1", "a3"]  # a1 and a2 were not grouped
    classify_user = llm.calls[-2][-1]["content"]
    assert "10k or 12k" in classify_user and "is 15k" in classify_user and "is 10k" not in classify_user


@pytest.mark.parametrize("reply", [None, "not json at all", {"label": "maybe"}, {"label": "distinct"}])
def test_a_failed_unparsable_or_distinct_classify_call_changes_nothing(reply):
    memory, llm = build(two_step(reply, "never asked for"))
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
