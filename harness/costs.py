"""What a memory costs per question, from run folders alone: retrieval latency p50/p95/p99 (records'
``retrieval_seconds``), context tokens read (the answerer's own tokenizer, else chars / 4 as an
estimate), write-time calls and dollars per document, store size on disk and in memory (summed over
the episodes' stores), and as-of leakage (items dated after their question's as-of day: 0 for
Mem++). What a folder does not hold prints as "—".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from harness.run_data import RunData

COLUMNS = ["system", "questions", "latency p50 ms", "p95 ms", "p99 ms", "read tokens", "tokens by", "write calls/doc",
           "write $/doc", "disk MB", "memory MB", "leaked items", "leak questions"]
ESTIMATE = "chars/4 (est.)"


def _nested(data: dict[str, Any], path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _number(value: Any) -> float:
    try:
        return float(value) if value is not None and not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        return math.nan


def _day(text: Any) -> str | None:
    return str(text)[:10] if text else None


def leakage(records: Sequence[dict[str, Any]]) -> tuple[int, int, int]:
    """(items dated after their question's as-of day, questions with any, questions with an as-of date)."""
    items = questions = dated = 0
    for record in records:
        as_of = _day(record.get("as_of"))
        if as_of is None:
            continue
        dated += 1
        late = sum(1 for hit in record.get("hits") or [] if (_day(hit.get("date")) or "") > as_of)
        items += late
        questions += late > 0
    return items, questions, dated


def cost_row(run: RunData) -> dict[str, Any]:
    stats = run.metrics.get("stats") or {}
    latencies = np.array([_number(r.get("retrieval_seconds")) for r in run.records], dtype=float)
    latencies = latencies[~np.isnan(latencies)] * 1000
    p50, p95, p99 = (np.percentile(latencies, [50, 95, 99]) if latencies.size else (math.nan,) * 3)
    counted = bool(run.records) and all("read_tokens" in r for r in run.records)
    tokens = [_number(r.get("read_tokens" if counted else "read_tokens_est")) for r in run.records]
    documents = _number(_nested(stats, "model_calls.documents"))
    dollars = _number(_nested(stats, "write_spend.dollars"))
    items, questions, dated = leakage(run.records)
    return {
        "system": run.system, "questions": len(run.records), "latency p50 ms": p50, "p95 ms": p95, "p99 ms": p99,
        "read tokens": float(np.nanmean(tokens)) if any(not math.isnan(t) for t in tokens) else math.nan,
        "tokens by": str(stats.get("read_tokenizer") or "own tokenizer") if counted else ESTIMATE,
        "write calls/doc": _number(_nested(stats, "model_calls.write_chat_calls_per_document")),
        "write $/doc": dollars / documents if documents and not math.isnan(dollars) else math.nan,
        "disk MB": _number(stats.get("store_bytes")) / 1e6,
        "memory MB": _number(stats.get("store_memory_bytes")) / 1e6, "leaked items": items if dated else math.nan,
        "leak questions": f"{questions}/{dated}" if dated else "no as-of",
    }


def cost_table(runs: Sequence[RunData]) -> pd.DataFrame:
    return pd.DataFrame([cost_row(run) for run in runs], columns=COLUMNS).set_index("system")
