"""The lexical legs as the authors' implementation runs them: disjunctive (LoCoMo) and conjunctive.

AIDAChip-Inc/mem-plus-plus memory/store.py: question words (``_query_terms``: ASCII letter/digit
runs of 3+ characters minus their stop list, the first 8), OR-ed through
``to_tsquery('english')``, documents indexed by ``to_tsvector('english')``, ranked by
``ts_rank_cd``. Expected lexemes below are Postgres 18's own output for these strings (the
Postgres-backed test in test_postgres_backend.py recomputes them on a live server).
"""

from datetime import datetime
from pathlib import Path

import yaml

from memplusplus import Document, MemPlusPlus, MemPPConfig
from memplusplus.lexical import AUTHORS_QUERY_STOP_WORDS, authors_or_terms, authors_query_words
from memplusplus.english_tsearch import stem, tsvector_positions
from memplusplus.text import content_terms, positional_stems

ROOT = Path(__file__).resolve().parent.parent


def locomo_limits() -> tuple[int, int]:
    mempp = yaml.safe_load((ROOT / "configs" / "system" / "per_dataset" / "mempp" / "locomo.yaml").read_text())
    assert mempp["conjunctive"] is False  # the authors' OR leg is LoCoMo's
    return mempp["min_term_chars"], mempp["max_query_terms"]


def test_locomo_config_carries_the_authors_query_limits():
    assert locomo_limits() == (3, 8)  # store.py _query_terms: len >= 3, [:8]


def test_the_authors_stop_list_is_theirs():
    assert AUTHORS_QUERY_STOP_WORDS == {
        "the", "and", "for", "with", "what", "how", "did", "was", "were", "you", "about", "tell", "this", "that",
        "are", "can",
    }


def test_question_words_are_the_first_eight_before_postgres_drops_its_stop_words():
    min_chars, max_terms = locomo_limits()
    question = "When would Melanie and Caroline probably visit where Jon painted sunsets?"
    # 'and' is on the authors' list; 'when'/'where' are not, so they count towards the 8 ...
    assert authors_query_words(question, min_chars, max_terms) == [
        "when", "would", "melanie", "caroline", "probably", "visit", "where", "jon",
    ]
    # ... and only then does to_tsquery('english') drop them as Postgres stop words and stem the rest.
    assert authors_or_terms(question, min_chars, max_terms) == ["would", "melani", "carolin", "probabl", "visit", "jon"]
    # Our own content terms (bm25s stop list, cut after it) reached 'paint' and 'sunset'.
    assert {"paint", "sunset"} <= set(content_terms(question, min_chars, max_terms))


def test_question_words_are_ascii_runs_of_three_or_more_characters():
    words = authors_query_words("Did Caroline's 5k run on 2023-05-15 go OK? Tell me about it.", 3, 8)
    assert words == ["caroline", "run", "2023"]  # 's', '5k', 'on', '05', 'go', 'ok', 'me', 'it' are short


def test_documents_get_postgres_english_lexemes():
    assert tsvector_positions("Meeting on 2023-05-15 at 10:30 about internal tools.") == {
        "meet": [1], "2023": [3], "-05": [4], "-15": [5], "10": [7], "30": [8], "intern": [10], "tool": [11],
    }
    assert tsvector_positions("Email maya.patel@helix.com or visit https://helix.example.com/docs and www.helix.com") == {
        "email": [1], "maya.patel@helix.com": [2], "visit": [4], "helix.example.com/docs": [5],
        "helix.example.com": [6], "/docs": [7], "www.helix.com": [9],
    }
    assert tsvector_positions("Caroline's self-driving car, 3rd of 5, e.g. version 1.2.3") == {
        "carolin": [1], "self-driv": [3], "self": [4], "drive": [5], "car": [6], "3rd": [7], "5": [9],
        "e.g": [10], "version": [11], "1.2.3": [12],
    }


def test_stems_follow_postgres_not_pystemmer_3():
    assert [stem(w) for w in ("internal", "organized", "biologists", "added", "adding")] == [
        "intern", "organ", "biologist", "add", "add",
    ]


def lexical_only(encoder, **overrides) -> MemPlusPlus:
    min_chars, max_terms = locomo_limits()
    config = MemPPConfig(weights={"lexical": 1.0}, recency_reserve=0, conjunctive=False, min_term_chars=min_chars,
                         max_query_terms=max_terms, tags="none", **overrides)
    return MemPlusPlus(config, encoder=encoder, clock=lambda: datetime(2030, 1, 1))


def test_or_leg_matches_postgres_tokens_not_our_stems(encoder):
    mem = lexical_only(encoder)
    mem.ingest([
        Document("host", "See helix.example.com today.", None, datetime(2023, 1, 1)),
        Document("tools", "The internal tools review is done.", None, datetime(2023, 1, 2)),
        Document("paint", "She painted sunsets at dusk.", None, datetime(2023, 1, 3)),
        Document("jon", "Jon said hello.", None, datetime(2023, 1, 4)),
    ])
    # 'helix' is no token of the host row (Postgres keeps the host whole); 'internal' -> 'intern'.
    assert matched(mem, "Is the helix internal tool ready?") == ["tools"]
    # 'painted' and 'sunsets' are words 9 and 10 of the question: past the authors' 8.
    assert matched(mem, "When would Melanie and Caroline probably visit where Jon painted sunsets?") == ["jon"]


def test_or_leg_ranks_by_cover_density_later_row_first_on_ties(encoder):
    mem = lexical_only(encoder)
    mem.ingest([
        Document("one", "A sunset.", None, datetime(2023, 1, 1)),
        Document("two", "Sunset after sunset.", None, datetime(2023, 1, 2)),
        Document("tie", "The sunset.", None, datetime(2023, 1, 3)),
    ])
    assert matched(mem, "Which sunsets?") == ["two", "tie", "one"]


def matched(mem: MemPlusPlus, question: str) -> list[str]:
    """The rows the lexical leg ranked, in rank order (rows filling up to k carry no leg rank)."""
    return [h.doc_id for h in mem.retrieve(question) if "lexical" in h.leg_ranks]


# ---------------------------------------------------------------- the conjunctive leg (websearch_to_tsquery)
def conjunctive_only(encoder) -> MemPlusPlus:
    """OrgMemBench's leg alone: conjunctive, no length rule, no cut (configs/dataset/orgmem.yaml)."""
    config = MemPPConfig(weights={"lexical": 1.0}, recency_reserve=0, conjunctive=True, tags="none")
    return MemPlusPlus(config, encoder=encoder, clock=lambda: datetime(2030, 1, 1))


def test_conjunctive_leg_reads_or_as_or_where_our_stems_anded_everything(encoder):
    """store.py:373-379: the whole question through websearch_to_tsquery, so "Alice or Bob ..." is
    'alic' | 'bob' & 'approv' & 'budget'. The former rule ANDed our content stems (alice, bob,
    approv, budget) and matched none of these rows."""
    mem = conjunctive_only(encoder)
    mem.ingest([
        Document("alice", "Alice signed off on the offsite.", None, datetime(2023, 1, 1)),
        Document("bob_late", "Bob will approve the travel budget tomorrow.", None, datetime(2023, 1, 2)),
        Document("bob_done", "The budget was approved by Bob.", None, datetime(2023, 1, 3)),
        Document("carol", "Carol approved the budget.", None, datetime(2023, 1, 4)),
    ])
    question = "Did Alice or Bob approve the budget?"
    # ts_rank_cd: 0.1 (one word), 0.1/3 (2 noise words), 0.025 (3 noise words); carol holds no 'bob'.
    assert matched(mem, question) == ["alice", "bob_done", "bob_late"]
    old_terms = content_terms(question)
    assert not [d for d in ("alice", "bob_late", "bob_done", "carol") if set(old_terms) <= set(
        positional_stems(mem.store.rows[mem.store.by_doc_id[d]].text))]


def test_conjunctive_leg_keeps_quoted_phrases_and_minus_words(encoder):
    mem = conjunctive_only(encoder)
    mem.ingest([
        Document("phrase", "The travel budget was approved.", None, datetime(2023, 1, 1)),
        Document("apart", "The budget for travel was approved.", None, datetime(2023, 1, 2)),
        Document("hiring", "The hiring budget was approved.", None, datetime(2023, 1, 3)),
    ])
    assert matched(mem, 'Was the "travel budget" approved?') == ["phrase"]
    assert matched(mem, "approved budget -travel") == ["hiring"]


def test_conjunctive_leg_ties_put_the_later_row_first(encoder):
    mem = conjunctive_only(encoder)
    mem.ingest([
        Document("first", "Budget approved.", None, datetime(2023, 1, 1)),
        Document("second", "Budget approved.", "Omar", datetime(2023, 1, 2)),
    ])
    assert matched(mem, "approved budget") == ["second", "first"]  # store.py:384 created_at desc


def test_disjunctive_leg_falls_back_to_websearch_when_no_question_word_is_left(encoder):
    """store.py:373-379: with no word of 3+ characters off their stop list, the whole question goes
    through websearch_to_tsquery ('ok'), not an empty OR query."""
    mem = lexical_only(encoder)
    mem.ingest([
        Document("ok", "It is ok now.", None, datetime(2023, 1, 1)),
        Document("other", "Nothing to see.", None, datetime(2023, 1, 2)),
    ])
    assert authors_query_words("Is it ok?", *locomo_limits()) == []
    assert matched(mem, "Is it ok?") == ["ok"]
