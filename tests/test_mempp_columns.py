"""The columnar read path gives the row-by-row answers: scope, lexical, tag and vector legs.

Each check compares the store's arrays against a plain per-row reading of the rule the paper
states (scope: active rows dated up to the end of the as-of day; legs: in-scope rows only, ties
to the later-ingested row). A stub encoder with chosen vectors keeps ties exact.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta

import numpy as np

from memplusplus import Document, MemPlusPlus, MemPPConfig
from memplusplus.memory import tag_leg, vector_leg
from memplusplus.lexical import PositionIndex, stem_matches
from memplusplus.ranking import end_of_day, in_scope
from memplusplus.text import positional_stems
from tests.write_time_fakes import OneHotEncoder


class ChosenVectors(OneHotEncoder):
    """Vectors looked up by text (unit e_i for "v<i> ..." texts); queries likewise."""

    def _index(self, text: str) -> int:
        return int(text.split()[0][1:]) % self.dimension if text.startswith("v") else 0


def memory(**overrides) -> MemPlusPlus:
    return MemPlusPlus(MemPPConfig(**overrides), encoder=ChosenVectors(), clock=lambda: datetime(2030, 1, 1))


def test_scope_mask_matches_the_per_row_rule_at_the_day_boundary():
    rng = random.Random(7)
    base = datetime(2023, 5, 1)
    docs = []
    for i in range(300):
        moment = None if i % 17 == 0 else base + timedelta(seconds=rng.randrange(0, 10 * 86400))
        docs.append(Document(f"d{i}", f"v{i} note {i}", f"Author {i % 5}", moment))
    docs.append(Document("edge-in", "v1 edge in", None, datetime(2023, 5, 4, 23, 59, 59, 999999)))
    docs.append(Document("edge-out", "v1 edge out", None, datetime(2023, 5, 5)))
    mem = memory()
    mem.ingest(docs)
    for seq in range(0, 300, 9):
        mem.archive(mem.store.rows[seq].doc_id)
    for as_of in (None, date(2023, 5, 4), date(2023, 4, 1), date(2023, 5, 20)):
        theta = None if as_of is None else end_of_day(as_of)
        expected = [row.active and in_scope(row.date, theta) for row in mem.store.rows]
        assert mem.scope_mask(as_of).tolist() == expected
    mask = mem.scope_mask(date(2023, 5, 4))
    assert mask[mem.store.by_doc_id["edge-in"]] and not mask[mem.store.by_doc_id["edge-out"]]


def test_postings_added_after_a_read_are_seen_and_match_set_semantics():
    mem = memory()
    stems = PositionIndex(positional_stems)
    mem.ingest([Document("a", "v1 freight contract signed", None, None), Document("b", "v2 freight delayed", None, None)])
    scope = mem.scope_mask(None)
    assert stem_matches(stems.update(mem.store), ["freight", "contract"], True, scope).tolist() == [0]
    mem.ingest([Document("c", "v3 the contract for freight", None, None), Document("d", "v4 contract only", None, None)])
    scope = mem.scope_mask(None)
    assert stem_matches(stems.update(mem.store), ["freight", "contract"], True, scope).tolist() == [0, 2]
    assert stem_matches(stems.update(mem.store), ["freight", "contract"], False, scope).tolist() == [0, 1, 2, 3]
    mem.archive("a")
    assert stem_matches(stems.update(mem.store), ["freight", "contract"], True, mem.scope_mask(None)).tolist() == [2]


def test_position_index_holds_each_rows_positional_stems_and_postings():
    text = "The freight contracts, and the freight contract's renewal: contract freight freight."
    mem = memory()
    mem.ingest([Document("a", text, None, None), Document("b", "v2 renewal", None, None)])
    index = PositionIndex(positional_stems).update(mem.store)
    assert index.positions[0] == positional_stems(text) and index.positions[0]["freight"] == [2, 6, 11, 12]
    assert index.postings("renew").tolist() == [0, 1] and index.postings("absent").tolist() == []


def test_tag_leg_counts_shared_terms_and_breaks_ties_to_the_later_row():
    mem = memory()
    mem.ingest([
        Document("a", "v1 one", "Maya Patel", None),
        Document("b", "v2 two", "Maya Ali", None),
        Document("c", "v3 three", "Omar Patel", None),
        Document("d", "v4 four", "Maya Patel", None),
        Document("e", "v5 five", "Chef Lee", None),
    ])
    scope = mem.scope_mask(None)
    assert tag_leg(mem.store, ["maya", "patel"], scope, 10) == [3, 0, 2, 1]
    scope[3] = False
    assert tag_leg(mem.store, ["maya", "patel"], scope, 2) == [0, 2]


def test_vector_leg_keeps_exact_ties_at_the_cut_in_later_ingest_order():
    mem = memory()
    # 30 rows share the query's vector exactly; 10 others point elsewhere.
    docs = [Document(f"t{i}", f"v3 tied {i}", None, None) for i in range(30)]
    docs += [Document(f"o{i}", f"v5 other {i}", None, None) for i in range(10)]
    mem.ingest(docs)
    scope = mem.scope_mask(None)
    query = mem.encoder.encode_one("v3 query")
    assert vector_leg(mem.store, query, scope, 5) == [29, 28, 27, 26, 25]
    scope[27] = False
    assert vector_leg(mem.store, query, scope, 4) == [29, 28, 26, 25]
    only_two = np.zeros(len(mem.store), dtype=bool)
    only_two[[4, 35]] = True
    assert vector_leg(mem.store, query, only_two, 5) == [4, 35]
