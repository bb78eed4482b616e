"""``in_budget_gold_chars``: the share of the gold artefacts' characters read within the budget.

Every expected value is worked out by hand in the comment beside it. The header of an OrgMemBench
style row dated 2024-01-02 with no author is ``[2024-01-02] unknown`` plus a newline: 21 characters.
"""

from __future__ import annotations

import math
from datetime import datetime

import pytest

from harness.records import block_layouts, episode_metrics
from judges.metrics.budget_chars import BlockLayout, chars_inside, document_spans, in_budget_gold_chars
from judges.metrics.retrieval import in_budget_recall
from memory_protocol import Hit, Question
from memplusplus.evidence import render

DAY = datetime(2024, 1, 2)
HEADER = len("[2024-01-02] unknown\n")  # 21


def row_hit(doc_id: str, text: str) -> Hit:
    return Hit(doc_id, text, DAY, None, 1.0)


def test_partial_block_at_the_budget_edge_counts_only_the_characters_read():
    # a: 100 characters at [20, 120); a budget of 70 reads 50 of them.
    spans = {"a": [(20, 120)]}
    assert in_budget_gold_chars({"a"}, spans, {"a": 100}, 70) == pytest.approx(0.5)
    assert in_budget_gold_chars({"a"}, spans, {"a": 100}, 20) == 0.0  # nothing of a's text read
    assert in_budget_gold_chars({"a"}, spans, {"a": 100}, None) == 1.0


def test_duplicate_gold_ids_count_once():
    # a (100 read of 100) and b (0 of 300), a named twice: 100 / 400.
    spans = {"a": [(0, 100)]}
    lengths = {"a": 100, "b": 300}
    assert in_budget_gold_chars(["a", "a", "b"], spans, lengths, 1000) == pytest.approx(0.25)


def test_gold_never_rendered_counts_zero_but_stays_in_the_denominator():
    # b is 300 characters and was not retrieved: a's 100 of 400 are read.
    assert in_budget_gold_chars({"a", "b"}, {"a": [(5, 105)]}, {"a": 100, "b": 300}, None) == pytest.approx(0.25)
    assert in_budget_gold_chars({"b"}, {}, {"b": 300}, None) == 0.0


def test_a_document_rendered_twice_counts_its_characters_once():
    # Two overlapping spans [0, 80) and [40, 120) cover 120 characters; capped at the text's 100.
    assert chars_inside([(0, 80), (40, 120)], None) == 120
    assert in_budget_gold_chars({"a"}, {"a": [(0, 80), (40, 120)]}, {"a": 100}, None) == 1.0
    # The same place listed twice: 60 characters, not 120.
    assert in_budget_gold_chars({"a"}, {"a": [(0, 60), (0, 60)]}, {"a": 100}, None) == pytest.approx(0.6)


def test_no_gold_or_no_text_is_nan_and_bad_input_is_refused():
    assert math.isnan(in_budget_gold_chars(set(), {}, {}, 10))
    assert math.isnan(in_budget_gold_chars({"a"}, {}, {"a": 0}, 10))
    with pytest.raises(ValueError, match="budget"):
        in_budget_gold_chars({"a"}, {}, {"a": 1}, -1)
    with pytest.raises(ValueError, match="no known text length"):
        in_budget_gold_chars({"z"}, {}, {"a": 1}, 10)


def test_chunk_layout_gives_each_document_the_text_up_to_the_next_one():
    # A chunk at offset 10, 50 long, holding a from 0 and b from 30: a [10, 40), b [40, 60).
    spans = document_spans([BlockLayout(10, 50, (("b", 30), ("a", 0)))])
    assert spans == {"a": [(10, 40)], "b": [(40, 60)]}


def test_rendered_rows_header_is_not_counted_and_the_cut_is_exact():
    # Blocks: a = header (21) + 1000 chars at [0, 1021); separator 2; b = header + 200 at [1023, 1244).
    hits = [row_hit("a", "x" * 1000), row_hit("b", "y" * 200)]
    spans = document_spans(block_layouts(hits))
    assert spans == {"a": [(HEADER, HEADER + 1000)], "b": [(1023 + HEADER, 1023 + HEADER + 200)]}
    assert len(render(hits).full_text) == 1023 + HEADER + 200
    # Budget 500 reads 479 of a's 1000 characters and nothing of b: 479 / 1200.
    assert in_budget_gold_chars({"a", "b"}, spans, {"a": 1000, "b": 200}, 500) == pytest.approx(479 / 1200)


def test_cutting_a_block_short_never_raises_the_metric():
    # Whole row: budget 500 reads 479 of 1000 characters. The same row cut to its first 300
    # characters (shown as a one-source chunk behind the same header) reads only 300.
    whole = [row_hit("a", "x" * 1000)]
    cut = [Hit("a", "[2024-01-02] unknown\n" + "x" * 300, None, None, 1.0, sources=(("a", HEADER),))]
    lengths = {"a": 1000}
    read_whole = in_budget_gold_chars({"a"}, document_spans(block_layouts(whole)), lengths, 500)
    read_cut = in_budget_gold_chars({"a"}, document_spans(block_layouts(cut)), lengths, 500)
    assert read_whole == pytest.approx(0.479)
    assert read_cut == pytest.approx(0.3)
    # in_budget_recall cannot tell the two apart: both blocks start inside the budget.
    assert in_budget_recall({"a"}, render(whole, 500).block_starts, 500) == 1.0
    assert in_budget_recall({"a"}, render(cut, 500).block_starts, 500) == 1.0


def test_episode_metrics_reports_the_metric_beside_in_budget_recall():
    # Gold a (1000) and c (50, not retrieved); budget 500: 479 / 1050 read, in_budget_recall 1/2.
    hits = [row_hit("a", "x" * 1000), row_hit("b", "y" * 200)]
    question = Question("q1", "what?", "C1", "answer", evidence_ids=("a", "c"))
    context = render(hits, 500)
    lengths = {"a": 1000, "b": 200, "c": 50}
    [row] = episode_metrics([question], [hits], [context], [10], lengths=lengths)
    assert row["in_budget_recall"] == pytest.approx(0.5)
    assert row["in_budget_gold_chars"] == pytest.approx(479 / 1050)
