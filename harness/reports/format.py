"""Numbers as the tables print them, and a table ready to write (Markdown via pandas/tabulate, CSV)."""

from __future__ import annotations

import csv
import io
import math
import textwrap
from collections.abc import Sequence
from itertools import dropwhile, takewhile
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judges.aggregate import CONSOLE_WIDTH
from judges.aggregate import format_table
from judges.metrics.ranking import lookup

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


def short_text(value: Any) -> str:
    """A config value in at most 40 characters (``null``, ``true``)."""
    text = "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
    """A pipe table of a frame of display strings (no index)."""
    return format_table(frame.astype(str), index=False, numbers=False, header_pad=2)


def read_markdown(lines: Sequence[str]) -> pd.DataFrame:
    """The first pipe table in ``lines`` as a frame of stripped strings (its rule line dropped)."""
    block = list(takewhile(lambda line: line.startswith("|"), dropwhile(lambda line: not line.startswith("|"), lines)))
    if len(block) < 2:
        return pd.DataFrame()
    frame = pd.read_csv(io.StringIO("\n".join(block)), sep="|", dtype=str, keep_default_na=False,
                        quoting=csv.QUOTE_NONE).iloc[1:, 1:-1]
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame.apply(lambda column: column.str.strip()).reset_index(drop=True)


def records(frame: pd.DataFrame, width: int, where: str = "") -> str:
    """A table too wide for a terminal, one row at a time: its first two columns as the row's name,
    then ``header: cell`` items, wrapped at ``width`` (the Markdown file keeps the grid)."""
    key_columns = list(frame.columns[:2])
    lines = textwrap.wrap(f"(wider than {width} characters as a grid: one row at a time; "
                          f"{where or 'the Markdown file'} holds the grid)", width, break_long_words=False)
    for _, row in frame.astype(str).iterrows():
        line = " ".join(row[c] for c in key_columns) + " |"
        items = [f"{c}: {row[c]}" for c in frame.columns if c not in key_columns]
        for index, item in enumerate(items):  # an item is never split across lines
            item += ";" if index < len(items) - 1 else ""
            if len(line) + 1 + len(item) > width and line.strip():
                lines.append(line)
                line = "   "
            line += " " + item
        lines.append(line)
    return "\n".join(lines)


def retrieval_title(metrics: Sequence[str]) -> str:
    return f"Retrieval (no paper counterpart): runs without an answerer; {', '.join(metrics)}"


@dataclass
class Table:
    """One table of display strings (cells ``ours (paper)``); ``retrieval``: our figures without a paper
    counterpart; ``fill``: the commands (and dollars) that would fill the empty judged cells."""

    key: str
    title: str
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    paper: pd.DataFrame | None = None  # the paper's whole table as published: written to <key>_paper.csv only
    judge: bool = False
    csv_only: tuple[str, ...] = ()  # columns, and rows by their ``metric``, the CSV keeps and the Markdown leaves out
    cell_format: str = ""  # what a cell holds, printed under the title
    footnotes: list[str] = field(default_factory=list)  # "[1] ..." lines: how a row's run differs from the preset
    retrieval: pd.DataFrame | None = None
    retrieval_title: str = ""
    fill: list[str] = field(default_factory=list)

    @property
    def shown(self) -> pd.DataFrame:
        """The frame as printed: without the CSV-only columns and metric rows."""
        frame = self.frame.drop(columns=[c for c in self.csv_only if c in self.frame.columns])
        if "metric" in frame.columns:
            frame = frame[~frame["metric"].isin(self.csv_only)]
        return frame.reset_index(drop=True)

    @property
    def retrieval_shown(self) -> pd.DataFrame | None:
        """The retrieval block as printed (its CSV keeps the run folder of each row)."""
        if self.retrieval is None:
            return None
        return self.retrieval.drop(columns=[c for c in ("run",) if c in self.retrieval.columns])

    def _head(self) -> list[str]:
        parts = [f"## {self.title}", ""]
        if self.cell_format:
            parts += [f"_{self.cell_format}_", ""]
        return parts

    def _tail(self, wrap: int | None = None) -> list[str]:
        def lines(items: list[str], bullet: str) -> list[str]:
            if wrap is None:
                return [f"{bullet}{item}" for item in items]
            return [line for item in items for line in textwrap.wrap(
                item, wrap, initial_indent=bullet, subsequent_indent=" " * max(len(bullet), 4),
                break_long_words=False, break_on_hyphens=False)]

        parts: list[str] = []
        if self.footnotes:
            parts += ["", *lines(self.footnotes, "")]
        if self.retrieval is not None and not self.retrieval.empty:
            parts += ["", f"### {self.retrieval_title}", "", "{retrieval}"]
        if self.fill:
            parts += ["", *lines(self.fill, "")]
        if self.notes:
            parts += ["", *lines(self.notes, "- ")]
        return parts

    def markdown(self) -> str:
        parts = self._head()
        parts.append("_No runs found._" if self.frame.empty else markdown(self.shown))
        block = markdown(self.retrieval_shown) if self.retrieval is not None and not self.retrieval.empty else ""
        parts += [block if line == "{retrieval}" else line for line in self._tail()]
        return "\n".join(parts) + "\n"

    def console(self, width: int = CONSOLE_WIDTH, where: str = "") -> str:
        """The table for a terminal: every line at most ``width`` characters. A grid wider than that is
        named, not printed (``where``: the file that holds it); footnotes and notes are wrapped."""
        parts = [*textwrap.wrap(f"## {self.title}", width), ""]
        if self.cell_format:
            parts += [*textwrap.wrap(f"_{self.cell_format}_", width), ""]

        def grid(frame: pd.DataFrame | None) -> str:
            if frame is None or frame.empty:
                return "_No runs found._"
            text = markdown(frame)
            if max(len(line) for line in text.splitlines()) <= width:
                return text
            return records(frame, width, where)

        parts.append(grid(self.shown))
        parts += [grid(self.retrieval_shown) if line == "{retrieval}" else line for line in self._tail(wrap=width)]
        return "\n".join(parts) + "\n"
