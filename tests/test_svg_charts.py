"""The report's charts and run order (issue 30, point 9): runs sorted with numbers compared as
numbers, a legend that wraps instead of running off the chart, and a k-sweep series that equals
another drawn so that both stay visible."""

from __future__ import annotations

import re
from pathlib import Path

from harness.reports.report_runs import RunData, natural_key, ordered
from harness.reports.svg_charts import CHAR_WIDTH, bar_chart, legend_rows, line_chart


def _run(label: str, k: int, **system) -> RunData:
    config = {"dataset": {"name": "locomo", "ks": [10, 50]}, "system": {"name": "bm25", "k": k, **system}}
    return RunData(Path(label), config, records=[], metrics={}, label=label)


def test_runs_are_ordered_with_numbers_compared_as_numbers():
    ks = [10, 100, 15, 30, 5]  # a shell glob's (text) order
    sweep = [_run(f"k={k}", k) for k in ks]
    assert [run.system_k for run in ordered(sweep)] == [5, 10, 15, 30, 100]
    assert sorted(["run 10", "run 9", "run 100"], key=natural_key) == ["run 9", "run 10", "run 100"]
    # a leg ablation keeps the given order: its first run is the baseline of "change from the first run"
    legs = [_run("b", 10, params={"weights": {"vector": 1.0}}), _run("a", 10, params={"weights": {"vector": 0.0}})]
    assert [run.label for run in ordered(legs)] == ["b", "a"]


def test_a_long_legend_wraps_into_rows_inside_the_chart():
    names = [f"mempp_variant_{i}_with_a_rather_long_descriptive_suffix" for i in range(4)]
    rows = legend_rows(names, 840)
    assert len(rows) > 1 and sum(len(row) for row in rows) == 4
    for row in rows:  # every entry ends inside the plot's width
        for s, offset in row:
            assert offset + 30 + CHAR_WIDTH * len(names[s]) <= 840 or offset == 0
    svg = bar_chart(["overall"], [(name, [0.5]) for name in names], "legs")
    height = int(re.search(r'height="(\d+)"', svg).group(1))
    assert height == 320 + 16 * (len(rows) - 1)  # the chart grows by a row per extra legend row
    legend_y = [float(y) for y in re.findall(r'<text x="[\d.]+" y="([\d.]+)" class="tick">mempp_variant', svg)]
    assert len(legend_y) == 4 and max(legend_y) < height
    assert all(name in svg for name in names)  # nothing cut


def test_a_series_equal_to_another_is_drawn_dashed_over_it_and_named_in_the_legend():
    xs = [5, 10, 30]
    svg = line_chart(xs, [("recall_any@50", [0.6, 0.65, 0.7]), ("recall_any@all", [0.6, 0.65, 0.7]),
                          ("in_budget_recall", [0.5, 0.56, 0.6])], "sweep", "k")
    lines = re.findall(r'<polyline class="series"[^>]*>', svg)
    assert len(lines) == 3 and "stroke-dasharray" not in lines[0] and "stroke-dasharray" in lines[1]
    radii = sorted({float(r) for r in re.findall(r'<circle [^>]*r="([\d.]+)"', svg)})
    assert len(radii) == 3  # the later series' markers ring the earlier ones where they coincide
    assert "recall_any@all (= recall_any@50 at every k)" in svg
    assert "in_budget_recall (=" not in svg
