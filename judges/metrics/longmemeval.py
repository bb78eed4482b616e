"""LongMemEval_S retrieval scores as its official evaluation computes them, over our rankings.

Source of the rules (re-implemented here, not copied): ``xiaowu0162/LongMemEval`` (MIT),
``src/retrieval/run_retrieval.py`` (``process_item_flat_index``, the averaging in ``main``; commit
b60a5b7d) and ``src/retrieval/eval_utils.py`` (``evaluate_retrieval``,
``evaluate_retrieval_turn2session``, ``dcg``, ``ndcg``; commit 6a92d1ab).

* The corpus at turn granularity holds the **user** turns only, in haystack order.
* A session whose id contains ``answer`` is an answer session. Its user turns with ``has_answer``
  are the gold turns; its other user turns are relabelled to a different ("noans") session, so
  retrieving them is neither a turn hit nor a session hit. Turns of other sessions keep their
  session.
* A question is skipped (no score) when it is an abstention question (``_abs`` in its id) or has no
  gold user turn (the 51 single-session-assistant questions of our 499).
* Turn level at k: recall_any / recall_all of the gold turns among the first k corpus turns of the
  ranking; nDCG with LongMemEval's discount (positions 0 and 1 undiscounted) over an ideal of
  ``min(k, number of gold turns)`` ones.
* Session level at k: turns map to their (relabelled) session; k is widened to the shortest prefix
  of the turn ranking that holds k distinct sessions (a "noans" label counts as a session of its
  own); recall_any / recall_all of the gold sessions in that prefix; nDCG over the prefix's turns,
  duplicates kept, against ``min(widened k, number of gold turns)`` ones.
* Reported at k = 1, 3, 5, 10, 30, 50.

Our memory systems ingest every turn (Mem++ stores the whole history, and the answerer reads
assistant turns too), so the ranking a system returns may hold assistant turns. They are not in
the official corpus: :func:`corpus_ranking` drops them, keeping the order of the user turns,
*before* any cut at k. The official code ranks the whole corpus; a system whose ranking stops
early (Mem++ ranks its fused candidates and recency pool only) leaves the rest unranked, and an
unranked turn is never counted as found. Where the ranking never reaches k distinct sessions the
widened k is taken as one past the ranking's end, as the official loop ends one past the corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from judges.metrics.retrieval import dcg

NAN = float("nan")
OFFICIAL_KS: tuple[int, ...] = (1, 3, 5, 10, 30, 50)
ANSWER_MARK = "answer"  # an answer session's id contains it (run_retrieval.py)
ABSTENTION_MARK = "_abs"

__all__ = [
    "OFFICIAL_KS",
    "Turn",
    "OfficialCorpus",
    "official_corpus",
    "is_scored",
    "corpus_ranking",
    "turn_scores",
    "widened_k",
    "session_scores",
    "official_metrics",
]


@dataclass(frozen=True)
class Turn:
    """One haystack turn as the official corpus builder sees it."""

    doc_id: str
    session_id: str
    role: str
    has_answer: bool | None = None


@dataclass(frozen=True)
class OfficialCorpus:
    """The user-turn corpus of one question: each turn's session label, and the gold turns."""

    session_of: dict[str, str]
    gold: frozenset[str]

    @property
    def gold_sessions(self) -> frozenset[str]:
        return frozenset(self.session_of[t] for t in self.gold)


def official_corpus(turns: Iterable[Turn]) -> OfficialCorpus:
    """User turns only; non-gold user turns of an answer session get the label ``<session>#noans``."""
    session_of: dict[str, str] = {}
    gold: set[str] = set()
    for turn in turns:
        if turn.role != "user":
            continue
        answer_session = ANSWER_MARK in turn.session_id
        if answer_session and turn.has_answer is True:
            gold.add(turn.doc_id)
            session_of[turn.doc_id] = turn.session_id
        elif answer_session:
            session_of[turn.doc_id] = f"{turn.session_id}#noans"
        else:
            session_of[turn.doc_id] = turn.session_id
    return OfficialCorpus(session_of, frozenset(gold))


def is_scored(question_id: str, corpus: OfficialCorpus) -> bool:
    """False for abstention questions and for questions without a gold user turn."""
    return ABSTENTION_MARK not in question_id and bool(corpus.gold)


def corpus_ranking(ranked_ids: Sequence[str], corpus: OfficialCorpus) -> list[str]:
    """The ranking restricted to corpus (user) turns, order kept, repeats dropped."""
    return list(dict.fromkeys(d for d in ranked_ids if d in corpus.session_of))


def _recall_any_all(found: set[str], gold: Iterable[str]) -> tuple[float, float]:
    gold = set(gold)
    hit = len(gold & found)
    return float(hit > 0), float(hit == len(gold))


def _ndcg(relevances: list[float], width: int, n_relevant: int) -> float:
    ideal = dcg([1.0] * min(width, n_relevant), width)
    return dcg(relevances, width) / ideal if ideal > 0 else 0.0


def turn_scores(ranking: Sequence[str], corpus: OfficialCorpus, k: int) -> tuple[float, float, float]:
    """(recall_any, recall_all, ndcg) at turn level; ``ranking`` already restricted to the corpus."""
    head = ranking[:k]
    any_, all_ = _recall_any_all(set(head), corpus.gold)
    relevances = [1.0 if d in corpus.gold else 0.0 for d in head]
    return any_, all_, _ndcg(relevances, k, len(corpus.gold))


def widened_k(sessions: Sequence[str], k: int) -> int:
    """Shortest prefix holding k distinct sessions; one past the end when there are fewer."""
    seen: set[str] = set()
    for position, session in enumerate(sessions):
        seen.add(session)
        if len(seen) >= k:
            return max(position + 1, k)
    return max(len(sessions) + 1, k)


def session_scores(ranking: Sequence[str], corpus: OfficialCorpus, k: int) -> tuple[float, float, float]:
    """(recall_any, recall_all, ndcg) at session level; ``ranking`` already restricted to the corpus."""
    sessions = [corpus.session_of[d] for d in ranking]
    width = widened_k(sessions, k)
    head = sessions[:width]
    gold_sessions = corpus.gold_sessions
    any_, all_ = _recall_any_all(set(head), gold_sessions)
    relevances = [1.0 if s in gold_sessions else 0.0 for s in head]
    n_relevant = sum(1 for s in corpus.session_of.values() if s in gold_sessions)
    return any_, all_, _ndcg(relevances, width, n_relevant)


def official_metrics(
    question_id: str, ranked_ids: Sequence[str], corpus: OfficialCorpus, ks: Sequence[int] = OFFICIAL_KS
) -> dict[str, float]:
    """``recall_any@k``, ``recall_all@k``, ``ndcg@k`` and their ``session_`` twins; NaN when skipped."""
    scored = is_scored(question_id, corpus)
    ranking = corpus_ranking(ranked_ids, corpus)
    out: dict[str, float] = {}
    for level, scores in (("", turn_scores), ("session_", session_scores)):
        for k in ks:
            values = scores(ranking, corpus, k) if scored else (NAN, NAN, NAN)
            for name, value in zip(("recall_any", "recall_all", "ndcg"), values):
                out[f"{level}{name}@{k}"] = value
    return out
