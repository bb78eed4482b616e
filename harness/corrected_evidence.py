"""``recall_any@k`` on the errata's corrected evidence ids (LoCoMo, locomo-audit), beside the
recorded value, from each record's kept hits; the recomputation over the original ids must equal
the recorded value (checked for every question).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from judges.aggregate import summarize


def ranked(record: dict[str, Any]) -> list[str]:
    """Document ids in rank order, a chunk's documents in turn, each once (as the runner ranks them)."""
    seen: dict[str, None] = {}
    for hit in record.get("hits") or []:
        for doc_id in hit.get("sources") or [hit["doc_id"]]:
            seen.setdefault(doc_id, None)
    return list(seen)


def recall_any(ids: Sequence[str], gold: Sequence[str], k: int) -> float:
    return math.nan if not gold else float(bool(set(ids[:k]) & set(gold)))


def corrected_recall(records: Sequence[dict[str, Any]], corrected: dict[str, Sequence[str]], k: int = 10,
                     exclude_from_overall: Sequence[str] = ()) -> pd.DataFrame:
    """Per category: ``recall_any@k`` as recorded and on the corrected evidence, and how many
    questions changed gold. ValueError when a recomputed value differs from the recorded one."""
    metric = f"recall_any@{k}"
    rows = []
    for record in records:
        ids, gold = ranked(record), list(record.get("gold") or [])
        recorded = (record.get("metrics") or {}).get(metric)
        again = recall_any(ids, gold, k)
        if recorded is not None and not math.isnan(again) and again != recorded:
            raise ValueError(f"{record['qid']}: {metric} recomputed {again} but recorded {recorded}")
        fixed = corrected.get(record["qid"])
        rows.append({"category": record.get("category"), metric: again,
                     f"{metric} corrected": recall_any(ids, fixed, k) if fixed is not None else again,
                     "gold changed": float(fixed is not None and sorted(fixed) != sorted(gold))})
    frame = summarize(rows, [metric, f"{metric} corrected", "gold changed"], exclude_from_overall=exclude_from_overall)
    frame["gold changed"] = (frame["gold changed"] * frame["n"]).round().astype(int)
    return frame
