"""Mem++'s evidence format (paper §3.4, Appendix B), tag-leg source (§3.2) and per-dataset
presets (Table 6), pinned with real values."""

from datetime import datetime

import pytest

from memplusplus import Document, Hit, MemPPConfig, render
from tests.test_mempp import budget_docs as shared_budget_docs, memory


def budget_docs() -> list[Document]:
    return shared_budget_docs()[:2]


def test_header_rows_show_date_and_author_in_rank_order_and_cut_at_budget(encoder):
    mem = memory(encoder, k=2, recency_reserve=0, weights={"lexical": 1.0})
    mem.ingest(budget_docs()[:2])
    hits = mem.retrieve("travel budget")
    ctx = render(hits, budget=40)
    assert [h.doc_id for h in hits] == ["d2", "d1"]
    assert ctx.full_text == (
        "[2023-02-10 09:00] Omar Ali\nUpdate: the travel budget for Q1 is now 12k.\n\n"
        "[2023-01-05] Maya Patel\nThe travel budget for Q1 is 10k."
    )
    assert ctx.block_starts == {"d2": 0, "d1": ctx.full_text.index("[2023-01-05]")}
    assert ctx.text == ctx.full_text[:40] and len(ctx.text) == 40


def hit(doc_id, text, author=None, when=None, evidence="header"):
    return Hit(doc_id, text, when, author, 0.0, evidence=evidence)


def test_row_without_author_shows_the_placeholder_in_its_header():
    ctx = render([hit("a1", "Quarterly plan.", None, datetime(2023, 1, 10))])
    assert ctx.full_text == "[2023-01-10] unknown\nQuarterly plan."


def test_conversational_rows_are_shown_as_stored_behind_their_rank_number_only():
    turns = [
        hit("D1:3", "[1:56 pm on 8 May, 2023] Caroline: I went to a support group.", "Caroline",
            datetime(2023, 5, 8, 13, 56), "as_stored"),
        hit("D2:1", "[1:14 pm on 25 May, 2023] Melanie: I ran a charity race.", "Melanie",
            datetime(2023, 5, 25, 13, 14), "as_stored"),
    ]
    ctx = render(turns)
    assert ctx.full_text == (
        "1. [1:56 pm on 8 May, 2023] Caroline: I went to a support group.\n\n"
        "2. [1:14 pm on 25 May, 2023] Melanie: I ran a charity race."
    )
    assert ctx.block_starts == {"D1:3": 0, "D2:1": ctx.full_text.index("2. [1:14")}


def test_block_starts_hold_for_mixed_styles_and_budget_decides_what_is_read():
    hits = [
        hit("h", "Header row.", "Ann", datetime(2023, 1, 1)),
        hit("s", "[2023-01-02] user: as stored.", "user", datetime(2023, 1, 2), "as_stored"),
        hit("h", "Repeat of a shown id.", "Ann", datetime(2023, 1, 1)),
    ]
    ctx = render(hits, budget=30)
    # Each id keeps the start of its first block; rank numbers count every block.
    assert ctx.block_starts == {"h": 0, "s": len("[2023-01-01] Ann\nHeader row.\n\n")}
    assert ctx.full_text[ctx.block_starts["s"]:].startswith("2. [2023-01-02] user:")
    assert "3. " not in ctx.full_text and ctx.full_text.endswith("[2023-01-01] Ann\nRepeat of a shown id.")
    assert ctx.text == ctx.full_text[:30]


def test_mempp_hits_carry_the_documents_evidence_style(encoder):
    mem = memory(encoder, k=2, recency_reserve=0)
    mem.ingest([
        Document("t1", "[8 May, 2023] Caroline: hiking plans", "Caroline", datetime(2023, 5, 8),
                 author_role="speaker", evidence="as_stored"),
        Document("a1", "Hiking budget approved", "Ann", datetime(2023, 5, 9)),
    ])
    styles = {h.doc_id: h.evidence for h in mem.retrieve("hiking")}
    assert styles == {"t1": "as_stored", "a1": "header"}


def speaker_and_author_docs() -> list[Document]:
    return [
        Document("t1", "I adopted a puppy last week.", "Caroline", datetime(2023, 5, 8), author_role="speaker"),
        Document("t2", "That is lovely news.", "Melanie", datetime(2023, 5, 8), author_role="speaker"),
        Document("m1", "Puppy policy for the office.", "Caroline", datetime(2023, 5, 9)),
    ]


def test_library_add_takes_author_as_a_tag(encoder):
    mem = memory(encoder, k=2, recency_reserve=0)
    mem.add("Pricing memo v2.", author="Maya Patel", date=datetime(2023, 1, 1), doc_id="p1")
    mem.add("Pricing memo v3.", author="Omar Ali", date=datetime(2023, 1, 2), doc_id="p2")
    assert mem.leg_rankings("What did Maya write?", mem.scope_mask(None))["tag"] == [0]
    with pytest.raises(ValueError, match="unknown tags"):
        MemPPConfig(tags="speakers")


@pytest.mark.parametrize(
    ("tags", "tagged"),
    [("author", {"m1"}), ("speaker", {"t1", "m1"}), ("none", set())],
)
def test_tag_leg_indexes_only_authors_the_source_names_unless_told_otherwise(encoder, tags, tagged):
    # Paper §3.2: an author becomes a tag only where the source names one as an author.
    mem = memory(encoder, tags=tags, k=3, recency_reserve=0)
    mem.ingest(speaker_and_author_docs())
    assert set(mem.leg_rankings("What did Caroline say?", mem.scope_mask(None)).get("tag", [])) == {
        mem.store.by_doc_id[d] for d in tagged
    }
    # The author stays on every hit for display, tagged or not.
    assert {h.doc_id: h.author for h in mem.retrieve("What did Caroline say?")} == {
        "t1": "Caroline", "t2": "Melanie", "m1": "Caroline"
    }


@pytest.mark.parametrize(
    ("dataset", "expected"),
    [
        ("orgmem", ({"lexical": 1.0, "tag": 1.0, "vector": 4.0}, 50, True, "author", 40000)),
        ("locomo", ({"lexical": 1.0, "tag": 1.0, "vector": 2.0}, 200, False, "none", None)),
        ("longmemeval_s", ({"lexical": 1.0, "tag": 1.0, "vector": 4.0}, 50, True, "none", None)),
    ],
)
def test_dataset_presets_follow_the_papers_table6(encoder, dataset, expected):
    from harness.compose import compose_config
    from harness.config import RunConfig
    from harness.systems import RunContext, build_system

    config = RunConfig.from_dict(compose_config([f"dataset={dataset}"]))
    system = build_system(RunContext(config.system, encoder, "unused")).memory
    cfg = system.config
    assert (dict(cfg.weights), cfg.candidates, cfg.conjunctive, cfg.tags, config.dataset.context_budget) == expected
    assert (cfg.gamma, cfg.recency_reserve, cfg.k) == (60.0, 3, 50)
    speaker = RunConfig.from_dict(compose_config([f"dataset={dataset}", "system.tags=speaker"]))
    assert build_system(RunContext(speaker.system, encoder, "unused")).memory.config.tags == "speaker"
