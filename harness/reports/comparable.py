"""Which of our numbers may stand beside the paper's, and the number that does.

Three things decide it, per run:

- the system: a registry entry with a ``not_comparable`` reason (Mem0 and Zep run as local
  libraries, where the paper ran the hosted services) prints ours alone, the reason its footnote;
- the wording: a run whose ``metrics.json`` says ``"wording": "own"`` or ``"custom"`` (its answerer
  or judge used our wording or the user's ``prompt_file``, not the official upstream files; see
  :mod:`harness.prompts`) prints ours alone, footnoted; a run without the key predates the marker
  and is paired as before;
- the judge metric: the paper's scripts score 100/N over all N questions, a failed or unparsable
  grade counting 0, which is ``<metric>_paper``; the parsed-only mean ``<metric>`` is kept for the
  CSV. A run without ``<metric>_paper`` (older) shows its parsed-only mean beside the paper only when
  every grade parsed (then both are equal); otherwise it is marked and not paired.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.reports.format import MISSING, fmt_mean_std, is_missing
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
    """``<metric>_paper`` of a run's row, with its std when one applies.

    The runs' ``<metric>_std`` is over the judge runs' parsed-only means, so it is printed beside
    ``<metric>_paper`` only when every grade parsed (``graded``: both means equal, run by run), unless
    the run carries ``<metric>_paper_std`` itself."""
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
