"""OrgMemBench (Gardner, 2026), medium tier: one organisation's 443 artefacts, 73 questions C1-C6.

Its answerer (``PandelisZ/OrgMemBench`` ``orgmembench/answerer.py``) is followed: the prompt
``orgmem_answer`` (our wording of its rules), no question date, the context stripped, shown as
``(no records retrieved)`` when empty and cut to ``dataset.context_budget`` characters (40,000 in
``configs/dataset/orgmem.yaml``). Its runner grades an empty answer as a fixed line, and every
rubric facet is graded (score = 100 x weighted fraction met).
"""

from __future__ import annotations

from functools import partial

from harness.benchmarks import AnswerRule, Benchmark
from judges.graders import make_judge
from judges.graders.orgmem import ORGMEM_NO_ANSWER
from loaders import DATASETS

BENCHMARK = Benchmark(
    name="orgmem",
    label="OrgMemBench",
    loader=DATASETS["orgmem"],
    judge=partial(make_judge, "orgmem"),
    headline="score",
    answer=AnswerRule(template="orgmem_answer", question_date=False, empty_context="(no records retrieved)",
                      cut_at_budget=True),
    empty_answer=ORGMEM_NO_ANSWER,
    categories=tuple((c, c) for c in ("C1", "C2", "C3", "C4", "C5", "C6")) + (("overall", "overall"),),
    tables=(1, 4, 7),
    table_title=("OrgMemBench (medium) by category", "score (0-100), mean ± std over judge runs"),
)
