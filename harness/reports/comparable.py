"""Which of our numbers may stand beside the paper's, and the number that does.

A system with a ``not_comparable`` reason (Mem0 and Zep run as local libraries, the paper's as hosted
services) or a run in our own or a custom wording (``metrics.json`` ``"wording"``) prints ours alone,
footnoted. The paper's scripts score 100/N, a failed or unparsable grade counting 0: ``<metric>_paper``;
an older run without it is paired only when every grade parsed (its parsed-only mean is then equal).
How a row's run differs from the preset is a numbered footnote under the table
(``[1] encoder: all-MiniLM-L6-v2 (local) (paper: text-embedding-3-small (openai, 1536-d)); limit=20``);
rows with the same differences share the number.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.reports.format import MISSING, fmt_mean_std, is_missing, short_text
from harness.reports.store import RunView

NOT_OFFICIAL_WORDING = ("own", "custom")  # harness.prompts: ProtocolPrompts.label
PARSED_ONLY = " (parsed grades only)"


def paper_metric(metric: str) -> str:
    """The paper-comparable column of a judge metric."""
    return f"{metric}_paper"


def _entry(kind: str):
    from harness.systems import REGISTRY  # the registry imports the systems' modules: only when asked

    return REGISTRY.get(str(kind))


def not_comparable_reason(kind: str) -> str | None:
    entry = _entry(kind)
    return entry.not_comparable if entry is not None else None


def own_wording(wording: object) -> bool:
    return wording in NOT_OFFICIAL_WORDING


@dataclass(frozen=True)
class JudgedValue:
    """One judged cell of ours: the number (and std) a table prints, and whether it is the paper's kind."""

    value: float
    std: float
    comparable: bool  # False: only the parsed-only mean exists and some grade failed or is unknown

    def text(self, metric: str) -> str:
        text = fmt_mean_std(self.value, self.std, metric)
        return text if self.comparable or text == MISSING else text + PARSED_ONLY


def judged_value(view: RunView, run: str, category: str, metric: str, graded: bool) -> JudgedValue:
    """``<metric>_paper`` of a run's row, with ``<metric>_paper_std``, else ``<metric>_std`` (over the
    parsed-only means) when every grade parsed (``graded``: both means equal)."""
    std = view.value(run, category, f"{paper_metric(metric)}_std")
    if is_missing(std) and graded:
        std = view.value(run, category, f"{metric}_std")
    value = view.value(run, category, paper_metric(metric))
    if not is_missing(value):
        return JudgedValue(value, std, True)
    parsed = view.value(run, category, metric)
    return JudgedValue(parsed, view.value(run, category, f"{metric}_std"), graded or is_missing(parsed))


def parsed_only_text(view: RunView, run: str, category: str, metric: str) -> str:
    """The parsed-only mean and its std, as the CSV keeps it."""
    return fmt_mean_std(view.value(run, category, metric), view.value(run, category, f"{metric}_std"), metric)


def pairing_notes(marked_parsed_only: bool, std_left_out: bool, paper_column: str) -> list[str]:
    """The notes on cells that carry no paper figure because only a parsed-only mean exists, and on the
    std shown beside ``paper_column`` (the ``<metric>_paper`` name(s) the table prints). Why a whole
    row is not paired (a system or a wording) is its footnote (``footnotes.run_footnote``)."""
    notes: list[str] = []
    if marked_parsed_only:
        notes.append(f"'{PARSED_ONLY.strip()}': a run without {paper_column} (older) whose grades did not "
                     "all parse, or whose stats do not say; its mean over parsed grades is not the paper's number, "
                     "so it is not paired.")
    if std_left_out:
        notes.append(f"± is the std over the judge runs of the parsed-only means; beside {paper_column} it is "
                     "shown only for runs where every grade parsed (where both means are equal).")
    return notes

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
        phrases.append(f"{key}={short_text(ours)} (paper: {short_text(theirs)})")
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
