"""The errata on our question ids, for a run (``dataset.errata``) and for its gold documents
(``dataset.errata_evidence``); and ``recall_any@k`` on the corrected evidence ids (LoCoMo,
locomo-audit) beside the recorded value, from each record's kept hits; the recomputation over the
original ids must equal the recorded value (checked for every question).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from judges.aggregate import summarize
from loaders.published import Erratum, match_keys
from memory_protocol import Episode, Question


def audited_questions(errata: list[Erratum], episodes: list[Episode]) -> dict[str, Erratum]:
    """Our question id of each erratum (``episodes``: the whole of LoCoMo, in file order)."""
    questions = match_keys([(e.conversation, e.question, e.gold) for e in errata], episodes, "errata")
    return {q.qid: e for q, e in zip(questions, errata)}


def run_errata(name: str, root: Path | None, data_dir: str | None) -> dict[str, Erratum]:
    """``dataset.errata`` for a run: the pinned file (fetched when missing; into ``data_dir`` when it or
    ``$MEMPP_DATA_DIR`` names the data folder) on LoCoMo's question ids."""
    from loaders.fetch import fetch_errata
    from loaders.published import load_errata
    from loaders.locomo import load_locomo

    errata = load_errata(name, file=fetch_errata(name, root, data_dir))
    return audited_questions(errata, list(load_locomo(root)))


def corrected_evidence(episodes: list[Episode], audited: dict[str, Erratum]) -> list[Episode]:
    """``dataset.errata_evidence``: each audited question's gold documents are the corrected ones."""
    def fixed(question: Question) -> Question:
        erratum = audited.get(question.qid)
        return question if erratum is None else replace(question, evidence_ids=erratum.correct_evidence)

    return [replace(ep, questions=tuple(fixed(q) for q in ep.questions)) for ep in episodes]


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
