"""The authors' conjunctive query: Postgres' ``websearch_to_tsquery('english', question)``.

AIDAChip-Inc/mem-plus-plus memory/store.py:373-379 sends the whole question through it when their
OR switch is off (OrgMemBench, LongMemEval_S) or no question word survives. Every expected text
below is Postgres 18's own ``websearch_to_tsquery('english', q)::text`` for that string; the
Postgres-backed tests in test_postgres_backend.py recompute them, and the match and rank values,
on a live server.
"""

import pytest

from memplusplus.english_tsearch import tsvector_positions
from memplusplus.lexical import holds, ts_rank_cd
from memplusplus.websearch_query import websearch_query

# question -> websearch_to_tsquery('english', question)::text, as Postgres 18 prints it
POSTGRES_WEBSEARCH = {
    # the word "or" between two operands is OR; AND binds tighter
    "Did Alice or Bob approve the budget?": "'alic' | 'bob' & 'approv' & 'budget'",
    "a b or c d or e": "'b' | 'c' & 'd' | 'e'",
    "cats or dogs": "'cat' | 'dog'",
    "cats OR -dogs": "'cat' | !'dog'",
    "cats or, dogs": "'cat' | 'dog'",
    'cats or"dogs"': "'cat' | 'dog'",
    "cats or the dogs": "'cat' | 'dog'",
    "cats or or dogs": "'cat' | 'dog'",
    # "or" first, last, or glued to a word is a (stop) word
    "or cats": "'cat'",
    "cats or": "'cat'",
    "walk or": "'walk'",
    "self-driving or not": "'self-driv' <-> 'self' <-> 'drive'",
    "the or a": "",
    # quotes: a phrase, stop words leave gaps; an unclosed quote runs to the end
    '"the cat in the hat" ok': "'cat' <3> 'hat' & 'ok'",
    '"unclosed phrase': "'unclos' <-> 'phrase'",
    '"" x': "'x'",
    # a leading '-' is NOT; a NOT of stop words vanishes
    "a -b": "!'b'",
    "a - b": "!'b'",
    "-a b": "'b'",
    "x -": "'x'",
    'a -"b c"': "!( 'b' <-> 'c' )",
    "-": "",
    # punctuation, operators and stop words
    "a & b | c": "'b' & 'c'",
    "x <-> y": "'x' & 'y'",
    "a(b)c": "'b' & 'c'",
    "abc:def": "'abc' & 'def'",
    "note: x": "'note' & 'x'",
    "q3 (2024)": "'q3' & '2024'",
    "Tom's don't": "'tom'",
    "it's": "",
    "who": "",
    "'quoted'": "'quot'",
    # dates, compounds, hosts, numbers: the English parser's tokens, as to_tsvector makes them
    "2023-05-15 meeting": "'2023' <-> '-05' <-> '-15' & 'meet'",
    "self-driving cars": "'self-driv' <-> 'self' <-> 'drive' & 'car'",
    "e.g. this": "'e.g'",
    "U.S. trip": "'u.s' & 'trip'",
    "v1.2.3 release": "'v1.2.3' & 'releas'",
    "foo@bar.com": "'foo@bar.com'",
    "3.5 hours": "'3.5' & 'hour'",
}


@pytest.mark.parametrize("question", sorted(POSTGRES_WEBSEARCH))
def test_parse_is_postgres_websearch_to_tsquery(question):
    assert websearch_query(question).text == POSTGRES_WEBSEARCH[question]


def test_or_is_an_operator_not_a_stop_word_and_and_binds_tighter():
    query = websearch_query("Did Alice or Bob approve the budget?")
    alice = tsvector_positions("Alice signed off on the offsite.")
    bob_alone = tsvector_positions("Bob approved the offsite.")
    bob_budget = tsvector_positions("The budget was approved by Bob.")
    assert holds(query.root, alice)  # 'alic' alone satisfies the left side of the OR
    assert not holds(query.root, bob_alone)  # the right side needs 'bob' & 'approv' & 'budget'
    assert holds(query.root, bob_budget)


def test_a_quoted_phrase_needs_its_words_in_order_at_their_distance():
    root = websearch_query('"cat in the hat"').root
    assert holds(root, tsvector_positions("The cat in the hat came back."))
    assert not holds(root, tsvector_positions("The hat in the cat came back."))
    assert not holds(root, tsvector_positions("The cat sat on the hat."))  # 'hat' 4 after 'cat', not 3


def test_a_leading_minus_excludes_rows_holding_the_word():
    root = websearch_query("budget -travel").root
    assert holds(root, tsvector_positions("The hiring budget."))
    assert not holds(root, tsvector_positions("The travel budget."))


def test_rank_is_ts_rank_cd_as_a_float4():
    query = websearch_query("Did Alice or Bob approve the budget?")
    rank = lambda text: ts_rank_cd(query.root, query.lexemes(), tsvector_positions(text))  # noqa: E731
    # One cover of one word: 0.1 (Postgres returns float4 0.1, printed 0.1).
    assert rank("Alice signed off on the offsite.") == pytest.approx(0.1, rel=1e-7)
    # budget@2 approv@4 bob@6: one cover over 5 positions holding 3 lexemes, 2 noise: 0.1 / 3.
    assert rank("The budget was approved by Bob.") == pytest.approx(0.1 / 3, rel=1e-6)
    # bob@1 approv@3 budget@6: 3 noise: 0.1 / 4 (Postgres: 0.025).
    assert rank("Bob will approve the travel budget tomorrow.") == pytest.approx(0.025, rel=1e-6)
    assert rank("Nothing here.") == 0.0
