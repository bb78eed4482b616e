"""Numbers as the tables print them, and a table ready to write (Markdown via pandas/tabulate, CSV)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judges.metrics.registry import lookup

MISSING = "—"  # no value of ours (never blank, never 0)
NOT_AVAILABLE = "n/a"  # the paper reports no such value (or the paper was not found)


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt(value: Any, metric: str) -> str:
    """One number for display, with the decimals its registered metric asks for (judge scores 1,
    retrieval metrics 3, F1 / BLEU-1 by scale; 3 for an unregistered name); NaN is "—"."""
    if is_missing(value):
        return MISSING
    value = float(value)
    registered = lookup(metric)
    return registered.format(value) if registered is not None else f"{value:.3f}"


def fmt_mean_std(mean: Any, std: Any, metric: str) -> str:
    if is_missing(mean):
        return MISSING
    text = fmt(mean, metric)
    return text if is_missing(std) else f"{text} ± {fmt(std, metric)}"


def fmt_delta(delta: float, metric: str) -> str:
    text = fmt(abs(delta), metric)
    return f"{'-' if delta < 0 and float(text) != 0 else '+'}{text}"


def fmt_tokens(value: Any) -> str:
    return MISSING if is_missing(value) else f"{round(float(value)):,}"


def fmt_millions(value: Any) -> str:
    return MISSING if is_missing(value) else f"{float(value) / 1e6:.2f}M"


def markdown(frame: pd.DataFrame) -> str:
    """A pipe table of a frame of strings (no index), written by pandas through tabulate."""
    return frame.astype(str).to_markdown(index=False, tablefmt="pipe", disable_numparse=True)


@dataclass
class Table:
    """One table, ready to print: ``frame`` holds display strings only (and the ``run`` folder of each row)."""

    key: str
    title: str
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    paper: pd.DataFrame | None = None  # the paper's table as published, appended for reference
    judge: bool = False
    csv_only: tuple[str, ...] = ()  # columns, and rows by their ``metric``, the CSV keeps and the Markdown leaves out

    @property
    def shown(self) -> pd.DataFrame:
        """The frame as printed: without the CSV-only columns and metric rows."""
        frame = self.frame.drop(columns=[c for c in self.csv_only if c in self.frame.columns])
        if "metric" in frame.columns:
            frame = frame[~frame["metric"].isin(self.csv_only)]
        return frame.reset_index(drop=True)

    def markdown(self) -> str:
        parts = [f"## {self.title}", ""]
        parts.append("_No runs found._" if self.frame.empty else markdown(self.shown))
        if self.notes:
            parts += ["", *[f"- {note}" for note in self.notes]]
        if self.paper is not None:
            parts += ["", "Paper, as published (results/paper/README.md):", ""]
            parts.append(markdown(self.paper) if not self.paper.empty else f"{NOT_AVAILABLE} (paper numbers not found)")
        return "\n".join(parts) + "\n"
