"""Each behaviour the Mem++ paper states, pinned with real values (real encoder, no stubs)."""

from datetime import date, datetime

import numpy as np
import pytest

from memplusplus import Document, MemPlusPlus, MemPPConfig
from memplusplus.lexical import all_of, any_of, ts_rank_cd
from memplusplus.ranking import weighted_rrf
from memplusplus.text import content_terms, positional_stems


def memory(encoder, **overrides) -> MemPlusPlus:
    return MemPlusPlus(MemPPConfig(**overrides), encoder=encoder, clock=lambda: datetime(2030, 1, 1))


def budget_docs() -> list[Document]:
    return [
        Document("d1", "The travel budget for Q1 is 10k.", "Maya Patel", datetime(2023, 1, 5)),
        Document("d2", "Update: the travel budget for Q1 is now 12k.", "Omar Ali", datetime(2023, 2, 10, 9)),
        Document("d3", "Travel budget cut to 8k after the layoffs.", "Maya Patel", datetime(2023, 3, 1)),
        Document("d4", "The travel budget draft, undated note.", "Omar Ali", None),
        Document("d5", "Lunch on Friday is pizza.", "Chef Lee", datetime(2023, 1, 20)),
    ]


def test_as_of_never_admits_a_later_or_undated_row(encoder):
    mem = memory(encoder, k=10)
    mem.ingest(budget_docs())
    hits = mem.retrieve("travel budget", as_of=date(2023, 2, 10))
    ids = {hit.doc_id for hit in hits}
    assert ids == {"d1", "d2", "d5"}  # d2 is dated 09:00 on the as-of day: theta is the end of that day
    assert all(hit.date is not None and hit.date <= datetime(2023, 2, 10, 23, 59, 59) for hit in hits)
    # Without an as-of date nothing is filtered, undated rows included.
    assert {hit.doc_id for hit in mem.retrieve("travel budget")} == {"d1", "d2", "d3", "d4", "d5"}


def test_scope_is_applied_before_ranking_so_every_slot_is_eligible(encoder):
    mem = memory(encoder, k=2, recency_reserve=0)
    later = [Document(f"late{i}", f"Travel budget revision {i}.", None, datetime(2024, 1, i + 1)) for i in range(20)]
    mem.ingest(budget_docs() + later)
    hits = mem.retrieve("travel budget", as_of=date(2023, 1, 31))
    assert [hit.doc_id for hit in hits] == ["d1", "d5"]


def test_reserve_holds_the_latest_dated_remaining_matched_rows(encoder):
    docs = [Document(f"m{i}", f"Release plan note number {i} about the release.", None, datetime(2023, 1, 1 + i)) for i in range(12)]
    mem = memory(encoder, k=6, recency_reserve=3)
    mem.ingest(docs)
    scope = mem.scope_mask(None)
    from memplusplus.ranking import weighted_rrf as fuse

    fused = fuse(mem.leg_rankings("release plan", scope), {"lexical": 1.0, "tag": 1.0, "vector": 4.0}, 60.0)
    head_expected = [mem.store.rows[f.seq].doc_id for f in fused[:3]]
    remaining = [mem.store.rows[f.seq] for f in fused[3:]]
    latest = [row.doc_id for row in sorted(remaining, key=lambda r: r.date, reverse=True)[:3]]
    hits = mem.retrieve("release plan")
    assert [h.doc_id for h in hits[:3]] == head_expected
    assert [h.doc_id for h in hits[3:]] == latest
    assert [h.reserve for h in hits] == [False] * 3 + [True] * 3
    assert len(fused) == 12 and len(set(head_expected) | set(latest)) == 6


def reserve_tie_docs() -> list[Document]:
    """Fused order by cover density (one cover per 'alpha'): top, x, y, z, w. x and y share a date
    but y is ingested later; z is ingested after both with an earlier date."""
    return [
        Document("top", "alpha alpha alpha alpha alpha", None, datetime(2023, 1, 1)),
        Document("x", "alpha alpha alpha alpha", None, datetime(2023, 3, 1)),
        Document("y", "alpha alpha alpha", None, datetime(2023, 3, 1)),
        Document("z", "alpha alpha", None, datetime(2023, 2, 1)),
        Document("w", "alpha", None, datetime(2022, 12, 1)),
    ]


def test_reserve_keeps_fused_order_among_equal_dates_not_ingest_order(encoder):
    """The authors' reserve sorts the matched leftovers (in fused order) by date with a stable
    sort (AIDAChip-Inc/mem-plus-plus memory/store.py, _recall_scoped), so x (fused before y) comes
    first though y was ingested later; z, ingested last, still ranks by its earlier date."""
    mem = memory(encoder, k=4, recency_reserve=3, weights={"lexical": 1.0, "tag": 0.0, "vector": 0.0})
    mem.ingest(reserve_tie_docs())
    hits = mem.retrieve("alpha")
    assert [h.doc_id for h in hits] == ["top", "x", "y", "z"]
    assert [h.reserve for h in hits] == [False, True, True, True]
    assert [h.leg_ranks["lexical"] for h in hits] == [0, 1, 2, 3]


def test_short_reserve_is_filled_with_most_recently_ingested_unmatched_rows(encoder):
    mem = memory(encoder, k=5, recency_reserve=3, weights={"lexical": 1.0, "tag": 0.0, "vector": 0.0})
    mem.ingest(
        [
            Document("a", "quarterly revenue grew", None, datetime(2023, 1, 1)),
            Document("b", "office plants were watered", None, datetime(2023, 1, 2)),
            Document("c", "new coffee machine", None, datetime(2023, 1, 3)),
            Document("d", "printer is broken", None, datetime(2023, 1, 4)),
        ]
    )
    hits = mem.retrieve("quarterly revenue")
    # Only "a" matches. The head (k - 3 = 2 slots) takes it and then the newest unmatched row;
    # with no matched row left, the reserve takes the most recently ingested unmatched rows.
    assert [h.doc_id for h in hits] == ["a", "d", "c", "b"]
    assert [h.reserve for h in hits] == [False, False, True, True]
    assert hits[1].leg_ranks == {} and hits[1].score == 0.0


def test_a_query_matching_nothing_still_returns_the_newest_rows_in_scope(encoder):
    mem = memory(encoder, k=4, recency_reserve=3, candidates=3, weights={"lexical": 1.0, "tag": 0.0, "vector": 0.0})
    mem.ingest([Document(f"r{i}", f"routine note {i}", None, datetime(2023, 1, 1 + i)) for i in range(6)])
    hits = mem.retrieve("volcano", as_of=date(2023, 1, 5))
    # Scope: r0..r4; the recency pool is the C = 3 newest of them; nothing matched.
    assert [h.doc_id for h in hits] == ["r4", "r3", "r2"]


def test_duplicate_in_same_author_scope_adds_no_row(encoder):
    mem = memory(encoder)
    assert mem.add("Ship it Friday.", author="Ann", date=datetime(2023, 1, 1), doc_id="x1") == "x1"
    assert mem.add("Ship it Friday.", author="Ann", date=datetime(2023, 1, 2), doc_id="x2") == "x1"
    assert len(mem.store) == 1 and mem.store.aliases == {"x2": "x1"}
    assert mem.add("Ship it Friday.", author="Bob", date=datetime(2023, 1, 2), doc_id="x3") == "x3"
    assert len(mem.store) == 2
    # Only an *active* row blocks a repeat: once archived, the same text is stored again.
    mem.archive("x1")
    assert mem.add("Ship it Friday.", author="Ann", date=datetime(2023, 1, 3), doc_id="x4") == "x4"
    assert len(mem.store) == 3
    assert mem.add("   ", author="Ann") is None and len(mem.store) == 3


def test_superseded_row_stays_active_and_retrievable_with_its_own_date(encoder):
    # Paper §3.1, §3.3, Algorithm 2: sigma = (active/archived, optional superseded-by link);
    # the scope ignores supersession links.
    mem = memory(encoder, k=10)
    mem.ingest(budget_docs())
    mem.supersede("d1", "d2")
    row = mem.store.rows[0]
    assert (row.doc_id, row.active, row.superseded_by) == ("d1", True, "d2")
    hits = {h.doc_id: h for h in mem.retrieve("travel budget")}
    assert "d1" in hits and hits["d1"].date == datetime(2023, 1, 5)
    # Also under an as-of date before the superseding row exists, and after it.
    assert "d1" in {h.doc_id for h in mem.retrieve("travel budget", as_of=date(2023, 1, 6))}
    assert "d1" in {h.doc_id for h in mem.retrieve("travel budget", as_of=date(2023, 3, 1))}


def test_archived_row_stays_stored_but_never_enters_scope(encoder):
    mem = memory(encoder, k=10)
    mem.ingest(budget_docs())
    mem.archive("d1")
    assert len(mem.store) == 5 and mem.store.rows[0].text == "The travel budget for Q1 is 10k."
    assert not mem.store.rows[0].active
    assert "d1" not in {h.doc_id for h in mem.retrieve("travel budget")}
    assert "d1" not in {h.doc_id for h in mem.retrieve("travel budget", as_of=date(2023, 1, 6))}
    # Archiving and supersession are independent: an archived row keeps (or gains) its link.
    mem.supersede("d1", "d3")
    assert mem.store.rows[0].superseded_by == "d3" and not mem.store.rows[0].active


def test_dedup_follows_active_state_not_supersession(encoder):
    mem = memory(encoder)
    mem.add("Ship it Friday.", author="Ann", date=datetime(2023, 1, 1), doc_id="x1")
    mem.add("Ship it Monday.", author="Ann", date=datetime(2023, 1, 2), doc_id="x2")
    mem.supersede("x1", "x2")
    # x1 is superseded but still active: a repeat of it in Ann's scope adds no row.
    assert mem.add("Ship it Friday.", author="Ann", date=datetime(2023, 1, 3), doc_id="x3") == "x1"
    assert len(mem.store) == 2
    # Archived: no longer blocks a repeat.
    mem.archive("x1")
    assert mem.add("Ship it Friday.", author="Ann", date=datetime(2023, 1, 4), doc_id="x4") == "x4"
    assert len(mem.store) == 3


def test_empty_texts_add_no_row(encoder):
    mem = memory(encoder)
    ids = mem.ingest([Document("e1", ""), Document("e2", " \n\t "), Document("e3", "Real note.")])
    assert ids == [None, None, "e3"] and len(mem.store) == 1


class RecordingEncoder:
    """Passes through to the real encoder and records every text it was asked to embed."""

    def __init__(self, inner):
        self.inner, self.seen = inner, []
        self.dimension = inner.dimension

    def encode(self, texts, show_progress=False):
        self.seen.extend(texts)
        return self.inner.encode(texts, show_progress=show_progress)

    def encode_one(self, text):
        self.seen.append(text)
        return self.inner.encode_one(text)


def test_write_stores_text_whole_and_makes_no_call_but_one_embedding_each(encoder):
    recording = RecordingEncoder(encoder)
    mem = MemPlusPlus(MemPPConfig(), encoder=recording, clock=lambda: datetime(2030, 1, 1))
    docs = budget_docs()
    mem.ingest(docs)
    # Nothing generative: the only model call embeds each text once, verbatim, and rows hold it whole.
    assert recording.seen == [d.text for d in docs]
    assert [(r.doc_id, r.text, r.author, r.date) for r in mem.store.rows] == [(d.doc_id, d.text, d.author, d.date) for d in docs]


def test_vector_reads_the_first_256_word_pieces_and_lexical_the_whole_text(encoder):
    opening = "alpha " * 300  # 300 word pieces: past the encoder's 256
    mem = memory(encoder, weights={"lexical": 1.0, "vector": 1.0}, recency_reserve=0)
    mem.ingest([Document("a", opening + "zebra"), Document("b", opening + "giraffe")])
    assert encoder.config.max_tokens == 256
    # Same first 256 word pieces, same vector; the lexical leg still sees the tail.
    assert np.allclose(mem.store.vectors[0], mem.store.vectors[1])
    assert positional_stems(mem.store.rows[0].text)["zebra"] == [301]
    assert [h.doc_id for h in mem.retrieve("zebra") if "lexical" in h.leg_ranks] == ["a"]


def test_rrf_ranks_are_zero_based_with_gamma():
    fused = weighted_rrf({"lexical": [7, 3], "vector": [3]}, {"lexical": 1.0, "vector": 4.0}, gamma=60.0)
    scores = {row.seq: row.score for row in fused}
    assert scores[7] == pytest.approx(1 / 60)
    assert scores[3] == pytest.approx(1 / 61 + 4 / 60)
    assert [row.seq for row in fused] == [3, 7]
    assert fused[0].leg_ranks == {"lexical": 1, "vector": 0}


def test_rrf_ties_put_the_later_ingested_row_first():
    fused = weighted_rrf({"lexical": [2], "vector": [5]}, {"lexical": 1.0, "vector": 1.0}, gamma=60.0)
    assert [row.seq for row in fused] == [5, 2]


def test_zero_weight_leg_changes_nothing(encoder):
    weights = {"lexical": 1.0, "tag": 0.0, "vector": 4.0}
    with_authors = memory(encoder, k=4, weights=weights)
    with_authors.ingest(budget_docs())
    without_authors = memory(encoder, k=4, weights=weights)
    without_authors.ingest([Document(d.doc_id, d.text, None, d.date) for d in budget_docs()])
    question = "What did Maya say about the travel budget?"
    a = [(h.doc_id, h.score, h.leg_ranks) for h in with_authors.retrieve(question)]
    b = [(h.doc_id, h.score, h.leg_ranks) for h in without_authors.retrieve(question)]
    assert a == b
    # With the tag leg on, Maya's rows gain a tag rank and the result differs.
    tagged = memory(encoder, k=4)
    tagged.ingest(budget_docs())
    assert {h.doc_id for h in tagged.retrieve(question) if "tag" in h.leg_ranks} == {"d1", "d3"}


def test_candidates_bound_each_leg(encoder):
    mem = memory(encoder, candidates=4, weights={"lexical": 1.0, "tag": 1.0, "vector": 1.0}, conjunctive=False)
    mem.ingest([Document(f"n{i}", f"Maya wrote memo {i} on freight", "Maya", datetime(2023, 1, 1)) for i in range(30)])
    rankings = mem.leg_rankings("Maya freight memo", mem.scope_mask(None))
    assert {leg: len(r) for leg, r in rankings.items()} == {"lexical": 4, "tag": 4, "vector": 4}


def test_conjunctive_and_disjunctive_lexical_matching(encoder):
    docs = [
        Document("both", "freight contract signed", None, datetime(2023, 1, 1)),
        Document("one", "freight delayed", None, datetime(2023, 1, 2)),
    ]
    conj = memory(encoder, weights={"lexical": 1.0}, recency_reserve=0)
    conj.ingest(docs)
    disj = memory(encoder, weights={"lexical": 1.0}, recency_reserve=0, conjunctive=False)
    disj.ingest(docs)
    def matched(hits):
        return [h.doc_id for h in hits if h.leg_ranks]

    assert matched(conj.retrieve("freight contracts")) == ["both"]
    assert matched(disj.retrieve("freight contracts")) == ["both", "one"]


def test_cover_density_matches_postgres_ts_rank_cd():
    # Postgres: ts_rank_cd(to_tsvector('english', 'The cat sat on the mat with another cat'),
    # 'cat & mat') = 0.058333. Covers: (cat@2, mat@6), noise 3 -> 0.1/4; (mat@6, cat@9), noise 2 -> 0.1/3.
    positions = positional_stems("The cat sat on the mat with another cat")
    assert positions == {"cat": [2, 9], "sat": [3], "mat": [6], "anoth": [8]}
    terms = ["cat", "mat"]
    assert ts_rank_cd(all_of(terms), terms, positions) == pytest.approx(0.1 / 4 + 0.1 / 3)
    # Disjunctive: every occurrence is its own cover worth 0.1.
    assert ts_rank_cd(any_of(terms), terms, positions) == pytest.approx(0.3)
    assert ts_rank_cd(all_of(["cat", "dog"]), ["cat", "dog"], positions) == 0.0


def test_query_terms_are_stemmed_content_words():
    assert content_terms("What were the Shipments delayed by the carriers?") == ["shipment", "delay", "carrier"]


def test_bm25_ranker_switch_orders_by_bm25(encoder):
    docs = [
        Document("once", "invoice sent to the customer yesterday", None, datetime(2023, 1, 1)),
        Document("twice", "invoice invoice overdue", None, datetime(2023, 1, 2)),
        Document("none", "weather is nice", None, datetime(2023, 1, 3)),
    ]
    mem = memory(encoder, weights={"lexical": 1.0}, lexical_ranker="bm25", recency_reserve=0)
    mem.ingest(docs)
    assert [h.doc_id for h in mem.retrieve("invoice") if h.leg_ranks] == ["twice", "once"]


def test_retrieval_is_deterministic(encoder):
    first = memory(encoder)
    first.ingest(budget_docs())
    second = memory(encoder)
    second.ingest(budget_docs())
    q = "How did the travel budget change?"
    assert [(h.doc_id, h.score) for h in first.retrieve(q)] == [(h.doc_id, h.score) for h in second.retrieve(q)]


def test_bad_config_is_rejected():
    with pytest.raises(ValueError, match="unknown legs"):
        MemPPConfig(weights={"lexicon": 1.0})
    with pytest.raises(ValueError):
        MemPPConfig(k=0)


def test_vector_leg_uses_cosine_order(encoder):
    mem = memory(encoder, weights={"vector": 1.0}, recency_reserve=0, k=5)
    mem.ingest(budget_docs())
    hits = mem.retrieve("pizza lunch")
    q = encoder.encode_one("pizza lunch")
    sims = {row.doc_id: float(mem.store.vectors[row.seq] @ q) for row in mem.store.rows}
    assert [h.doc_id for h in hits] == sorted(sims, key=sims.get, reverse=True)
    assert hits[0].doc_id == "d5"
    assert np.isclose(np.linalg.norm(mem.store.vectors[0]), 1.0, atol=1e-5)
    # all-MiniLM-L6-v2, 384-dimensional (paper §3.2).
    assert mem.store.vectors.shape == (5, 384) and "all-MiniLM-L6-v2" in encoder.config.model


def test_query_term_limits_follow_the_reference_or_query():
    question = "When did Caroline go to the LGBTQ support group in May?"
    assert content_terms(question) == ["carolin", "go", "lgbtq", "support", "group", "may"]
    assert content_terms(question, min_chars=3, max_terms=3) == ["carolin", "lgbtq", "support"]


def test_default_read_settings_are_the_papers():
    cfg = MemPPConfig()
    assert (cfg.gamma, cfg.recency_reserve, cfg.k, cfg.lexical_ranker, cfg.tags, cfg.dedup) == (
        60.0, 3, 50, "cover_density", "author", True
    )


def test_equal_leg_scores_put_the_later_ingested_row_first(encoder):
    mem = memory(encoder, weights={"lexical": 1.0, "vector": 1.0}, recency_reserve=0)
    same = "Freight contract renewed."
    mem.ingest([Document("early", same, "Ann", datetime(2023, 1, 1)), Document("late", same, "Bob", datetime(2023, 1, 2))])
    rankings = mem.leg_rankings("freight contract", mem.scope_mask(None))
    assert rankings["lexical"] == [1, 0] and rankings["vector"] == [1, 0]
    assert [h.doc_id for h in mem.retrieve("freight contract")] == ["late", "early"]
