"""LLM graders, one module per benchmark's rules: each builds the judge's messages for (question,
answer) and parses the reply; ``model_clients.llm_client`` makes the call."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

from judges.graders.locomo import LoCoMoJudge
from judges.graders.longmemeval import LongMemEvalJudge, load_longmemeval_templates
from judges.graders.orgmem import OrgMemJudge
from judges.graders.verdict import JudgeVerdict
from judges.templates import RequestParams, Wording, load_template
from memory_protocol import Question

__all__ = ["Judge", "JudgeVerdict", "LoCoMoJudge", "LongMemEvalJudge", "OrgMemJudge", "make_judge"]


@runtime_checkable
class Judge(Protocol):
    """Builds a judge request for (question, answer) and parses the judge's reply."""

    dataset: str
    params: RequestParams  # what the wording's script sends (None fields: the judge config's)
    wording: Wording

    def is_graded(self, question: Question) -> bool: ...  # False where the official evaluation does not judge

    def template_hash(self, question: Question) -> str: ...  # names the prompt in the cache key

    def request(self, question: Question, answer: str) -> list[dict[str, str]]: ...

    def parse(self, raw: str, question: Question) -> JudgeVerdict: ...


def make_judge(dataset: str, prompt_file: str | Path | Mapping[str, str | Path] | None = None) -> Judge:
    """The judge of ``orgmem``, ``locomo`` or ``longmemeval_s``; ``prompt_file`` replaces the built-in
    prompt (for LongMemEval a folder or mapping, as :func:`load_longmemeval_templates` takes)."""
    if dataset in ("orgmem", "locomo"):
        if isinstance(prompt_file, Mapping):
            raise ValueError(f"{dataset} takes a single prompt_file")
        if dataset == "orgmem":
            return OrgMemJudge(template=load_template("orgmem_rubric", prompt_file))
        return LoCoMoJudge(template=load_template("locomo_judge", prompt_file))
    if dataset in ("longmemeval_s", "longmemeval"):
        return LongMemEvalJudge(templates=load_longmemeval_templates(prompt_file), dataset=dataset)
    raise ValueError(f"no judge for dataset {dataset!r}; expected orgmem, locomo or longmemeval_s")
