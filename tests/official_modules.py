"""The upstream evaluation modules themselves, loaded for tests as oracles.

The harness never imports them (it reads the wording with ``ast``); a test may, to compare our
requests and grades with what the upstream code builds. Where an upstream module needs a sibling
module that is not among the pinned files (OrgMemBench's ``config``, ``llm``, ``schemas``), a
minimal stand-in gives the names it imports; they do nothing the compared functions depend on.
"""

from __future__ import annotations

import enum
import importlib.util
import sys
import types
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

SHARED_OFFICIAL = Path(__file__).resolve().parents[1].parent / "shared" / "official"


def official_path(local: str) -> Path:
    path = SHARED_OFFICIAL / local
    if not path.is_file():
        pytest.skip(f"the official file {local} is not here ({SHARED_OFFICIAL})")
    return path


def load_module(name: str, local: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, official_path(local))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _FailureMode(str, enum.Enum):  # orgmembench/schemas.py's values
    NONE = "none"
    RETRIEVAL_MISS = "retrieval_miss"
    WRONG_CONTEXT_SYNTHESIS = "wrong_synthesis"
    CONFIDENT_HALLUCINATION = "hallucination"
    ABSTAIN_WHEN_ANSWERABLE = "wrong_abstain"
    DRY_RUN = "dry_run"


def _orgmem_package() -> None:
    """Stand-ins for the OrgMemBench modules its answerer and judge import."""
    if "orgmembench.schemas" in sys.modules:
        return
    package = types.ModuleType("orgmembench")
    package.__path__ = []  # a package, so relative imports resolve
    config = types.ModuleType("orgmembench.config")
    config.dry_run = lambda: False  # type: ignore[attr-defined]
    llm = types.ModuleType("orgmembench.llm")
    llm.AnthropicLLM = object  # type: ignore[attr-defined]
    llm.LLMResponse = SimpleNamespace  # type: ignore[attr-defined]
    schemas = types.ModuleType("orgmembench.schemas")
    schemas.FailureMode = _FailureMode  # type: ignore[attr-defined]
    for name in ("JudgeResult", "Question", "QueryResult", "RunResult"):
        setattr(schemas, name, type(name, (SimpleNamespace,), {}))
    for module in (package, config, llm, schemas):
        sys.modules[module.__name__] = module


def orgmem_judge_module() -> ModuleType:
    _orgmem_package()
    return load_module("orgmembench.judge", "orgmembench/orgmembench/judge.py")


def orgmem_answerer_module() -> ModuleType:
    _orgmem_package()
    return load_module("orgmembench.answerer", "orgmembench/orgmembench/answerer.py")


def longmemeval_evaluate_qa() -> ModuleType:
    pytest.importorskip("backoff")
    return load_module("longmemeval_evaluate_qa", "longmemeval/src/evaluation/evaluate_qa.py")


def mem0_llm_judge(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """mem0's judge module (it builds an OpenAI client at import: a dummy key is set first)."""
    pytest.importorskip("mem0")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    return load_module("mem0_llm_judge", "mem0/evaluation/metrics/llm_judge.py")


# OrgMemBench's public category names (orgmembench/schemas.py CATEGORY_INFO), as its Question shows them.
PUBLIC_CATEGORY = {"C1": "supersession", "C2": "decision_provenance", "C3": "bitemporal", "C4": "audit_replay",
                   "C5": "justification_chain", "C6": "contradiction"}


def orgmem_question(record: dict) -> SimpleNamespace:
    """A benchmark question as OrgMemBench's own Question presents it to its judge, from a raw
    ``benchmark_v0.0.jsonl`` record."""
    metadata = record.get("metadata") or {}
    return SimpleNamespace(
        id=record["id"], text=record["text"], public_category=PUBLIC_CATEGORY[record["category"]],
        is_emergent=record["category"] == "EMERGENT" or metadata.get("validation_mode") == "union",
        ground_truth_answer=record["ground_truth_answer"], rubric_subpoints=record["rubric_subpoints"],
    )
