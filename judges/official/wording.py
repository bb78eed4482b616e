"""The official pieces of the paper's protocol, taken out of the verified upstream files.

- LoCoMo judge: mem0's ``ACCURACY_PROMPT`` (``evaluation/metrics/llm_judge.py``).
- LongMemEval judge: ``get_anscheck_prompt`` (``src/evaluation/evaluate_qa.py``), run as it is.
- OrgMemBench answerer: ``basic_answer`` with ``BASIC_ANSWER_PROMPT`` and ``_MAX_CONTEXT_CHARS``
  (``orgmembench/answerer.py``), run as it is with a stand-in model that keeps the prompt.
- OrgMemBench judge: ``_JUDGE_SYSTEM`` and ``build_judge_prompt`` (``orgmembench/judge.py``).

Each function raises :class:`~judges.official.locate.OfficialFileMissing` when no directory holds
the file, and :class:`~judges.official.locate.OfficialFileMismatch` when its bytes are not the pin's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judges.wording import Wording
from judges.official.extract import constant, function
from judges.official.locate import OfficialReader, OfficialText

__all__ = [
    "LME_EVALUATE_QA", "MEM0_LLM_JUDGE", "ORGMEM_ANSWERER", "ORGMEM_JUDGE", "OrgMemAnswerer", "OrgMemJudgePrompt",
    "longmemeval_anscheck", "mem0_accuracy_prompt", "official_wording", "orgmem_answerer", "orgmem_judge_prompt",
]

MEM0_LLM_JUDGE = "mem0/evaluation/metrics/llm_judge.py"
LME_EVALUATE_QA = "longmemeval/src/evaluation/evaluate_qa.py"
ORGMEM_ANSWERER = "orgmembench/orgmembench/answerer.py"
ORGMEM_JUDGE = "orgmembench/orgmembench/judge.py"


def official_wording(*texts: OfficialText, what: str = "") -> Wording:
    cite = "; ".join(t.pin.cite for t in texts) + (f" ({what})" if what else "")
    return Wording("official", cite, tuple((str(t.path), t.pin.sha256) for t in texts))


def mem0_accuracy_prompt(reader: OfficialReader) -> tuple[str, Wording]:
    """mem0's LoCoMo judge prompt, with its named fields question, gold_answer, generated_answer."""
    text = reader.read(MEM0_LLM_JUDGE)
    return constant(text, "ACCURACY_PROMPT"), official_wording(text, what="ACCURACY_PROMPT")


def longmemeval_anscheck(reader: OfficialReader) -> tuple[Callable[..., str], Wording]:
    """LongMemEval's ``get_anscheck_prompt(task, question, answer, response, abstention=False)``."""
    text = reader.read(LME_EVALUATE_QA)
    return function(text, "get_anscheck_prompt"), official_wording(text, what="get_anscheck_prompt")


class _KeepPrompt:
    """Stands in for the benchmark's model client: keeps the prompt it is given."""

    def __init__(self) -> None:
        self.prompt: str | None = None
        self.system: str | None = None

    def complete(self, prompt: str, system: str | None = None) -> None:
        self.prompt, self.system = prompt, system


@dataclass(frozen=True)
class OrgMemAnswerer:
    """OrgMemBench's neutral answerer: ``prompt(question, retrieved_context)`` is exactly what its
    ``basic_answer`` sends (context stripped, a stand-in line when empty, cut to ``max_context_chars``)."""

    basic_answer: Callable[..., Any]
    max_context_chars: int
    wording: Wording

    def prompt(self, question: str, retrieved_context: str) -> str:
        keeper = _KeepPrompt()
        self.basic_answer(question, retrieved_context, keeper)
        if keeper.prompt is None or keeper.system is not None:
            raise RuntimeError(f"{self.wording.cite}: basic_answer did not send one plain prompt")
        return keeper.prompt


def orgmem_answerer(reader: OfficialReader) -> OrgMemAnswerer:
    text = reader.read(ORGMEM_ANSWERER)
    names = {"BASIC_ANSWER_PROMPT": constant(text, "BASIC_ANSWER_PROMPT"),
             "_MAX_CONTEXT_CHARS": constant(text, "_MAX_CONTEXT_CHARS")}
    return OrgMemAnswerer(function(text, "basic_answer", names), int(names["_MAX_CONTEXT_CHARS"]),
                          official_wording(text, what="basic_answer, BASIC_ANSWER_PROMPT"))


@dataclass(frozen=True)
class OrgMemJudgePrompt:
    """OrgMemBench's rubric judge: its system message and ``build_judge_prompt(question, answer_text)``,
    which reads the question's ``public_category``, ``text``, ``is_emergent``,
    ``ground_truth_answer`` and ``rubric_subpoints``."""

    system: str
    build: Callable[[Any, str], str]
    wording: Wording


def orgmem_judge_prompt(reader: OfficialReader) -> OrgMemJudgePrompt:
    text = reader.read(ORGMEM_JUDGE)
    return OrgMemJudgePrompt(constant(text, "_JUDGE_SYSTEM"), function(text, "build_judge_prompt", {"json": json}),
                             official_wording(text, what="_JUDGE_SYSTEM, build_judge_prompt"))
