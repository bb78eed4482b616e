"""OrgMemBench (Gardner, 2026), medium tier: one organisation's 443 artefacts, 73 questions C1-C6.

Answered and graded with the benchmark's own answerer and rubric judge texts (``orgmembench/answerer.py``,
``judge.py``, read at run time; else our wording of the same rules, said so in the run).
"""

from __future__ import annotations

from harness.benchmarks import AnswerRule, Benchmark
from judges.graders.orgmem import ORGMEM_NO_ANSWER, OrgMemJudge
from judges.official.prompts import orgmem_answerer
from judges.templates import Wording
from loaders import DATASETS

BENCHMARK = Benchmark(
    name="orgmem",
    label="OrgMemBench",
    loader=DATASETS["orgmem"],
    judge=OrgMemJudge.own,
    official_judge=OrgMemJudge.official,
    official_answer=orgmem_answerer,
    answer_wording=Wording("own", "judges/prompts/orgmem_answer.txt (our words for the rules of orgmembench/answerer.py)"),
    headline="score",
    answer=AnswerRule(template="orgmem_answer", question_date=False, empty_context="(no records retrieved)",
                      cut_at_budget=True),
    empty_answer=ORGMEM_NO_ANSWER,
    categories=tuple((c, c) for c in ("C1", "C2", "C3", "C4", "C5", "C6")) + (("overall", "overall"),),
    tables=(1, 4, 7),
    table_title=("OrgMemBench (medium) by category", "score (0-100), mean ± std over judge runs"),
)
