"""Cover-density ranking of one document for a set of query terms.

This reproduces the scoring of Postgres ``ts_rank_cd`` with default weights and normalisation 0
(Clarke, Cormack and Tudhope's cover density ranking): the document is reduced to the ordered
positions where query terms occur; a *cover* is a shortest stretch that satisfies the query
(every term for a conjunctive query, any term for a disjunctive one); covers are found left to
right, each next search starting just after the previous cover's first position. Every cover adds
``0.1 / (1 + noise)``, where 0.1 is the weight Postgres gives unlabelled positions and ``noise`` is
the number of non-matching word positions inside the cover.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

UNLABELLED_WEIGHT = 0.1


def _satisfied(found: set[str], terms: frozenset[str], conjunctive: bool) -> bool:
    return found >= terms if conjunctive else bool(found)


def cover_density(positions: Mapping[str, Sequence[int]], terms: Sequence[str], conjunctive: bool) -> float:
    """Score a document given its stem -> positions map and the query's distinct stems."""
    wanted = frozenset(terms)
    occurrences = sorted((pos, term) for term in wanted for pos in positions.get(term, ()))
    if not occurrences or (conjunctive and not wanted <= set(positions)):
        return 0.0
    score = 0.0
    start = 0
    while start < len(occurrences):
        found: set[str] = set()
        end = None
        for index in range(start, len(occurrences)):
            found.add(occurrences[index][1])
            if _satisfied(found, wanted, conjunctive):
                end = index
                break
        if end is None:
            break
        found = set()
        begin = end
        for index in range(end, start - 1, -1):
            found.add(occurrences[index][1])
            if _satisfied(found, wanted, conjunctive):
                begin = index
                break
        first_pos, last_pos = occurrences[begin][0], occurrences[end][0]
        entries_between = end - begin
        noise = (last_pos - first_pos) - entries_between
        if noise < 0:
            noise = entries_between // 2
        # Cpos = entries / sum(1/weight) = weight when every position is unlabelled.
        score += UNLABELLED_WEIGHT / (1 + noise)
        start = begin + 1
    return score
