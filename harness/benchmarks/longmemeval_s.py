"""LongMemEval_S cleaned (Wu et al., 2025): one ~48-session haystack per question, 499 questions.

Retrieval scored as its official code does (user turns, turn and session level; ``all_turns_*``
over every turn); the official yes/no judge per question type; abstention questions apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from harness.benchmarks import AUTHORS_ANSWER_RULES, Benchmark, QuestionScorer
from judges.official.prompts import authors_answer
from judges.graders.longmemeval import LongMemEvalJudge
from judges.metrics.longmemeval import OfficialCorpus, Turn, official_corpus, official_metrics
from judges.metrics.ranking import compute_question_metrics
from loaders import DATASETS
from memory_protocol import Episode, Question


def official_corpus_of(episode: Episode) -> OfficialCorpus | None:
    """The user-turn corpus of an episode whose questions name gold sessions, else None."""
    if not any("evidence_sessions" in q.meta for q in episode.questions):
        return None
    return official_corpus(
        Turn(doc.doc_id, doc.thread or doc.doc_id, str(doc.meta.get("role")), doc.meta.get("has_answer"))
        for doc in episode.documents
    )


def official_scorer(episode: Episode) -> QuestionScorer | None:
    """The official turn and session scores of a question, and ``all_turns_*`` (the same formulas
    over every turn, gold = the question's evidence; none for an abstention question)."""
    corpus = official_corpus_of(episode)
    if corpus is None:
        return None

    def score(question: Question, ranking: Sequence[str], ks: Sequence[int]) -> dict[str, float]:
        row = official_metrics(question.qid, ranking, corpus, ks)
        gold = [] if question.meta.get("abstention") else list(question.evidence_ids)
        row.update({f"all_turns_{key}": value for key, value in compute_question_metrics(ranking, gold, ks).items()})
        return row

    return score


BENCHMARK = Benchmark(
    name="longmemeval_s",
    label="LongMemEval_S",
    loader=DATASETS["longmemeval_s"],
    judge=LongMemEvalJudge.own,
    official_judge=LongMemEvalJudge.official,  # the paper grades with the official per-type prompts
    official_answer=authors_answer,  # the Mem++ authors' template, evidence lines and date line
    answer_wording=AUTHORS_ANSWER_RULES,
    judge_prompt_folder="a folder of longmemeval_<kind>.txt files",
    headline="accuracy",
    abstention_row="abstention",
    task_averaged_row="task_averaged",
    official_scorer=official_scorer,
    categories=tuple((c, c) for c in ("single-session-user", "single-session-assistant", "single-session-preference",
                                      "multi-session", "knowledge-update", "temporal-reasoning"))
    + (("task-averaged", "task_averaged"), ("overall", "overall")),
    tables=(3,),
    table_title=("LongMemEval_S by question type", "accuracy (mean ± std)"),
    table_notes=("The paper's 'Average' is question-weighted, i.e. our overall; it gives no task-averaged figure.",),
)
