"""The paper's published numbers (results/paper/*.csv, long format) and look-ups into them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from harness.reports.format import MISSING, NOT_AVAILABLE

DEFAULT_PAPER_DIR = Path(__file__).resolve().parents[2] / "results" / "paper"
PAPER_COLUMNS = ["table", "answerer", "row", "column", "category", "metric", "value", "source"]


def load_paper(paper_dir: str | Path | None = DEFAULT_PAPER_DIR) -> pd.DataFrame:
    """All ``table*.csv`` of ``paper_dir`` in one frame (values kept as printed strings)."""
    frames = []
    if paper_dir is not None and Path(paper_dir).is_dir():
        frames = [pd.read_csv(p, dtype=str, keep_default_na=False) for p in sorted(Path(paper_dir).glob("table*.csv"))]
    if not frames:
        return pd.DataFrame(columns=PAPER_COLUMNS)
    paper = pd.concat(frames, ignore_index=True)
    paper["table"] = paper["table"].astype(str)
    paper["answerer_key"] = paper["answerer"].map(norm_answerer)
    return paper


def norm_answerer(name: str) -> str:
    """``openai/gpt-4o-mini`` and ``GPT-4o-mini`` both match the paper's ``gpt-4o-mini``."""
    return str(name).strip().lower().rsplit("/", 1)[-1]


def paper_values(paper: pd.DataFrame, table: int | str) -> dict[tuple[str, str, str, str], str]:
    """``{(row, answerer key, category, metric): value as printed}`` of one table."""
    part = paper[paper["table"] == str(table)]
    if part.empty:
        return {}
    keys = part["answerer"].map(norm_answerer) if "answerer_key" not in part else part["answerer_key"]
    return dict(zip(zip(part["row"], keys, part["category"], part["metric"]), part["value"]))


def paper_lookup(values: dict, row: str | None, answerer: str | None, category: str, metric: str) -> str | None:
    """The paper's value as printed, or None (``answerer`` None: a value printed for no answerer)."""
    if row is None:
        return None
    return values.get((row, "" if answerer is None else norm_answerer(answerer), category, metric))


def paper_cell(values: dict, row: str | None, answerer: str, category: str, metric: str) -> str:
    value = paper_lookup(values, row, answerer, category, metric)
    if value is None:
        return NOT_AVAILABLE
    std = paper_lookup(values, row, answerer, category, f"{metric}_std")
    return value if std is None else f"{value} ± {std}"


def paper_reference(paper: pd.DataFrame, table: int) -> pd.DataFrame:
    """The paper's table back in wide form: one row per (answerer, row), its columns as printed."""
    part = paper[paper["table"] == str(table)].copy()
    if part.empty:
        return pd.DataFrame(columns=["answerer", "row"])
    part["kind"] = part["metric"].map(lambda m: "std" if m.endswith("_std") else "delta" if m == "delta_vs_mempp" else "main")
    cells = part.pivot_table(index=["answerer", "row", "column"], columns="kind", values="value", aggfunc="first",
                             sort=False)
    for kind in ("main", "std", "delta"):
        if kind not in cells:
            cells[kind] = None
    text = cells["main"].fillna(NOT_AVAILABLE)
    text = text.where(cells["std"].isna(), text + " ± " + cells["std"].fillna(""))
    text = text.where(cells["delta"].isna(), text + " (" + cells["delta"].fillna("") + ")")
    wide = text.unstack("column").reindex(columns=list(dict.fromkeys(part["column"])))
    wide = wide.fillna(NOT_AVAILABLE).reset_index()
    wide["answerer"] = wide["answerer"].replace("", MISSING)
    order = list(dict.fromkeys(zip(part["answerer"].replace("", MISSING), part["row"])))
    wide = wide.set_index(["answerer", "row"]).loc[order].reset_index()
    wide.columns.name = None
    return wide


@dataclass(frozen=True)
class PaperColumn:
    """One column as a table prints it: the paper's header (ours where the paper has no such column),
    the summary category and metric of its cells, and whether the paper prints it."""

    header: str
    category: str
    metric: str
    in_paper: bool = True


def paper_columns(paper: pd.DataFrame, table: int | str) -> list[PaperColumn]:
    """The paper's columns of one table in its printed order (stds and deltas ride along in a cell)."""
    part = paper[(paper["table"] == str(table)) & ~paper["metric"].str.endswith("_std")
                 & (paper["metric"] != "delta_vs_mempp")]
    seen = dict.fromkeys(zip(part["column"], part["category"], part["metric"]))
    return [PaperColumn(header, category, metric) for header, category, metric in seen]


def paper_answerers(paper: pd.DataFrame, table: int | str) -> list[str]:
    """The answerers the paper reports a table for, in its order."""
    part = paper[paper["table"] == str(table)]
    return [a for a in dict.fromkeys(part["answerer"]) if a]


def answerers_in_order(paper_side: Sequence[str], ours: Iterable[str]) -> list[str]:
    """The paper's answerers in its order, then ours it does not report."""
    return list(dict.fromkeys([*paper_side, *sorted(set(ours) - set(paper_side))]))


def has_paper_row(paper: pd.DataFrame, table: int | str, row: str | None) -> bool:
    return row is not None and bool(((paper["table"] == str(table)) & (paper["row"] == row)).any())
