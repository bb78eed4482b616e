"""Inline SVG charts for the HTML report (grouped bars, lines over k) with a wrapping legend. Each line
has its own dash and marker, so a series equal to another stays visible; its legend entry says so.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

SERIES_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
DASHES = ("", "7 4", "2 3", "10 3 2 3")  # solid, dashed, dotted, dash-dot
LEGEND_ROW = 16  # px between two legend rows
LEGEND_CHARS = 110  # a longer legend entry is cut with "..."
CHAR_WIDTH = 7.0  # px per character of the 11 px legend text (an estimate, generous for most fonts)

Series = Sequence[tuple[str, Sequence[float | None]]]


def fmt_value(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.1f}" if abs(value) > 1.5 else f"{value:.3f}"


def _tick(value: float, scale_max: float) -> str:
    return f"{value:.2f}" if scale_max <= 1 else f"{value:g}"


def _scale_max(series: Series) -> float:
    top = max([v for _, values in series for v in values if v is not None] + [1e-9])
    return 1.0 if top <= 1.0 else math.ceil(top / 10) * 10


def _label(name: str) -> str:
    return name if len(name) <= LEGEND_CHARS else name[: LEGEND_CHARS - 3] + "..."


def legend_rows(names: Sequence[str], width: float) -> list[list[tuple[int, float]]]:
    """The legend laid out in rows no wider than ``width``: per row, (series index, x offset)."""
    rows: list[list[tuple[int, float]]] = [[]]
    offset = 0.0
    for s, name in enumerate(names):
        item = 30 + CHAR_WIDTH * len(_label(name))
        if rows[-1] and offset + item > width:
            rows.append([])
            offset = 0.0
        rows[-1].append((s, offset))
        offset += item
    return rows


def _legend(names: Sequence[str], x: float, y: float, width: float, lines: bool = False) -> str:
    """The legend from baseline ``y`` down; a line chart's entries show each series' dash pattern."""
    parts = []
    for row, items in enumerate(legend_rows(names, width)):
        base = y + row * LEGEND_ROW
        for s, offset in items:
            colour = SERIES_COLOURS[s % len(SERIES_COLOURS)]
            if lines:
                dash = DASHES[s % len(DASHES)]
                sample = (f'<line x1="{x + offset:.1f}" x2="{x + offset + 18:.1f}" y1="{base - 4}" y2="{base - 4}" '
                          f'stroke="{colour}" stroke-width="2"' + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
                text_x = x + offset + 22
            else:
                sample = f'<rect x="{x + offset:.1f}" y="{base - 9}" width="10" height="10" fill="{colour}"/>'
                text_x = x + offset + 14
            parts.append(sample + f'<text x="{text_x:.1f}" y="{base}" class="tick">{html.escape(_label(names[s]))}</text>')
    return '<g class="legend">' + "".join(parts) + "</g>"


def _canvas(names: Sequence[str], series: Series, title: str, width: int, height: int, margins: tuple[int, ...]
            ) -> tuple[list[str], float, float, float]:
    """The svg head, title and grid; the plot's width, height (less the extra legend rows) and scale."""
    left, right, head, foot = margins
    extra = (len(legend_rows(names, width - left - right)) - 1) * LEGEND_ROW
    height += extra
    scale_max = _scale_max(series)
    plot_w, plot_h = width - left - right, height - head - foot - extra
    parts = [f'<svg class="chart" role="img" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}"><title>{html.escape(title)}</title>',
             f'<text x="50" y="18" class="chart-title">{html.escape(title)}</text>']
    for step in range(5):
        y = head + plot_h - plot_h * step / 4
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
                     f'{_tick(scale_max * step / 4, scale_max)}</text>')
    return parts, plot_w, plot_h, scale_max


def bar_chart(groups: Sequence[str], series: Series, title: str, width: int = 900, height: int = 320) -> str:
    """Grouped bars: one group per entry of ``groups``, one bar per series in each; ``height`` grows
    by a row for every extra legend row."""
    left, head = 50, 40
    names = [name for name, _ in series]
    parts, plot_w, plot_h, scale_max = _canvas(names, series, title, width, height, (left, 10, head, 60))
    group_w = plot_w / max(len(groups), 1)
    bar_w = group_w * 0.8 / max(len(series), 1)
    for g, group in enumerate(groups):
        x0 = left + g * group_w + group_w * 0.1
        for s, (name, values) in enumerate(series):
            value = values[g] if g < len(values) else None
            if value is None:
                continue
            h = plot_h * value / scale_max
            x, y = x0 + s * bar_w, head + plot_h - h
            colour = SERIES_COLOURS[s % len(SERIES_COLOURS)]
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{max(bar_w - 2, 1):.1f}" height="{h:.1f}" '
                         f'fill="{colour}"><title>{html.escape(f"{name} · {group}: {fmt_value(value)}")}</title></rect>')
            if len(series) <= 3:
                parts.append(f'<text x="{x + bar_w / 2 - 1:.1f}" y="{y - 3:.1f}" text-anchor="middle" class="value">'
                             f'{fmt_value(value)}</text>')
        parts.append(f'<text x="{left + g * group_w + group_w / 2:.1f}" y="{head + plot_h + 16}" text-anchor="middle" '
                     f'class="tick">{html.escape(group)}</text>')
    parts.append(_legend(names, left, head + plot_h + 36, plot_w))
    parts.append("</svg>")
    return "".join(parts)


def same_as(series: Series) -> list[str | None]:
    """For each series, the name of an earlier series with exactly the same values (else None)."""
    found: list[str | None] = []
    for s, (_, values) in enumerate(series):
        found.append(next((name for name, other in series[:s] if list(other) == list(values)), None))
    return found


def line_chart(xs: Sequence[int], series: Series, title: str, x_label: str, width: int = 900, height: int = 320) -> str:
    """Lines over a numeric x axis (the k sweep). Each series has its own dash pattern and a marker
    that grows with its index, so equal series stay visible; the legend names the one it equals."""
    left, head = 50, 40
    names = [name if twin is None else f"{name} (= {twin} at every k)" for (name, _), twin in zip(series, same_as(series))]
    parts, plot_w, plot_h, scale_max = _canvas(names, series, title, width, height, (left, 20, head, 70))
    lo, hi = min(xs), max(xs)
    span = (hi - lo) or 1

    def px(x: float) -> float:
        return left + plot_w * (x - lo) / span if hi != lo else left + plot_w / 2

    def py(y: float) -> float:
        return head + plot_h - plot_h * y / scale_max

    for x in xs:
        parts.append(f'<text x="{px(x):.1f}" y="{head + plot_h + 16}" text-anchor="middle" class="tick">{x}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{head + plot_h + 34}" text-anchor="middle" class="tick">'
                 f'{html.escape(x_label)}</text>')
    for s, (name, ys) in enumerate(series):
        colour = SERIES_COLOURS[s % len(SERIES_COLOURS)]
        dash = DASHES[s % len(DASHES)]
        points = [(px(x), py(y), x, y) for x, y in zip(xs, ys) if y is not None]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in points)
        parts.append(f'<polyline class="series" fill="none" stroke="{colour}" stroke-width="2" points="{path}"'
                     + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        radius = 3.5 + 2.0 * s  # a later series' marker rings the earlier one's where they coincide
        fill = colour if s == 0 else "none"
        for x, y, kx, ky in points:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:.1f}" fill="{fill}" stroke="{colour}" '
                         f'stroke-width="1.5"><title>{html.escape(f"{name}, k={kx}: {fmt_value(ky)}")}</title></circle>')
    parts.append(_legend(names, left, head + plot_h + 54, plot_w, lines=True))
    parts.append("</svg>")
    return "".join(parts)
