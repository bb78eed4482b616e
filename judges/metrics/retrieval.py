"""Retrieval metrics over plain document ids, computed the way LongMemEval's own code computes them.

Nothing here knows about a memory system, a loader or a dataset: every function takes ranked ids,
gold ids and (optionally) a document -> session mapping, and returns floats.

Reference: LongMemEval (Wu et al., ICLR 2025, arXiv:2410.10813), repository ``xiaowu0162/LongMemEval``
(MIT), files ``src/retrieval/eval_utils.py`` and ``src/retrieval/run_retrieval.py`` (read at commits
6a92d1ab / b60a5b7d). The facts carried over, re-implemented here:

* ``recall_any@k`` = 1 if any gold id is among the top k, ``recall_all@k`` = 1 if every gold id is.
* DCG uses the discount ``rel[0] + sum_{i>=1} rel[i] / log2(i + 1)`` (0-based positions), i.e. the
  first two positions are both undiscounted. This differs from the common ``rel[i] / log2(i + 2)``.
* The ideal DCG is the DCG of *all* corpus relevances sorted descending and cut at k, i.e.
  ``min(k, number of relevant corpus items)`` ones. It does not depend on how long the ranking is.
  If the ideal DCG is 0 the code returns 0; we return NaN instead (see below).
* Session-level scores of a turn-level ranking (``evaluate_retrieval_turn2session``): turn ids are
  mapped to session ids, gold turns to the set of their sessions, and k is *widened* to the shortest
  prefix of the turn ranking that holds k distinct sessions. So truncation happens AFTER
  de-duplication: recall uses the first k distinct sessions. nDCG, however, is computed on that
  widened turn-level prefix *with duplicates kept* (each turn of a gold session counts as a hit), and
  its ideal is formed from every corpus turn whose session is gold, cut at the widened k.
* Questions skipped when averaging (``run_retrieval.py``): abstention questions (``"_abs"`` in the
  question id) and questions with no target turn (no user turn with ``has_answer``). Here an empty
  gold set yields NaN so the caller excludes and counts it; abstention is the caller's decision.
* In turn mode LongMemEval relabels the non-evidence turns of an evidence session to a different
  ("noans") session id, so retrieving such a turn does not count as finding the evidence session.
  ``mask_non_evidence_docs`` builds a mapping that reproduces this when it is wanted.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

NAN = float("nan")

__all__ = [
    "RankMetrics",
    "QuestionMetrics",
    "dcg",
    "recall_any_at_k",
    "recall_all_at_k",
    "recall_at_k",
    "ndcg_at_k",
    "to_sessions",
    "session_prefix_length",
    "session_ndcg_at_k",
    "mask_non_evidence_docs",
    "in_budget_recall",
    "compute_question_metrics",
]


# ---------------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------------


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def _check_distinct(ranked_ids: Sequence[str]) -> None:
    if len(set(ranked_ids)) != len(ranked_ids):
        raise ValueError("ranked_ids contains duplicate ids; a ranking must list each document once")


def _found_in_top_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> tuple[int, int]:
    """(number of distinct gold ids in the top k, number of distinct gold ids)."""
    _check_k(k)
    gold_set = set(gold)
    top = set(ranked_ids[:k])
    return len(gold_set & top), len(gold_set)


# ---------------------------------------------------------------------------------------------
# document level
# ---------------------------------------------------------------------------------------------


def dcg(relevances: Sequence[float], k: int) -> float:
    """DCG of the first k relevances with LongMemEval's discount (eval_utils.py ``dcg``).

    ``rel[0] + sum_{i=1}^{n-1} rel[i] / log2(i + 1)`` over ``n = min(k, len(relevances))``:
    positions 0 and 1 are both undiscounted, position 2 is divided by log2(3), and so on.
    """
    _check_k(k)
    head = list(relevances[:k])
    if not head:
        return 0.0
    return float(head[0]) + sum(float(r) / math.log2(i + 1) for i, r in enumerate(head) if i >= 1)


def recall_any_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 if at least one gold id is in the top k, else 0.0; NaN when gold is empty."""
    found, total = _found_in_top_k(ranked_ids, gold, k)
    if total == 0:
        return NAN
    return 1.0 if found > 0 else 0.0


def recall_all_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 if every gold id is in the top k, else 0.0; NaN when gold is empty."""
    found, total = _found_in_top_k(ranked_ids, gold, k)
    if total == 0:
        return NAN
    return 1.0 if found == total else 0.0


def recall_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """Fraction of the distinct gold ids found in the top k; NaN when gold is empty.

    Not part of LongMemEval's output (it reports only any/all); a finer-grained extra.
    """
    found, total = _found_in_top_k(ranked_ids, gold, k)
    if total == 0:
        return NAN
    return found / total


def ndcg_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """Binary-relevance nDCG@k as in LongMemEval's eval_utils.py ``ndcg``.

    Actual DCG: relevances (1 if in gold) of the top-k ranked ids, with :func:`dcg`'s discount.
    Ideal DCG: ``min(k, |gold|)`` ones, independent of the ranking's length (LongMemEval sorts the
    relevances of the whole corpus; that equals |gold| ones when every gold id is a corpus document,
    which is assumed here). NaN when gold is empty (LongMemEval returns 0 and then skips the question).
    Raises ValueError on duplicate ranked ids (they would inflate DCG above the ideal).
    """
    _check_k(k)
    _check_distinct(ranked_ids)
    gold_set = set(gold)
    if not gold_set:
        return NAN
    actual = dcg([1.0 if doc_id in gold_set else 0.0 for doc_id in ranked_ids[:k]], k)
    ideal = dcg([1.0] * min(k, len(gold_set)), k)
    return actual / ideal


# ---------------------------------------------------------------------------------------------
# session level (a turn/document ranking judged by the sessions it reaches)
# ---------------------------------------------------------------------------------------------


def _session(doc_id: str, session_of: Mapping[str, str]) -> str:
    """Session of a document; a document absent from the mapping is its own session."""
    return session_of.get(doc_id, doc_id)


def to_sessions(ranked_ids: Sequence[str], session_of: Mapping[str, str]) -> list[str]:
    """Map ranked document ids to session ids, de-duplicated, first occurrence kept.

    No truncation happens here: callers cut the *returned* list at k, which is what LongMemEval's
    ``evaluate_retrieval_turn2session`` does for recall (it widens the turn prefix until it holds k
    distinct sessions, i.e. de-duplicate first, then truncate). Ids missing from ``session_of`` are
    treated as their own session.
    """
    seen: set[str] = set()
    sessions: list[str] = []
    for doc_id in ranked_ids:
        sess = _session(doc_id, session_of)
        if sess not in seen:
            seen.add(sess)
            sessions.append(sess)
    return sessions


def session_prefix_length(ranked_ids: Sequence[str], session_of: Mapping[str, str], k: int) -> int:
    """Length of the shortest prefix of ``ranked_ids`` that holds k distinct sessions.

    This is LongMemEval's "effective k" for turn->session evaluation. When the ranking never reaches
    k distinct sessions the whole ranking's length is returned.
    """
    _check_k(k)
    seen: set[str] = set()
    for position, doc_id in enumerate(ranked_ids):
        seen.add(_session(doc_id, session_of))
        if len(seen) == k:
            return position + 1
    return len(ranked_ids)


def session_ndcg_at_k(
    ranked_ids: Sequence[str],
    session_of: Mapping[str, str],
    gold_sessions: Collection[str],
    k: int,
) -> float:
    """Session-level nDCG@k of a document ranking, as LongMemEval's turn->session evaluation.

    With ``m = session_prefix_length(ranked_ids, session_of, k)``: the actual DCG is taken over the
    first m *documents* (duplicates kept), a document being relevant when its session is gold; the
    ideal DCG is ``min(max(m, k), R)`` ones, where R counts the documents (keys of ``session_of``,
    plus any ranked id) whose session is gold. ``session_of`` must therefore cover the whole corpus,
    not only the retrieved documents, for R to match LongMemEval. ``max(m, k)`` only matters when
    the ranking holds fewer than k distinct sessions (LongMemEval ranks the whole corpus, so its
    widened k is never below k). NaN when there is no gold session.
    """
    _check_k(k)
    _check_distinct(ranked_ids)
    gold_set = set(gold_sessions)
    if not gold_set:
        return NAN
    m = session_prefix_length(ranked_ids, session_of, k)
    width = max(m, k)
    relevances = [1.0 if _session(d, session_of) in gold_set else 0.0 for d in ranked_ids[:m]]
    universe = set(session_of) | set(ranked_ids)
    n_relevant = sum(1 for d in universe if _session(d, session_of) in gold_set)
    if n_relevant == 0:
        # gold sessions with no document in the corpus: nothing could be found
        return 0.0
    return dcg(relevances, width) / dcg([1.0] * min(width, n_relevant), width)


def mask_non_evidence_docs(session_of: Mapping[str, str], evidence_ids: Collection[str]) -> dict[str, str]:
    """Copy of ``session_of`` where non-evidence documents of evidence sessions get a pseudo-session.

    LongMemEval (``process_item_flat_index`` in run_retrieval.py, turn granularity) renames the
    non-evidence user turns of an answer session (``answer_...`` -> ``noans_...``), so they do not
    count as reaching the gold session. The pseudo-session here is ``"<session>#non-evidence"``.
    """
    evidence = set(evidence_ids)
    gold_sessions = {session_of[e] for e in evidence if e in session_of}
    masked: dict[str, str] = {}
    for doc_id, sess in session_of.items():
        if sess in gold_sessions and doc_id not in evidence:
            masked[doc_id] = f"{sess}#non-evidence"
        else:
            masked[doc_id] = sess
    return masked


# ---------------------------------------------------------------------------------------------
# rendered-context budget
# ---------------------------------------------------------------------------------------------


def in_budget_recall(gold: Collection[str], block_starts: Mapping[str, int], budget: int | None) -> float:
    """Share of gold ids whose evidence block starts before ``budget`` characters of the context.

    ``block_starts`` maps each retrieved doc id to the character offset where its block starts in
    the full rendered context; a gold id absent from it (not retrieved) counts as missed. A block
    starting at offset ``budget`` or later is unseen by a reader that reads ``budget`` characters.
    ``budget=None`` means the whole context is read. NaN when gold is empty.
    """
    if budget is not None and budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    gold_set = set(gold)
    if not gold_set:
        return NAN
    seen = sum(
        1
        for g in gold_set
        if g in block_starts and (budget is None or block_starts[g] < budget)
    )
    return seen / len(gold_set)


# ---------------------------------------------------------------------------------------------
# one question
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RankMetrics:
    """The rank metrics of one ranking at one cutoff k."""

    k: int
    recall_any: float
    recall_all: float
    recall: float
    ndcg: float

    def as_dict(self, prefix: str = "") -> dict[str, float]:
        return {
            f"{prefix}recall_any@{self.k}": self.recall_any,
            f"{prefix}recall_all@{self.k}": self.recall_all,
            f"{prefix}recall@{self.k}": self.recall,
            f"{prefix}ndcg@{self.k}": self.ndcg,
        }


@dataclass(frozen=True)
class QuestionMetrics:
    """All retrieval metrics of one question.

    ``documents``: one entry per k at document level. ``sessions``: the same at session level
    (empty when no session mapping was given). ``in_budget_recall``: None when not computed.
    """

    n_gold: int
    documents: tuple[RankMetrics, ...]
    sessions: tuple[RankMetrics, ...] = ()
    n_gold_sessions: int | None = None
    in_budget_recall: float | None = None

    def as_dict(self) -> dict[str, float]:
        """Flat keys: ``recall_any@10``, ..., ``session_ndcg@10``, ``in_budget_recall``."""
        out: dict[str, float] = {}
        for metrics in self.documents:
            out.update(metrics.as_dict())
        for metrics in self.sessions:
            out.update(metrics.as_dict("session_"))
        if self.in_budget_recall is not None:
            out["in_budget_recall"] = self.in_budget_recall
        return out


def _document_metrics(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> RankMetrics:
    return RankMetrics(
        k=k,
        recall_any=recall_any_at_k(ranked_ids, gold, k),
        recall_all=recall_all_at_k(ranked_ids, gold, k),
        recall=recall_at_k(ranked_ids, gold, k),
        ndcg=ndcg_at_k(ranked_ids, gold, k),
    )


def _session_metrics(
    ranked_ids: Sequence[str], session_of: Mapping[str, str], gold_sessions: Collection[str], k: int
) -> RankMetrics:
    sessions = to_sessions(ranked_ids, session_of)
    return RankMetrics(
        k=k,
        recall_any=recall_any_at_k(sessions, gold_sessions, k),
        recall_all=recall_all_at_k(sessions, gold_sessions, k),
        recall=recall_at_k(sessions, gold_sessions, k),
        ndcg=session_ndcg_at_k(ranked_ids, session_of, gold_sessions, k),
    )


def compute_question_metrics(
    ranked_ids: Sequence[str],
    gold: Collection[str],
    ks: Sequence[int],
    block_starts: Mapping[str, int] | None = None,
    budget: int | None = None,
    session_of: Mapping[str, str] | None = None,
    gold_sessions: Collection[str] | None = None,
) -> QuestionMetrics:
    """Every metric of one question as a :class:`QuestionMetrics`.

    Session metrics are computed when ``session_of`` is given; ``gold_sessions`` defaults to the
    sessions of the gold documents (as LongMemEval derives gold sessions from gold turns).
    ``in_budget_recall`` is computed when ``block_starts`` is given (``budget=None``: no limit).
    """
    if budget is not None and block_starts is None:
        raise ValueError("budget given without block_starts")
    ranked = list(ranked_ids)
    documents = tuple(_document_metrics(ranked, gold, k) for k in ks)
    sessions: tuple[RankMetrics, ...] = ()
    n_gold_sessions: int | None = None
    if session_of is not None:
        if gold_sessions is None:
            gold_sessions = {_session(g, session_of) for g in gold}
        gold_session_set = set(gold_sessions)
        n_gold_sessions = len(gold_session_set)
        sessions = tuple(_session_metrics(ranked, session_of, gold_session_set, k) for k in ks)
    elif gold_sessions is not None:
        raise ValueError("gold_sessions given without session_of")
    budget_recall = None if block_starts is None else in_budget_recall(gold, block_starts, budget)
    return QuestionMetrics(
        n_gold=len(set(gold)),
        documents=documents,
        sessions=sessions,
        n_gold_sessions=n_gold_sessions,
        in_budget_recall=budget_recall,
    )
