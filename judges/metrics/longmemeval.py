"""LongMemEval_S retrieval scores as its evaluation computes them (``xiaowu0162/LongMemEval``
``src/retrieval/run_retrieval.py`` @ b60a5b7d, ``eval_utils.py`` @ 6a92d1ab; re-implemented).

The corpus holds the user turns only. In an answer session (id contains ``answer``) the turns with
``has_answer`` are gold and the others are relabelled to a "noans" session, so they hit nothing. A
question is skipped when it abstains (``_abs``) or has no gold user turn (the 51
single-session-assistant questions of our 499). Session level widens k to the shortest prefix of
the turn ranking holding k distinct sessions ("noans" counts as one), nDCG over that prefix's turns.
Our systems may rank assistant turns: they are dropped before any cut at k. A ranking that stops
early leaves the rest unranked (never found); one that never reaches k sessions widens k to one
past its end, as the official loop ends one past the corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from judges.metrics.ranking import ndcg

NAN = float("nan")
OFFICIAL_KS: tuple[int, ...] = (1, 3, 5, 10, 30, 50)
ANSWER_MARK = "answer"  # an answer session's id contains it (run_retrieval.py)
ABSTENTION_MARK = "_abs"


@dataclass(frozen=True)
class Turn:
    doc_id: str
    session_id: str
    role: str
    has_answer: bool | None = None


@dataclass(frozen=True)
class OfficialCorpus:
    """One question's user turns: each turn's session label, and the gold turns."""

    session_of: dict[str, str]
    gold: frozenset[str]

    @property
    def gold_sessions(self) -> frozenset[str]:
        return frozenset(self.session_of[t] for t in self.gold)


def official_corpus(turns: Iterable[Turn]) -> OfficialCorpus:
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
    return ABSTENTION_MARK not in question_id and bool(corpus.gold)


def corpus_ranking(ranked_ids: Sequence[str], corpus: OfficialCorpus) -> list[str]:
    """The ranking restricted to corpus (user) turns, order kept, repeats dropped."""
    return list(dict.fromkeys(d for d in ranked_ids if d in corpus.session_of))


def _recall_any_all(found: set[str], gold: Iterable[str]) -> tuple[float, float]:
    gold = set(gold)
    hit = len(gold & found)
    return float(hit > 0), float(hit == len(gold))


def turn_scores(ranking: Sequence[str], corpus: OfficialCorpus, k: int) -> tuple[float, float, float]:
    """(recall_any, recall_all, ndcg) at turn level; ``ranking`` already restricted to the corpus."""
    head = ranking[:k]
    any_, all_ = _recall_any_all(set(head), corpus.gold)
    relevances = [1.0 if d in corpus.gold else 0.0 for d in head]
    return any_, all_, ndcg(relevances, k, len(corpus.gold))


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
    return any_, all_, ndcg(relevances, width, n_relevant)


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
