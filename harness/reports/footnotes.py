"""Numbered footnotes under a table: how a row's run differs from the paper's preset, in a few words.

A row label stays the paper's short name (``Mem++``, ``RAG-4096``); everything that makes our run
differ from the job the table's preset asks for (a tolerated setting, ``dataset.limit``, a local
model, our own prompt wording, a system the paper ran as a hosted service) becomes one footnote,
``[1] encoder: all-MiniLM-L6-v2 (local) (paper: text-embedding-3-small (openai, 1536-d)); limit=20``.
Rows with the same differences share the number.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.reports.comparable import not_comparable_reason, own_wording
from harness.reports.format import is_missing

MISSING_VALUE = "<missing>"  # selection.differences: a key one side does not have


@dataclass
class Footnotes:
    """The footnotes of one table, numbered in the order they are first used."""

    texts: list[str] = field(default_factory=list)

    def mark(self, texts: Iterable[str]) -> str:
        """``" [1,3]"`` for these texts (numbering new ones), ``""`` for none."""
        numbers = []
        for text in dict.fromkeys(t for t in texts if t):
            if text not in self.texts:
                self.texts.append(text)
            numbers.append(self.texts.index(text) + 1)
        return f" [{','.join(map(str, sorted(numbers)))}]" if numbers else ""

    def lines(self) -> list[str]:
        return [f"[{number}] {text}" for number, text in enumerate(self.texts, start=1)]


def _short(value: Any) -> str:
    text = "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _encoder_words(flat: Mapping[str, Any]) -> str:
    """The encoder of a flattened config in a few words: model (backend, width)."""
    backend = flat.get("encoder.backend", "?")
    model = flat.get("encoder.params.model", "?")
    width = flat.get("encoder.params.dimensions")
    return f"{model} ({backend}{f', {width}-d' if width not in (None, MISSING_VALUE) else ''})"


def settings_footnote(differences: Mapping[str, tuple[Any, Any]], run_config: Mapping[str, Any],
                      preset_config: Mapping[str, Any] | None = None, limit: int = 3) -> list[str]:
    """The tolerated differences of a run from its preset job, one phrase per setting (the encoder's
    keys as one phrase); ``run_config`` / ``preset_config`` are the flattened configs."""
    phrases: list[str] = []
    keys = [k for k in differences if k not in ("dataset.limit", "dataset.categories")]
    encoder = [k for k in keys if k.startswith("encoder.") or k == "encoder_rule"]
    if encoder:
        preset = {k: theirs for k, (_ours, theirs) in differences.items()}
        if preset_config is not None:
            preset = {**preset_config, **preset}
        ours = {**run_config, **{k: mine for k, (mine, _theirs) in differences.items()}}
        phrases.append(f"encoder: {_encoder_words(ours)} (paper: {_encoder_words(preset)})")
    others = [k for k in keys if k not in encoder]
    for key in others[:limit]:
        ours, theirs = differences[key]
        phrases.append(f"{key}={_short(ours)} (paper: {_short(theirs)})")
    if len(others) > limit:
        phrases.append(f"and {len(others) - limit} more setting(s) (see the run's config.json)")
    return phrases


# The answer prompt of a Mem0 or Zep row, by the run's answer_recipe (harness.prompts).
RECIPE_PROMPTS = {"mem0": "mem0's ANSWER_PROMPT", "zep": "mem0's ANSWER_PROMPT_ZEP"}


def answer_prompt_footnote(run: Any) -> list[str]:
    """For a Mem0 or Zep row: which answer prompt its run sent (mem0's recipe or the harness's)."""
    kind = str(getattr(run, "kind", ""))
    if kind not in RECIPE_PROMPTS or getattr(run, "dataset", None) != "locomo":
        return []
    config = getattr(run, "config", {}) or {}
    if config.get("answer_recipe", "harness") == "mem0":
        return [f"answer prompt: {RECIPE_PROMPTS[kind]} as one system message (mem0's recipe)"]
    return ["answer prompt: the authors' template, not mem0's own (answer_recipe=harness)"]


def run_footnote(run: Any, differences: Mapping[str, tuple[Any, Any]] | None = None,
                 preset_config: Mapping[str, Any] | None = None, judged: bool = True, where: str = "") -> str:
    """One footnote text for a run shown in a row (``""`` when it is the preset's job as the paper
    ran it). ``where`` prefixes it (Table 4 names the dataset: a row there spans several runs)."""
    phrases: list[str] = []
    if bool(getattr(run, "plumbing", False)):
        phrases.append("plumbing check (a local model or a non-provider endpoint), not a model score")
    if bool(getattr(run, "failed", False)):
        phrases.append("every answer failed (no score)")
    if not is_missing(getattr(run, "limit", None)):
        phrases.append(f"limit={int(run.limit)} (paper: every question)")
    categories = getattr(run, "categories_filter", None)
    if isinstance(categories, str) and categories:
        phrases.append(f"categories={categories} only")
    phrases += settings_footnote(differences or {}, getattr(run, "config", {}) or {}, preset_config)
    if judged:
        phrases += answer_prompt_footnote(run)
        reason = not_comparable_reason(str(getattr(run, "kind", "")))
        if reason:
            phrases.append(f"ours only, not paired with the paper's row: {reason}")
        elif own_wording(getattr(run, "wording", None)):
            phrases.append("answerer/judge in our own or a custom wording, not the official upstream files: "
                           "ours only, not paired with the paper")
    if not phrases:
        return ""
    return (f"{where}: " if where else "") + "; ".join(phrases)
