"""Figure 4: Mem++'s score (or, without judge metrics, its recall) against k, with the tokens read."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from harness.reports.format import is_missing
from harness.safe_write import atomic_write_with
from harness.reports.ksweep import k_sweep_data
from harness.reports.comparable import paper_metric
from harness.reports.labels import DATASET_LABELS, HEADLINE, K_SWEEP_FALLBACK


def plot_k_sweep(tidy: pd.DataFrame, paper: pd.DataFrame, out_path: str | Path, dataset: str = "orgmem",
                 mode: str = "auto", differences: dict | None = None) -> Path:
    """Figure 4 as PNG: x = k, left axis = score (or the retrieval fallback), right axis = read
    tokens per question (est.); the paper's curves are drawn dashed when ours are judge scores.
    Needs matplotlib (imported here, so the tables work without it)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("plotting needs matplotlib: pip install matplotlib") from exc

    data, judge = k_sweep_data(tidy, dataset, mode, differences)
    sweep = data[data["k"] != "full_context"]
    if sweep.empty:
        raise ValueError(f"no mempp runs on {dataset} to plot")
    headline = HEADLINE.get(dataset, "score")
    metrics = [paper_metric(headline)] if judge else K_SWEEP_FALLBACK  # the paper's curves are this number
    fig, ax = plt.subplots(figsize=(8, 5.6), dpi=150)
    tokens_ax = ax.twinx()
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color_index = 0
    for answerer, group in sweep.groupby("answerer", sort=False):
        ks = group["k"].astype(int).tolist()
        for metric in metrics:
            color = colors[color_index % len(colors)]
            color_index += 1
            label = metric if answerer == "none" else f"{metric} [{answerer}]"
            ax.plot(ks, group[metric], marker="o", color=color, label=label)
            full = data[(data["k"] == "full_context") & (data["answerer"] == answerer)]
            if not full.empty and not is_missing(full[metric].iloc[0]):
                ax.axhline(full[metric].iloc[0], color=color, linestyle=":", linewidth=1,
                           label=f"full context, {label}")
        suffix = "" if answerer == "none" else f" [{answerer}]"
        tokens_ax.plot(ks, group["read_tokens"], color="0.45", linestyle="--", marker="s", markersize=3,
                       label="tokens read / question, after the budget (est.)" + suffix)
        per_question = group["retrieved_tokens_total"] / group["n_questions"]
        if per_question.notna().any():
            tokens_ax.plot(ks, per_question, color="0.65", linestyle=(0, (1, 1.5)), marker="^", markersize=3,
                           label="tokens retrieved / question, before the cut (est.)" + suffix)
    if judge and dataset == "orgmem":
        part = paper[(paper["table"] == "7") & (paper["metric"] == "score") & (paper["row"] != "Full Context")]
        for answerer, group in part.groupby("answerer", sort=False):
            color = colors[color_index % len(colors)]
            color_index += 1
            ax.plot(group["row"].astype(int), group["value"].astype(float), linestyle="--", marker="x",
                    color=color, alpha=0.7, label=f"paper {answerer}")
    all_ks = sorted(set(sweep["k"].astype(int)))
    ax.set_xticks(all_ks)
    ax.set_xlabel("k (rows retrieved)")
    if 50 in all_ks:
        ax.axvline(50, color="0.88", linewidth=3, zorder=0)
        ax.annotate("k = 50 (paper)", xy=(50, 0.02), xycoords=("data", "axes fraction"), ha="center", fontsize=8,
                    color="0.4")
    ax.set_ylabel(f"{headline} (0-100)" if judge else "recall (0-1)")
    if judge:
        ax.set_ylim(bottom=0)
    else:
        ax.set_ylim(0, 1.05)
    tokens_ax.set_ylabel("tokens per question (chars / 4)")
    tokens_ax.set_ylim(bottom=0)
    tokens_ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v / 1000:.0f}k"))
    title = f"Figure 4: Mem++ on {DATASET_LABELS.get(dataset, dataset)} vs k"
    if not judge:
        title += "\nretrieval fallback (no judge metrics in the runs)"
    ax.set_title(title, fontsize=11)
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    handles2, labels2 = tokens_ax.get_legend_handles_labels()
    fig.legend(handles + handles2, labels + labels2, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * math.ceil(len(labels + labels2) / 2), 1, 1))
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_with(out_path, lambda tmp: fig.savefig(tmp, format=out_path.suffix.lstrip(".") or "png"))
    plt.close(fig)
    return out_path
