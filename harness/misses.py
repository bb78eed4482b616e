"""Where each miss came from, from a record alone (``gold_docs``, the judge's grade, errata): the gold
is wrong, right, lost at synthesis (gold read), at the budget (gold returned, cut) or at retrieval
(no gold returned), no gold evidence, or no grade; ``miss_line`` says each in words."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

import pandas as pd

from judges.aggregate import OVERALL, natural_key

RIGHT, SYNTHESIS, BUDGET, RETRIEVAL, GOLD_WRONG, NO_GOLD, NO_GRADE = (
    "right", "synthesis", "budget", "retrieval", "gold wrong", "no gold", "no grade")
OUTCOMES = (RIGHT, RETRIEVAL, BUDGET, SYNTHESIS, GOLD_WRONG, NO_GOLD, NO_GRADE)
PASS_MARK = 50.0  # judge scores are 0-100; a question is right when its mean grade is at least this


def attribute(record: dict[str, Any], metric: str, wrong_golds: Collection[str] = ()) -> str | None:
    """The outcome of one record (None for a retrieval-only record: nothing was answered)."""
    if "answer" not in record:
        return None
    if record.get("qid") in wrong_golds or (record.get("erratum") or {}).get("wrong_gold"):
        return GOLD_WRONG
    score = (record.get("metrics") or {}).get(metric)
    if record.get("answer") is None or score is None:
        return NO_GRADE
    if float(score) >= PASS_MARK:
        return RIGHT
    golds = record.get("gold_docs") or []
    if not golds:
        return NO_GOLD
    if any(g.get("read") for g in golds):
        return SYNTHESIS
    if any(g.get("budget_cut") for g in golds):
        return BUDGET
    return RETRIEVAL


def miss_line(outcome: str | None) -> str:
    """The line ``explain`` prints."""
    if outcome is None:
        return "miss: not answered (retrieval-only run), so no miss to attribute"
    return {
        RIGHT: "miss: none (judged right)",
        SYNTHESIS: "miss: lost at synthesis (a gold document was read; the answer was judged wrong)",
        BUDGET: "miss: lost at the budget (a gold document was returned but cut before the answerer read it)",
        RETRIEVAL: "miss: lost at retrieval (no gold document among what the answerer could read)",
        GOLD_WRONG: "miss: the gold itself is wrong (errata)",
        NO_GOLD: "miss: judged wrong, but the question names no gold evidence to trace",
        NO_GRADE: "miss: no answer or no parsed grade",
    }[outcome]


def miss_table(runs: Iterable[tuple[str, Sequence[dict[str, Any]]]], metric: str,
               wrong_golds: Collection[str] = (), exclude_from_overall: Collection[str] = ()) -> pd.DataFrame:
    """Per (system, category) and overall: how many questions ended in each outcome (shares in %)."""
    rows = []
    for system, records in runs:
        outcomes = [(str(r.get("category")), attribute(r, metric, wrong_golds)) for r in records]
        outcomes = [(c, o) for c, o in outcomes if o is not None]
        groups: dict[str, list[str]] = {}
        for category, outcome in outcomes:
            groups.setdefault(category, []).append(outcome)
        groups = {c: groups[c] for c in sorted(groups, key=natural_key)}
        groups[OVERALL] = [o for c, o in outcomes if c not in set(exclude_from_overall)]
        for category, found in groups.items():
            row: dict[str, Any] = {"system": system, "category": category, "n": len(found)}
            for outcome in OUTCOMES:
                row[outcome] = 100.0 * found.count(outcome) / len(found) if found else float("nan")
            rows.append(row)
    return pd.DataFrame(rows, columns=["system", "category", "n", *OUTCOMES])
