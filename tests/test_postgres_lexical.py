"""The Postgres backend's lexical leg is Postgres' own: lexemes, tsqueries, websearch_to_tsquery and
ts_rank_cd agree with memplusplus's reimplementations, and both backends rank the same rows.

Split from tests/test_postgres_backend.py; the embedded server starts once per module.
"""

from __future__ import annotations

import random
from datetime import datetime

import pytest

from tests.postgres_support import dsn, encoder, mem_memory, pg_memory, skip_without_postgres_extra  # noqa: F401 - fixtures

skip_without_postgres_extra()

from memplusplus import Document  # noqa: E402
from memplusplus.lexical import all_of, any_of, ts_rank_cd  # noqa: E402
from memplusplus.english_tsearch import quote  # noqa: E402
from memplusplus.pg.server import connect  # noqa: E402
from memplusplus.text import content_terms, positional_stems  # noqa: E402


def tsvector(positions: dict[str, list[int]]) -> str:
    """A tsvector literal: each quoted lexeme with its positions."""
    return " ".join(f"{quote(lexeme)}:{','.join(map(str, ps))}" for lexeme, ps in positions.items())


WORDS = "budget travel launch plan the of a to is report quarterly meeting review and team for on in".split()


def test_ts_rank_cd_is_the_in_process_cover_density(dsn):
    """Postgres' own ts_rank_cd gives the score memplusplus.lexical computes for an AND or OR of our stems, on random texts."""
    rng = random.Random(7)
    conn = connect(dsn)
    compared = 0
    for _ in range(150):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 40)))
        terms = content_terms(" ".join(rng.sample(WORDS, rng.randint(1, 4))))
        if not terms:
            continue
        for conjunctive in (True, False):
            query = (" & " if conjunctive else " | ").join(quote(term) for term in terms)
            matched, score = conn.execute(
                "SELECT %s::tsvector @@ %s::tsquery, ts_rank_cd(%s::tsvector, %s::tsquery)",
                (tsvector(positional_stems(text)), query, tsvector(positional_stems(text)), query),
            ).fetchone()
            expected = ts_rank_cd((all_of if conjunctive else any_of)(terms), terms, positional_stems(text))
            assert score == pytest.approx(expected, rel=1e-6, abs=1e-7), (text, terms, conjunctive)
            present = set(positional_stems(text))
            assert matched == (set(terms) <= present if conjunctive else bool(set(terms) & present))
            compared += 1
    conn.close()
    assert compared > 200


TRICKY_TEXTS = [
    "Meeting on 2023-05-15 at 10:30 about internal tools.",
    "Email maya.patel@helix.com or visit https://helix.example.com/path/to/doc.html and www.helix.com",
    "Caroline's self-driving car costs $1,234.56 and version 1.2.3 v2 3rd 1st 42 -7 +8 3.14 1e5",
    "I'm can't won't LGBTQ e-mail co-op state-of-the-art foo_bar a/b/c.txt /usr/local/bin 192.168.0.1",
    "Café naïve résumé über-cool 10am 5pm 2pm-3pm #hashtag @mention <b>bold</b> &amp; ~tilde",
    "maya.patel e.g. U.S. node.js file.txt Mr.Smith covid-19 x-ray-3 well-known. 5-year-old mid-2023",
    "2023/05/15 15.05.2023 3:30pm 1990s '90s $5 no.1 100k 1.5k 10-20 10 - 20 user@localhost a@b.co",
    "Adding it, she added organized international evenings for biologists; emergency at the interval.",
    "I'm losing it every week.. Yeah.. well... ok",
]


def test_english_lexemes_are_postgres_to_tsvector(dsn):
    """memplusplus.english_tsearch gives the lexemes and positions of to_tsvector('english', ...):
    dates split into '2023' '-05' '-15', hosts and e-mail addresses whole, 'internal' -> 'intern'."""
    from memplusplus.english_tsearch import tsvector_positions

    conn = connect(dsn)
    for text in TRICKY_TEXTS:
        postgres, ours = conn.execute(
            "SELECT to_tsvector('english', %s)::text, %s::tsvector::text", (text, tsvector(tsvector_positions(text)))
        ).fetchone()
        assert ours == postgres, text
    conn.close()


def test_authors_or_query_is_postgres_to_tsquery(dsn):
    """The OR query's lexemes are those to_tsquery('english') makes of the authors' question words."""
    from memplusplus.lexical import authors_or_terms, authors_query_words

    conn = connect(dsn)
    for question in ["When would Melanie and Caroline probably visit where Jon painted sunsets?",
                     "Did Caroline's internal 5k run on 2023-05-15 go OK? Tell me about organizing it."]:
        words = authors_query_words(question, 3, 8)
        postgres = conn.execute("SELECT to_tsquery('english', %s)::text", (" | ".join(words),)).fetchone()[0]
        assert postgres == " | ".join(f"'{lexeme}'" for lexeme in authors_or_terms(question, 3, 8)), question
    conn.close()


def test_postgres_or_leg_is_the_in_process_one(dsn, encoder):
    settings = {"conjunctive": False, "k": 5, "min_term_chars": 3, "max_query_terms": 8, "recency_reserve": 0,
                "weights": {"lexical": 1.0, "tag": 0.0, "vector": 0.0}}
    docs = [Document(f"t{i}", text, None, datetime(2023, 1, 1 + i)) for i, text in enumerate(TRICKY_TEXTS)]
    pg, mem = pg_memory(dsn, encoder, **settings), mem_memory(encoder, **settings)
    pg.ingest(docs)
    mem.ingest(docs)
    for question in ["Which internal meeting was on 2023?", "Who emailed helix about the self-driving car?"]:
        got = [(h.doc_id, h.leg_ranks) for h in pg.retrieve(question)]
        assert got == [(h.doc_id, h.leg_ranks) for h in mem.retrieve(question)], question
        assert any(ranks for _, ranks in got)
    stored = pg.conn.execute(f"SELECT lex = to_tsvector('english', text) FROM {pg.table} ORDER BY seq").fetchall()
    assert all(same for (same,) in stored)
    pg.close()


# ---------------------------------------------------------------- the conjunctive leg: websearch_to_tsquery
def _websearch_questions() -> list[str]:
    """The pinned tricky questions, and random ones mixing "or", quotes, '-', operators and stop words."""
    from tests.test_websearch_query import POSTGRES_WEBSEARCH

    rng = random.Random(11)
    pieces = ["cats", "or", "OR", "the", "-", '"', "a", "dogs", "self-driving", "2023-05-15", "(", ")", "x:y", "and",
              "|", "&", "<", "!", "it's", "Q3", "e.g.", "-x", "or,", '"the cat"', "budget", "in", "Who", "2pm-3pm"]
    random_ones = [" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(400)]
    return [*POSTGRES_WEBSEARCH, *random_ones, "What happened in Q3 2024, or was it Q4?", "naïve café or résumé",
            'Who said "budget freeze" or "hiring pause" in May?', "cats or\tdogs", "cats --dogs", "orange or-juice"]


def test_websearch_parse_is_postgres_websearch_to_tsquery(dsn):
    """memplusplus.websearch_query gives websearch_to_tsquery('english', q)::text, character for character."""
    from memplusplus.websearch_query import websearch_query

    conn = connect(dsn)
    questions = _websearch_questions()
    postgres = conn.execute(
        "SELECT q, websearch_to_tsquery('english', q)::text FROM unnest(%s::text[]) WITH ORDINALITY AS u(q, i) ORDER BY i",
        (questions,),
    ).fetchall()
    conn.close()
    assert len(postgres) == len(questions)
    for question, expected in postgres:
        assert websearch_query(question).text == expected, question


def test_websearch_match_and_rank_are_postgres(dsn):
    """tsvector @@ websearch_to_tsquery and ts_rank_cd (as float4) agree with Postgres on random rows
    holding phrases, compounds, dates and stop words."""
    import numpy as np

    from memplusplus.english_tsearch import tsvector_positions
    from memplusplus.lexical import holds, ts_rank_cd
    from memplusplus.websearch_query import websearch_query

    rng = random.Random(7)
    vocab = "cat cats dog the a in hat self-driving car bus budget freeze hiring pause 2023-05-15 or not red blue".split()
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(3, 25))) for _ in range(60)]
    query_words = vocab + ["-cat", '"cat in the hat"', '"budget freeze"', '-"red blue"', "OR", '"the cat"', "-dog"]
    conn = connect(dsn)
    matched = 0
    for _ in range(60):
        question = " ".join(rng.choice(query_words) for _ in range(rng.randint(1, 5)))
        query = websearch_query(question)
        rows = conn.execute(
            "SELECT t, to_tsvector('english', t) @@ websearch_to_tsquery('english', %s), "
            "ts_rank_cd(to_tsvector('english', t), websearch_to_tsquery('english', %s)) "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i",
            (question, question, texts),
        ).fetchall()
        for text, holds_in_postgres, rank in rows:
            positions = tsvector_positions(text)
            ours = query.root is not None and holds(query.root, positions)
            assert ours == holds_in_postgres, (question, text)
            ours_rank = 0.0 if query.root is None else ts_rank_cd(query.root, query.lexemes(), positions)
            assert np.float32(ours_rank) == np.float32(rank), (question, text)
            matched += ours
    conn.close()
    assert matched > 300


def test_postgres_conjunctive_leg_is_the_in_process_one(dsn, encoder):
    """Both backends run the authors' conjunctive leg: the same rows, in the same order, for questions
    with "or", quoted phrases, '-' and dates; the Postgres one calls websearch_to_tsquery itself."""
    settings = {"conjunctive": True, "k": 6, "recency_reserve": 0, "weights": {"lexical": 1.0, "tag": 0.0, "vector": 0.0}}
    texts = TRICKY_TEXTS + [
        "Alice signed off on the offsite.", "Bob will approve the travel budget tomorrow.",
        "The budget was approved by Bob.", "The budget for travel was approved.", "The travel budget was approved.",
    ]
    docs = [Document(f"t{i}", text, None, datetime(2023, 1, 1 + i)) for i, text in enumerate(texts)]
    pg, mem = pg_memory(dsn, encoder, **settings), mem_memory(encoder, **settings)
    pg.ingest(docs)
    mem.ingest(docs)
    lexical_hits = 0
    for question in ["Did Alice or Bob approve the budget?", 'Was the "travel budget" approved?',
                     "approved budget -travel", "What was on 2023-05-15 about internal tools?",
                     "Who has a self-driving car or an x-ray?", "the or a"]:
        got = [(h.doc_id, h.leg_ranks) for h in pg.retrieve(question)]
        assert got == [(h.doc_id, h.leg_ranks) for h in mem.retrieve(question)], question
        lexical_hits += sum(1 for _, ranks in got if "lexical" in ranks)
    stored = pg.conn.execute(f"SELECT lex = to_tsvector('english', text) FROM {pg.table} ORDER BY seq").fetchall()
    assert all(same for (same,) in stored)
    pg.close()
    assert lexical_hits >= 8
