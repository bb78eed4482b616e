"""Search cost against store size from scripts/bench_scale.py output (one or more JSON files).

    python scripts/plot_scale.py scale.json [more.json ...] --out results/scale.png

Plots per-question CPU p50 (``time.process_time``; the steadier figure on a shared machine) and wall
p50 against rows, log-log: Mem++ in process (exact), Mem++ on Postgres, Mem++ with each ANN index,
and the references (numpy brute force, faiss IndexFlatIP, bm25s). A size present in several
files takes the first file's figures. Needs matplotlib.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SERIES = [  # label, backend, key inside the entry (None: the entry itself), wall field, cpu field, style
    ("Mem++ (exact)", "memory", None, "search_p50_ms", "search_cpu_p50_ms", "o-"),
    ("Mem++ postgres", "postgres", None, "search_p50_ms", "search_cpu_p50_ms", "s-"),
    ("Mem++ + HNSW", "memory", "ann_hnsw", "search_p50_ms", "search_cpu_p50_ms", "^-"),
    ("Mem++ + IVF", "memory", "ann_ivf", "search_p50_ms", "search_cpu_p50_ms", "v-"),
    ("numpy brute force", "memory", None, "numpy_bruteforce_p50_ms", "numpy_bruteforce_cpu_p50_ms", "k--"),
    ("faiss IndexFlatIP", "memory", None, "faiss_flat_p50_ms", "faiss_flat_cpu_p50_ms", "--"),
    ("bm25s (lexical only)", "memory", None, "bm25s_p50_ms", "bm25s_cpu_p50_ms", ":"),
]


def points(entries: list[dict], backend: str, key: str | None, field: str) -> tuple[list[int], list[float]]:
    seen: dict[int, float] = {}
    for entry in entries:
        if entry.get("backend") != backend or entry["rows"] in seen:
            continue
        source = entry.get(key) if key else entry
        if source and source.get(field) is not None:
            seen[entry["rows"]] = source[field]
    rows = sorted(seen)
    return rows, [seen[n] for n in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, default=Path("results/scale.png"))
    parser.add_argument("--title", default="Mem++ search p50 vs rows (k = 50, one question at a time)")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    entries = [entry for path in args.inputs for entry in json.loads(path.read_text())]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, which, name in ((axes[0], 4, "CPU p50 ms"), (axes[1], 3, "wall p50 ms")):
        for series in SERIES:
            rows, values = points(entries, series[1], series[2], series[which])
            if rows:
                ax.plot(rows, values, series[5], label=series[0], markersize=4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rows")
        ax.set_title(name)
        ax.grid(True, which="major", alpha=0.3)
    axes[0].set_ylabel("ms per question")
    axes[1].legend(fontsize=7, loc="upper left")
    fig.suptitle(args.title, fontsize=10)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=80)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
