"""Which of the selected runs become rows, judged or retrieval, and how a row is named."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from harness.reports.labels import HEADLINE, any_paper_row, paper_row, system_rank
from harness.reports.store import RunView, runs_of

MODES = ("auto", "judge", "retrieval")


@dataclass
class Rows:
    runs: pd.DataFrame  # one row per run, in display order
    judged: set[str] = field(default_factory=set)  # runs shown with judge metrics
    notes: list[str] = field(default_factory=list)


def row_label(run: Any, table: int) -> str:
    """The paper's row label of the system in ``table`` (or any table), else its name; a ``run_name``
    stays. Differences from the preset go to a footnote, never into the label."""
    name = str(run.system)
    system = str(getattr(run, "system_name", name))
    if name != system:
        return name
    return paper_row(system, table) or any_paper_row(system) or system


def _at_default_k(runs: pd.DataFrame) -> pd.DataFrame:
    """Of several k for one (dataset, system, answerer), keep the paper's fixed k when present."""
    keep = []
    for _key, group in runs.groupby(["dataset", "system_name", "answerer"], sort=False, dropna=False):
        if group["k"].nunique() > 1:
            at_default = group[group["k"] == group["default_k"]]
            group = at_default if not at_default.empty else group
        keep.append(group)
    return pd.concat(keep) if keep else runs


def choose_rows(tidy: pd.DataFrame, view: RunView, dataset: str | None, mode: str,
                keep: Callable[[str], bool]) -> Rows:
    """Runs of ``dataset`` (None: all) whose system passes ``keep``, and which are judged. ``auto``:
    judged rows, and retrieval rows for systems without one; ``judge`` / ``retrieval``: only those."""
    if mode not in MODES:
        raise ValueError(f"mode must be auto, judge or retrieval, got {mode!r}")
    runs = runs_of(tidy) if not tidy.empty else pd.DataFrame(columns=["run", "system", "dataset", "answerer", "k"])
    if not runs.empty:
        runs = runs[runs["system_name"].map(keep)]
        if dataset is not None:
            runs = runs[runs["dataset"] == dataset]
        runs = _at_default_k(runs)
    has_judge = {r.run for r in runs.itertuples() if view.has(r.run, HEADLINE.get(r.dataset, "score"))}
    notes: list[str] = []
    if mode == "judge":
        dropped = runs[~runs["run"].isin(has_judge)]
        if not dropped.empty:
            names = ", ".join(sorted({f"{r.system} [{r.answerer}]" for r in dropped.itertuples()}))
            notes.append(f"Runs without judge metrics left out (use --mode retrieval to see them): {names}.")
        runs, judged = runs[runs["run"].isin(has_judge)], set(has_judge)
    elif mode == "retrieval":
        judged = set()
        runs = runs.assign(_judged=runs["run"].isin(has_judge)).sort_values("_judged")
        runs = runs.drop_duplicates(["dataset", "system_name", "k"]).drop(columns="_judged")
    else:
        judged = set(has_judge)
        with_judge = {(r.dataset, r.system_name) for r in runs.itertuples() if r.run in judged}
        # a boolean Series, not a list: an empty list would select no column instead of no row
        shown = pd.Series([r.run in judged or (r.dataset, r.system_name) not in with_judge for r in runs.itertuples()],
                          index=runs.index, dtype=bool)
        hidden = runs[~shown]
        if not hidden.empty:
            names = ", ".join(sorted({f"{r.system} [{r.answerer}]" for r in hidden.itertuples()}))
            notes.append(f"Retrieval-only runs of systems shown with judge metrics are not repeated "
                         f"(--mode retrieval shows them): {names}.")
        runs = runs[shown]
    if not runs.empty:
        runs = runs.assign(_rank=runs["system_name"].map(system_rank), _kind=~runs["run"].isin(judged))
        runs = runs.sort_values(["_kind", "_rank", "answerer", "dataset", "k"]).drop(columns=["_rank", "_kind"])
    return Rows(runs.reset_index(drop=True), judged, notes)
