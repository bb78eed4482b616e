"""mem0's recipe for its Mem0 and Zep rows on LoCoMo: the answer request mem0's search.py sends.

The expected request is rendered here with jinja2 (the engine mem0's search.py renders with) from
the texts of ``../shared/official/templates.json``; the hits are laid out as the adapters return
them (one ``timestamp: memory`` line per Mem0 hit under its speaker's leg, Zep's fact and entity
lines). The request is one system message at temperature 0 with no max_tokens and no seed.
"""

from __future__ import annotations

import json

import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from harness.prompts import ProtocolPrompts, choose_prompts
from memory_protocol import Hit, Question
from tests.official_texts import SHARED_OFFICIAL, text

jinja2 = pytest.importorskip("jinja2")


def _config(system: str, recipe: str, dataset: str = "locomo") -> RunConfig:
    overrides = [f"dataset={dataset}", f"system={system}", "answerer=gpt-4o-mini", f"answer_recipe={recipe}",
                 f"official_dir={SHARED_OFFICIAL}"]
    return RunConfig.from_dict(compose_config(overrides))


def _hit(text_: str, leg: str, rank: int) -> Hit:
    return Hit(f"m{rank}", text_, None, None, 1.0 / (rank + 1), {leg: rank}, False, None, (("D1:1", 0),))


def _prompts(config: RunConfig) -> ProtocolPrompts:
    return choose_prompts(config.dataset.describe(), config.answerer, config.judge, recipe=config.answer_recipe,
                          system_kind=config.system.kind, context_budget=config.dataset.context_budget,
                          official_dir=config.official_dir)


QUESTION = Question(qid="conv-26/0", text="When did Caroline go to the support group?", category="temporal", answer="7 May")


def test_mem0_rows_answer_with_mem0s_prompt_as_one_system_message():
    prompts = _prompts(_config("mem0", "mem0"))
    assert prompts.recipe == "mem0" and prompts.answerer.wording.cite.startswith("mem0ai/mem0@b3ede5b7c0ac")
    hits = [_hit("1:56 pm on 8 May, 2023: Caroline went to a support group", "mem0:Caroline", 0),
            _hit("8 May, 2023: Melanie paints", "mem0:Melanie", 0),
            _hit("1:56 pm on 8 May, 2023: Caroline is \"brave\"", "mem0:Caroline", 1)]
    request = prompts.answerer.request(QUESTION, "ignored", hits)
    expected = jinja2.Template(text("evaluation/prompts.py", "<module>", "ANSWER_PROMPT")).render(
        speaker_1_user_id="Caroline", speaker_2_user_id="Melanie", question=QUESTION.text,
        speaker_1_memories=json.dumps([hits[0].text, hits[2].text], indent=4),
        speaker_2_memories=json.dumps([hits[1].text], indent=4))
    assert list(request.messages) == [{"role": "system", "content": expected}]
    assert request.temperature == 0.0 and set(request.omit) == {"max_tokens", "seed"}
    assert "[answer: official (mem0's recipe), judge: official]" in prompts.title_note


def test_zep_rows_answer_with_answer_prompt_zep_over_its_context_template():
    prompts = _prompts(_config("zep", "mem0"))
    hits = [_hit("  - Caroline attended a support group (2023-05-08 13:56:00 - present)", "zep:fact", 0),
            _hit("  - Caroline: a counsellor in training", "zep:entity", 0),
            _hit("  - Melanie paints (date unknown - present)", "zep:fact", 1)]
    request = prompts.answerer.request(QUESTION, "ignored", hits)
    memories = text("evaluation/src/zep/search.py", "<module>", "TEMPLATE").format(
        facts="\n".join([hits[0].text, hits[2].text]), entities=hits[1].text)
    expected = jinja2.Template(text("evaluation/prompts.py", "<module>", "ANSWER_PROMPT_ZEP")).render(
        memories=memories, question=QUESTION.text)
    assert list(request.messages) == [{"role": "system", "content": expected}]


@pytest.mark.parametrize("system,recipe,dataset", [("mem0", "harness", "locomo"), ("mempp", "mem0", "locomo"),
                                                   ("zep", "mem0", "longmemeval_s")])
def test_elsewhere_the_rows_answer_with_the_authors_template(system, recipe, dataset):
    config = _config(system, recipe, dataset)
    prompts = _prompts(config)
    assert prompts.recipe == "harness" and prompts.answer_source == "authors"
    assert config.answer_recipe == (recipe if system in ("mem0", "zep") else "harness")  # a no-op is not recorded


def test_the_table_footnote_says_which_answer_prompt_a_mem0_or_zep_row_used():
    from types import SimpleNamespace

    from harness.reports.comparable import run_footnote

    def row(kind: str, recipe: str | None, dataset: str = "locomo") -> str:
        config = {"answer_recipe": recipe} if recipe else {}
        return run_footnote(SimpleNamespace(kind=kind, dataset=dataset, config=config, limit=None))

    assert "answer prompt: mem0's ANSWER_PROMPT as one system message (mem0's recipe)" in row("mem0", "mem0")
    assert "answer prompt: mem0's ANSWER_PROMPT_ZEP as one system message (mem0's recipe)" in row("zep", "mem0")
    assert "answer prompt: the authors' template, not mem0's own (answer_recipe=harness)" in row("mem0", None)
    assert "answer prompt" not in row("mempp", "harness") and "answer prompt" not in row("zep", "mem0", "orgmem")


def test_the_authors_seed_goes_to_seeded_models_only():
    """eval/llm.py seeds its OpenAI requests (20260904) and sends no seed to Anthropic's API."""
    seeded = _prompts(_config("mempp", "harness")).answerer
    question = Question(qid="q", text="Who?", category="temporal", answer="x")
    assert seeded.request(question, "", []).seed == 20260904
    claude = RunConfig.from_dict(compose_config(["dataset=locomo", "system=mempp", "answerer=claude-sonnet-4-6",
                                                 f"official_dir={SHARED_OFFICIAL}"]))
    request = _prompts(claude).answerer.request(question, "", [])
    assert request.seed is None and "seed" in request.omit and request.max_tokens == 512
