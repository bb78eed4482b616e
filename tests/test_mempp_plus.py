"""Mem++ plus: each lever's behaviour pinned on small hand-made memories (real encoder, no stubs).

Most tests switch the vector leg off (weight 0) so that the lever under test alone decides the
order; the as-of rule and the store are Mem++'s own.
"""

from __future__ import annotations

import dataclasses
import inspect
from datetime import date, datetime

import numpy as np
import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from memplusplus import Document, MemPlusPlus, MemPPConfig
from memplusplus.evidence import render
from memplusplus.plus import PlusMemory, PlusOptions
from memplusplus.plus.packing import block_cost, fit_first, pack
from memplusplus.plus.views import SentenceViews, best_view_leg, clauses, sentences
from memory_protocol import Hit

NO_VECTOR = {"lexical": 1.0, "tag": 0.0, "vector": 0.0}
CLOCK = lambda: datetime(2030, 1, 1)  # noqa: E731


def plus(encoder, weights=NO_VECTOR, k: int = 10, reserve: int = 0, **options) -> PlusMemory:
    config = MemPPConfig(weights=weights, k=k, recency_reserve=reserve, tags="none")
    defaults = {"date_scope": False, "thread_expansion": False, "packing": False}
    return PlusMemory(config, PlusOptions(**{**defaults, **options}), encoder=encoder, clock=CLOCK)


def ids(hits: list[Hit]) -> list[str]:
    return [hit.doc_id for hit in hits]


# ----- lever 1: any-term lexical leg ranked by BM25 ----------------------------------------------


def test_any_term_leg_matches_a_row_sharing_one_term_where_the_paper_leg_matches_none(encoder):
    docs = [Document("inv", "The warehouse invoice was paid on time.", None, datetime(2023, 1, 5)),
            Document("lunch", "Lunch on Friday is pizza.", None, datetime(2023, 1, 6))]
    question = "Who approved the invoice for the new Rotterdam office?"
    paper = MemPlusPlus(MemPPConfig(weights=NO_VECTOR, k=10, recency_reserve=0, tags="none"), encoder=encoder, clock=CLOCK)
    paper.ingest(docs)
    assert paper.leg_rankings(question, paper.scope_mask(None))["lexical"] == []  # conjunctive: no row has every word
    mem = plus(encoder)
    mem.ingest(docs)
    hits = mem.retrieve(question)
    assert hits[0].doc_id == "inv" and hits[0].leg_ranks == {"lexical": 0}
    assert "lexical" not in hits[1].leg_ranks  # the pizza row shares no term: only filled in after


def test_bm25_puts_the_rare_term_first(encoder):
    # "budget" is in five rows, "warehouse" in one: BM25's idf ranks the warehouse row first.
    docs = [Document(f"b{i}", f"Budget note {i} for the team.", None, datetime(2023, 1, 1 + i)) for i in range(5)]
    docs.append(Document("w", "The warehouse lease was signed.", None, datetime(2023, 1, 1)))
    mem = plus(encoder)
    mem.ingest(docs)
    assert ids(mem.retrieve("warehouse budget"))[0] == "w"


def test_any_term_switch_off_gives_back_the_paper_leg(encoder):
    mem = plus(encoder, any_term_lexical=False)
    mem.ingest([Document("inv", "The warehouse invoice was paid.", None, datetime(2023, 1, 5))])
    assert mem.leg_rankings("Who approved the invoice for Rotterdam?", mem.scope_mask(None))["lexical"] == []


# ----- lever 2: thread expansion -----------------------------------------------------------------


def thread_docs() -> list[Document]:
    day = datetime(2023, 3, 1)
    return [
        Document("a1", "Outage postmortem: the load balancer failed.", None, day, thread="T1"),
        Document("b1", "The load balancer vendor sent a quote.", None, day, thread="T2"),
        Document("a2", "Follow-up: root cause confirmed, a bad config push.", None, day, thread="T1"),
        Document("a3", "Customer email about the downtime credits.", None, day, thread="T1"),
        Document("b2", "Quote approved by finance.", None, day, thread="T2"),
        Document("late", "Revised root cause: a certificate expiry.", None, datetime(2023, 5, 1), thread="T1"),
    ]


def test_thread_rows_follow_their_taken_row(encoder):
    off = plus(encoder)
    off.ingest(thread_docs())
    assert ids(off.retrieve("postmortem load balancer", as_of=date(2023, 4, 1)))[:2] == ["a1", "b1"]
    on = plus(encoder, thread_expansion=True)
    on.ingest(thread_docs())
    hits = on.retrieve("postmortem load balancer", as_of=date(2023, 4, 1))
    # a1's thread follows it in ingest order; the later-dated T1 row stays out (as-of 2023-04-01).
    assert ids(hits)[:5] == ["a1", "a2", "a3", "b1", "b2"]
    assert hits[1].leg_ranks == {"thread": 0} and hits[3].leg_ranks == {"lexical": 1}
    assert "late" not in ids(hits)


def test_thread_window_and_cap_limit_the_followers(encoder):
    mem = plus(encoder, thread_expansion=True, thread_window=1, thread_max=1)
    mem.ingest(thread_docs())
    # T1 in ingest order is a1, a2, a3, late: with a window of 1 only a2 may follow a1.
    assert ids(mem.retrieve("postmortem", as_of=date(2023, 4, 1)))[:2] == ["a1", "a2"]


def test_thread_rows_stay_inside_the_budget(encoder):
    mem = plus(encoder, thread_expansion=True, packing=True, budget=400, near_duplicate=None)
    mem.ingest(thread_docs())
    hits = mem.retrieve("postmortem load balancer", as_of=date(2023, 4, 1))
    context = render(hits, 400)
    # The three T1 blocks come first and all start inside the 400 characters read.
    assert ids(hits)[:3] == ["a1", "a2", "a3"]
    assert all(context.block_starts[doc] < 400 for doc in ("a1", "a2", "a3"))


# ----- lever 3: date-aware ranking ---------------------------------------------------------------


def dated_pair() -> list[Document]:
    # Same words, different authors (so neither is a repeat); the July row is ingested first, so
    # without the lever the March row (later ingest) wins the tie.
    return [Document("july", "Sprint review notes and decisions.", "Ana", datetime(2023, 7, 30)),
            Document("march", "Sprint review notes and decisions.", "Ben", datetime(2023, 3, 1))]


@pytest.mark.parametrize("question", [
    "What was decided at the sprint review on 2023-07-30?",
    "What was decided at the sprint review on July 30, 2023?",
    "What was decided at the sprint review in July?",
])
def test_a_named_date_ranks_the_row_of_that_date_first(encoder, question):
    off = plus(encoder)
    off.ingest(dated_pair())
    assert ids(off.retrieve(question)) == ["march", "july"]
    on = plus(encoder, date_scope=True)
    on.ingest(dated_pair())
    hits = on.retrieve(question)
    assert ids(hits) == ["july", "march"]
    assert hits[0].leg_ranks["date"] == 0 and "date" not in hits[1].leg_ranks


def test_relative_dates_count_from_the_as_of_day(encoder):
    mem = plus(encoder, date_scope=True)
    mem.ingest(dated_pair())
    # Two weeks before 2023-08-13 is 2023-07-30: the July row first; on 2023-03-15 only March is in scope.
    assert ids(mem.retrieve("sprint review decisions from two weeks ago", as_of=date(2023, 8, 13)))[0] == "july"
    assert ids(mem.retrieve("sprint review decisions from two weeks ago", as_of=date(2023, 3, 15)))[0] == "march"


def test_as_of_still_excludes_future_rows_with_every_lever_on(encoder):
    mem = plus(encoder, weights={"lexical": 1.0, "tag": 0.0, "vector": 4.0}, date_scope=True,
               thread_expansion=True, packing=True, budget=10_000)
    mem.ingest(thread_docs() + dated_pair())
    hits = mem.retrieve("root cause of the outage on 2023-05-01 and the sprint review", as_of=date(2023, 4, 1))
    assert {"late", "july"}.isdisjoint(ids(hits))
    assert all(hit.date is not None and hit.date <= datetime(2023, 4, 1, 23, 59, 59) for hit in hits)


# ----- lever 4: budget-aware packing -------------------------------------------------------------


def hit(doc_id: str, chars: int) -> Hit:
    return Hit(doc_id, "x" * chars, datetime(2024, 1, 2), None, 1.0)


def test_a_row_that_no_longer_fits_lets_a_fitting_row_go_first():
    # Blocks cost header (21) + text (+ 2 for the separator after the first): 321, 5023, 323.
    hits = [hit("a", 300), hit("long", 5000), hit("b", 300)]
    assert fit_first(hits, 1000, lookahead=5) == [0, 2, 1]
    assert fit_first(hits, 1000, lookahead=0) == [0, 1, 2]  # no look-ahead: rank order
    assert fit_first(hits, 10_000, lookahead=5) == [0, 1, 2]  # everything fits: rank order


@pytest.mark.parametrize("budget", [50, 400, 1000, 3000, 7000])
def test_packing_never_overfills_nor_cuts_a_row(budget):
    hits = [hit("a", 300), hit("long", 5000), hit("b", 300), hit("c", 2000), hit("d", 40)]
    packed = pack(hits, None, budget, None, lookahead=5)
    assert sorted(ids(packed)) == sorted(ids(hits))  # a permutation ...
    assert all(h.text == "x" * len(h.text) and h in hits for h in packed)  # ... of the rows, whole
    # Every block that jumped ahead of a higher-ranked row is read whole inside the budget.
    used = 0
    for rank, h in enumerate(packed, start=1):
        cost = block_cost(h, rank, rank == 1)
        jumped = any(ids(hits).index(other.doc_id) < ids(hits).index(h.doc_id) for other in packed[rank:])
        if jumped:
            assert used + cost <= budget
        used += cost


def test_near_duplicates_go_to_the_end():
    vectors = np.array([[1.0, 0.0], [0.999, 0.0447], [0.0, 1.0]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    hits = [hit("a", 10), hit("a_again", 10), hit("b", 10)]
    assert ids(pack(hits, vectors, 1000, 0.97, 5)) == ["a", "b", "a_again"]
    assert ids(pack(hits, vectors, 1000, None, 5)) == ["a", "a_again", "b"]
    assert ids(pack(hits, vectors, None, 0.97, 5)) == ["a", "a_again", "b"]  # no budget: nothing moves


# ----- lever 5: clause views for the vector leg --------------------------------------------------


def test_clauses_split_a_multi_part_question_and_leave_a_short_one_whole():
    question = ("Regarding the launch of the sales portal for deal tracking, walk me through the supporting "
                "records, indicating for each whether it is direct testimony or inference.")
    assert clauses(question) == [
        "Regarding the launch of the sales portal for deal tracking",
        "walk me through the supporting records",
        "indicating for each whether it is direct testimony or inference",
    ]
    assert clauses("What degree did I graduate with?") == []


def test_best_view_leg_ranks_by_the_best_cosine_over_the_views():
    # Row 0 is close to view 2 only, row 1 moderately close to view 1: best-of puts row 0 first;
    # the mean over views would not (0.45 against 0.6).
    from memplusplus.store import RowStore

    store = RowStore(dimension=3)
    for seq, vector in enumerate(([0.0, 0.0, 1.0], [0.8, 0.6, 0.0])):
        store.append(f"r{seq}", "text", None, None, None, CLOCK(), np.asarray(vector, dtype=np.float32))
    views = np.array([[1.0, 0.0, 0.0], [0.0, 0.1, 0.995]], dtype=np.float32)
    assert best_view_leg(store, views, np.ones(2, dtype=bool), 10) == [0, 1]
    assert best_view_leg(store, views[:1], np.ones(2, dtype=bool), 10) == [1, 0]
    assert best_view_leg(store, views, np.array([True, False]), 10) == [0]  # scope first


# ----- lever 6: sentence views of the stored rows ------------------------------------------------


def test_sentences_drop_the_turn_header_keep_abbreviations_and_join_short_pieces():
    text = ("[2023/03/27 (Mon) 00:55] user: I have had a cough for weeks. Can you suggest a remedy? "
            "By the way, I saw Dr. Patel on March 3rd. Thanks!")
    assert sentences(text) == [
        "I have had a cough for weeks.",
        "Can you suggest a remedy?",
        "By the way, I saw Dr. Patel on March 3rd. Thanks!",  # "Dr." does not end it; "Thanks!" joins it
    ]
    assert sentences("Hi! I moved to Berlin last spring for a new job.") == []  # one sentence after the join
    assert sentences("[2023/05/01] Caroline: One sentence only, nothing to split here.") == []


def test_sentence_views_find_the_row_whose_aside_matches_and_only_for_the_chosen_authors():
    from memplusplus.store import RowStore

    store = RowStore(dimension=3)
    texts = ["Topic one. The aside here.", "Topic two. Another aside.", "Topic three. Third aside."]
    authors = ["user", "user", "assistant"]
    vectors = [[1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [1.0, 0.0, 0.0]]
    for seq, (text, author, vector) in enumerate(zip(texts, authors, vectors)):
        store.append(f"r{seq}", text, author, None, None, CLOCK(), np.asarray(vector, dtype=np.float32))
    sentence_vectors = {"The aside here.": [0.0, 0.0, 1.0], "Third aside.": [0.0, 0.0, 1.0]}
    calls: list[list[str]] = []

    def encode(batch: list[str]) -> np.ndarray:
        calls.append(batch)
        return np.asarray([sentence_vectors.get(t, [0.0, 1.0, 0.0]) for t in batch], dtype=np.float32)

    views = SentenceViews(frozenset({"user"}), min_words=2)
    views.update(store, encode)
    assert calls == [["Topic one.", "The aside here.", "Topic two.", "Another aside."]]  # no assistant row
    assert views.owner.tolist() == [0, 0, 1, 1]
    query = np.asarray([[0.0, 0.0, 1.0]], dtype=np.float32)  # about the aside only
    everything = np.ones(3, dtype=bool)
    assert best_view_leg(store, query, everything, 10, views)[0] == 0  # its aside: cosine 1
    assert best_view_leg(store, np.asarray([[0.0, 1.0, 0.0]], dtype=np.float32), everything, 10, views)[:2] == [1, 0]
    views.update(store, encode)
    assert len(calls) == 1  # nothing new to embed
    store.append("r3", "New row. With two sentences.", "user", None, None, CLOCK(), np.zeros(3, dtype=np.float32))
    views.update(store, encode)
    assert calls[-1] == ["New row.", "With two sentences."] and views.owner.tolist() == [0, 0, 1, 1, 3, 3]


def test_sentence_views_are_embedded_at_ingest_and_rank_the_vector_leg(encoder):
    rows = [
        Document("a", "[2023/01/02] user: Can you suggest a cough syrup for my kid? My daughter has had a "
                      "cough for a week now. By the way, I saw my dentist for a root canal yesterday.",
                 author="user", date=datetime(2023, 1, 2)),
        Document("b", "[2023/01/03] assistant: Here are some cough syrups. Honey also helps a sore throat.",
                 author="assistant", date=datetime(2023, 1, 3)),
        Document("c", "[2023/01/04] user: I am booking a dentist appointment for my annual cleaning next week.",
                 author="user", date=datetime(2023, 1, 4)),
    ]
    question = "When did I have a root canal?"
    with_views = plus(encoder, weights={"lexical": 0.0, "tag": 0.0, "vector": 1.0}, sentence_views=True,
                      sentence_authors=["user"], lexical_weight=0.0)
    without = plus(encoder, weights={"lexical": 0.0, "tag": 0.0, "vector": 1.0}, lexical_weight=0.0)
    for memory in (with_views, without):
        memory.ingest(rows)
    assert with_views._sentences.owner.tolist() == [0, 0, 0]  # the first user row's sentences, at write time
    assert ids(without.retrieve(question))[0] == "c"  # whole-row embeddings: the dentist row wins
    assert ids(with_views.retrieve(question))[0] == "a"  # its root-canal sentence wins
    assert list(with_views.leg_rankings(question, with_views.scope_mask(None))) == ["vector"]
    # Switching the lexical lever back to the paper's leg leaves this lever on (one lever per ablation).
    paper_lexical = plus(encoder, weights={"lexical": 0.0, "tag": 0.0, "vector": 1.0}, sentence_views=True,
                         sentence_authors=["user"], any_term_lexical=False)
    paper_lexical.ingest(rows)
    assert ids(paper_lexical.retrieve(question))[0] == "a"


# ----- robustness: what the read path may see ----------------------------------------------------


def test_the_read_path_receives_only_the_question_text_and_its_as_of_day():
    params = list(inspect.signature(PlusMemory.retrieve).parameters)
    assert params == ["self", "query", "as_of", "k"]
    fields = {f.name for f in dataclasses.fields(PlusOptions)}
    assert not {name for name in fields if any(word in name for word in ("gold", "qid", "evidence", "answer"))}


def test_configs_choose_settings_per_dataset_and_ablations_switch_one_lever():
    orgmem = RunConfig.from_dict(compose_config(["system=mempp_plus", "dataset=orgmem"])).system.params["plus"]
    locomo = RunConfig.from_dict(compose_config(["system=mempp_plus", "dataset=locomo"])).system.params["plus"]
    assert orgmem["budget"] == 40000 and orgmem["thread_window"] is None
    assert locomo["budget"] is None and locomo["thread_window"] == 1
    switched = [(f"mempp_plus_no_{lever}", key, False) for lever, key in (
        ("lexical", "any_term_lexical"), ("threads", "thread_expansion"), ("dates", "date_scope"), ("clauses", "clause_views"))]
    for system, key, value in [*switched, ("mempp_plus_packing", "packing", True)]:  # packing: off by default
        ablated = RunConfig.from_dict(compose_config([f"system={system}"])).system.params["plus"]
        assert ablated[key] is value and orgmem[key] is not value
        assert {k: v for k, v in ablated.items() if k != key} == {k: v for k, v in orgmem.items() if k != key}


def test_sentence_views_are_off_for_locomo_and_their_ablation_switches_them_alone():
    def plus_of(*overrides: str) -> dict:
        return RunConfig.from_dict(compose_config(list(overrides))).system.params["plus"]

    lme = plus_of("system=mempp_plus", "dataset=longmemeval_s")
    assert lme["sentence_views"] is True and list(lme["sentence_authors"]) == ["user"]
    assert PlusOptions(**lme).sentence_authors == ("user",)
    orgmem = plus_of("system=mempp_plus", "dataset=orgmem")
    assert orgmem["sentence_views"] is True and orgmem["sentence_authors"] is None  # every author's rows
    assert plus_of("system=mempp_plus", "dataset=locomo")["sentence_views"] is False  # measured not to help
    assert lme["bm25_b"] == 0.3 and orgmem["bm25_b"] == 0.75  # per_dataset/mempp_plus, else the BM25 default
    ablated = plus_of("system=mempp_plus_no_sentences", "dataset=longmemeval_s")
    assert ablated["sentence_views"] is False
    assert {k: v for k, v in ablated.items() if k != "sentence_views"} == {
        k: v for k, v in lme.items() if k != "sentence_views"}
