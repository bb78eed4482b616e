"""The judge-robustness table of judged runs of the same answers (a run and its ``rejudge`` copies):
each system's score per judge (model and wording), its rank movement, Cohen's kappa per judge pair,
Fleiss' kappa over all (a label is "right" at a mean grade of 50), and leniency: the accept rate on
locomo-audit's deliberately wrong answers (``ap_v1`` / ``ap_v2``), published or once graded.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from harness.misses import PASS_MARK
from harness.run_data import RunData
from harness.stats.agreement import cohen_kappa, fleiss_kappa, leniency, rating_counts


def judge_name(run: RunData) -> str:
    judge = run.config.get("judge") or {}
    prompt = str(judge.get("prompt_file") or "")
    wording = "strict" if "strict" in Path(prompt).stem else "run wording"
    return f"{judge.get('model') or judge.get('name')} ({wording})"


def system_name(run: RunData) -> str:
    source = (run.metrics.get("stats") or {}).get("rejudged_from")
    return Path(source).name.split("__")[0].rsplit("-", 1)[0] if source else run.system


def labels(run: RunData) -> dict[str, bool]:
    metric = run.headline()
    out = {}
    for record in run.records:
        value = (record.get("metrics") or {}).get(metric)
        if value is not None:
            out[record["qid"]] = float(value) >= PASS_MARK
    return out


def robustness(runs: Sequence[RunData], lenient: dict[str, float] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The table (systems x judges: overall score, then rank movement) and the agreement lines."""
    by_judge: dict[str, dict[str, RunData]] = {}
    for run in runs:
        by_judge.setdefault(judge_name(run), {})[system_name(run)] = run
    judges = sorted(by_judge)
    systems = sorted({s for found in by_judge.values() for s in found})
    scores = pd.DataFrame(index=systems, columns=judges, dtype=float)
    for judge, found in by_judge.items():
        for system, run in found.items():
            row = (run.metrics.get("summary") or {}).get("overall") or {}
            scores.loc[system, judge] = row.get(f"{run.headline()}_paper", row.get(run.headline(), math.nan))
    ranks = scores.rank(ascending=False)
    table = scores.copy()
    table["rank moves"] = (ranks.max(axis=1) - ranks.min(axis=1)).astype(float)
    table.index.name = "system"
    pooled = {judge: {(s, q): v for s, run in found.items() for q, v in labels(run).items()}
              for judge, found in by_judge.items()}
    lines = []
    for a, b in itertools.combinations(judges, 2):
        shared = sorted(set(pooled[a]) & set(pooled[b]))
        kappa = cohen_kappa([pooled[a][k] for k in shared], [pooled[b][k] for k in shared])
        lines.append(f"Cohen's kappa {a} vs {b}: {kappa:.3f} over {len(shared):,} answers")
    if len(judges) > 2:
        shared = sorted(set.intersection(*(set(pooled[j]) for j in judges)))
        kappa = fleiss_kappa(rating_counts([[pooled[j][k] for j in judges] for k in shared]))
        lines.append(f"Fleiss' kappa over {len(judges)} judges: {kappa:.3f} over {len(shared):,} answers")
    lenient = lenient or {}
    for judge in [*judges, *(name for name in lenient if name not in judges)]:
        known = lenient.get(judge)
        lines.append(f"leniency {judge}: " + (f"{known:.2f}% of deliberately wrong answers accepted" if known is not None
                                              else "— (not graded on the deliberately wrong answers)"))
    return table, lines


def published_leniency(data_dir: Path) -> dict[str, float]:
    """The published mem0 judge's accept rate on ap_v1 / ap_v2 (the files' own labels, all runs)."""
    from loaders.published import read_published

    out = {}
    for version in ("ap_v1", "ap_v2"):
        path = data_dir / "published" / "audit" / f"{version}.scored.json"
        if path.is_file():
            grades = [g for item in read_published(path).items for g in item.grades]
            out[f"published mem0 judge, gpt-4o-mini, {version}"] = 100.0 * leniency(grades)
    return out
