"""A toy benchmark of three notes and two questions, graded by the CORRECT/WRONG judge of LoCoMo.

    python run.py --config-dir examples/conf dataset=toy

``examples/conf/dataset/toy.yaml`` names this module; nothing of the project is edited.
"""

from __future__ import annotations

from harness.benchmarks import AnswerRule, Benchmark
from judges.graders.locomo import LoCoMoJudge
from loaders import DatasetLoader
from memory_protocol import Document, Episode, Question


def load_toy(root, size: int = 2):
    """Reads no file (``root`` is unused): one episode."""
    documents = (
        Document("n1", "The Atlas launch moved to Friday after the vendor slipped."),
        Document("n2", "Lunch on Thursday is at noon in the big room."),
        Document("n3", "The vendor for Atlas is Northwind."),
    )
    questions = (
        Question("t1", "When is the Atlas launch?", "easy", "Friday", evidence_ids=("n1",)),
        Question("t2", "Who is the Atlas vendor?", "hard", "Northwind", evidence_ids=("n3",)),
    )
    yield Episode("toy", documents, questions[:size])


BENCHMARK = Benchmark(
    name="toy",
    label="Toy",
    loader=DatasetLoader("toy", load_toy, ("easy", "hard"), keep_empty=True),
    judge=LoCoMoJudge.own,  # leave judge (and headline) out for a retrieval-only benchmark
    headline="llm_judge",
    answer=AnswerRule(question_date=False, empty_context="(nothing found)"),
    extra_metrics=("f1",),
    exclude_from_overall=("hard",),  # averaged apart from overall
)
