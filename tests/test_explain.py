"""Issue 24, item 1: every record explains itself, and scripts/explain.py reads it.

A real LoCoMo run of 3 questions (Mem++, the offline MiniLM encoder) must store, for conv-26/1
("When did Melanie paint a sunrise?", gold turn D1:12, reference answer 2022), the gold turn's
rank in each leg and in the fused list, equal to what Mem++'s legs give when queried directly;
scripts/explain.py must name them and the reference; a cached re-run must explain the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from model_clients.kvstore import EMBEDDINGS, run_cache
from harness.compose import compose_config
from harness.config import RunConfig
from harness.plan import build_encoder
from harness.question_report import explain
from harness.systems.mempp_family import mempp_settings
from loaders import load_dataset, prepare_data_dir
from memplusplus.ranking import weighted_rrf
from memplusplus.memory import MemPlusPlus

ROOT = Path(__file__).resolve().parent.parent
OVERRIDES = ["dataset=locomo", "system=mempp", "dataset.limit=3"]
QID = "conv-26/1"


def run_cli(tmp: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "run.py", *OVERRIDES, "progress=false",
               f"store.cache_dir={tmp / 'cache'}", f"store.results_dir={tmp / 'runs'}"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)  # a hang guard only


def run_dir(tmp: Path) -> Path:
    (folder,) = (tmp / "runs" / "locomo").iterdir()
    return folder


def record_of(folder: Path, qid: str) -> dict:
    lines = (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return next(r for r in map(json.loads, lines) if r["qid"] == qid)


def explain_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "scripts/explain.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess, subprocess.CompletedProcess]:
    tmp = tmp_path_factory.mktemp("explain")
    cold = run_cli(tmp)
    assert cold.returncode == 0, cold.stderr
    cold_explained = explain_cli(str(run_dir(tmp)), QID)
    warm = run_cli(tmp)
    assert warm.returncode == 0, warm.stderr
    assert "retrieval cache hits 3" in warm.stdout
    return run_dir(tmp), cold_explained, explain_cli(str(run_dir(tmp)), QID)


def test_record_holds_reference_and_gold_ranks_per_leg(runs):
    record = record_of(runs[0], QID)
    assert record["reference"] == "2022"
    assert record["metrics"]["recall_any@50"] == 0.0
    (gold,) = record["gold_docs"]
    # Measured: the lexical leg ranks D1:12 36th; the vector leg not in its top 50; the tag leg
    # (tags: none on LoCoMo) matches nothing; RRF puts it below 50, so the run never returns it.
    assert gold["doc_id"] == "D1:12" and gold["text"].startswith("[1:56 pm on 8 May, 2023] Melanie: You'd be a great counselor!")
    assert gold["legs"] == {"lexical": 36, "tag": None, "vector": None}
    assert (gold["fused_rank"], gold["rank"], gold["returned_rank"]) == (None, None, None)
    assert (gold["read"], gold["budget_cut"], gold["in_scope"], gold["stored"]) == (False, False, True, True)
    assert record["leg_sizes"] == {"lexical": 200, "tag": 0, "vector": 200}
    assert record["explain_depth"] == 50


def test_recorded_ranks_equal_mempps_own_legs(runs):
    """The same ranks from Mem++'s legs queried directly, and diagnose leaves retrieve unchanged."""
    config = RunConfig.from_dict(compose_config([*OVERRIDES, f"store.cache_dir={runs[0].parent.parent.parent / 'cache'}"]))
    data = prepare_data_dir("locomo", config.dataset.data_dir, config.dataset.options, progress=False)
    (episode,) = load_dataset("locomo", data_dir=data, limit=3)
    question = next(q for q in episode.questions if q.qid == QID)
    memory = MemPlusPlus(mempp_settings(config.system), encoder=build_encoder(
        config.encoder.backend, config.encoder.params, run_cache(config.store, EMBEDDINGS)))  # the run's vectors, not recomputed
    memory.ingest(episode.documents)
    before = [h.doc_id for h in memory.retrieve(question.text, question.as_of, 50)]
    rankings = memory.leg_rankings(question.text, memory.scope_mask(question.as_of))
    seq = memory.store.by_doc_id["D1:12"]
    direct = {leg: ranking.index(seq) + 1 if seq in ranking else None for leg, ranking in rankings.items()}
    assert direct["lexical"] == 36 and direct["tag"] is None
    assert direct["vector"] is not None and direct["vector"] > 50  # ranked, but below the depth
    fused = [row.seq for row in weighted_rrf(rankings, {l: memory.config.weight(l) for l in rankings}, memory.config.gamma)]
    assert fused.index(seq) + 1 > 50
    recorded = record_of(runs[0], QID)["gold_docs"][0]
    assert recorded["legs"] == {leg: rank if rank is not None and rank <= 50 else None for leg, rank in direct.items()}
    report = memory.diagnose(question.text, question.as_of, ["D1:12"], 50)
    assert report.placements["D1:12"].legs == recorded["legs"]
    assert [h.doc_id for h in memory.retrieve(question.text, question.as_of, 50)] == before
    assert [h["doc_id"] for h in record_of(runs[0], QID)["hits"]] == before


def test_explain_names_each_legs_rank_and_the_reference(runs):
    folder, cold, warm = runs
    assert cold.returncode == 0, cold.stderr
    text = cold.stdout
    assert "gold D1:12: system rank not in the top 50, not returned" in text
    assert "legs: lexical #36, tag matched nothing, vector not in the top 50; fused not in the top 50" in text
    assert "lost by the vector leg(s)" in text and "fusion put it below #50" in text
    assert "reference: '2022'" in text and "not answered" in text
    assert "top hit: D1:14 (lexical #8, vector #1)" in text


def test_cached_rerun_explains_the_same(runs):
    _, cold, warm = runs
    assert warm.returncode == 0 and warm.stdout == cold.stdout


def test_answered_record_prints_the_answer_beside_the_reference(runs):
    record = {**record_of(runs[0], QID), "answer": "In 2023."}
    assert explain(record)[-1] == "answer: 'In 2023.'; reference: '2022'"


def test_one_line_for_unknown_qid_and_non_run_folder(runs, tmp_path):
    unknown = explain_cli(str(runs[0]), "conv-99/7")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.strip().startswith("no question 'conv-99/7' in ") and len(unknown.stderr.strip().splitlines()) == 1
    not_run = explain_cli(str(tmp_path), QID)
    assert not_run.returncode == 2 and not_run.stderr.strip() == f"{tmp_path} is not a run folder (it has no records.jsonl)"


def test_diagnose_is_the_position_in_each_leg_and_in_the_fused_list():
    """On a small corpus: every document's reported rank is its 1-based place in the leg's and in
    the fused ranking (None past the depth), rows dated after the as-of day are out of scope."""
    from datetime import date, datetime

    from memplusplus import Document, MemPPConfig
    from memplusplus.encoder import Encoder

    memory = MemPlusPlus(MemPPConfig(k=3, conjunctive=False, tags="author"), encoder=Encoder())
    memory.ingest([Document(f"d{i}", f"note {i} about the {'budget' if i % 2 else 'launch'} plan", "Maya", datetime(2023, 1, 1 + i))
                   for i in range(12)])
    question, as_of, depth = "Maya budget plan", date(2023, 1, 9), 4
    scope = memory.scope_mask(as_of)
    rankings = memory.leg_rankings(question, scope)
    fused = [row.seq for row in weighted_rrf(rankings, {l: memory.config.weight(l) for l in rankings}, memory.config.gamma)]
    report = memory.diagnose(question, as_of, [f"d{i}" for i in range(12)], depth)
    assert report.leg_sizes == {leg: len(r) for leg, r in rankings.items()} and report.leg_sizes["tag"] > 0
    for i in range(12):
        seq = memory.store.by_doc_id[f"d{i}"]
        placement = report.placements[f"d{i}"]
        want = {leg: r.index(seq) + 1 if seq in r and r.index(seq) < depth else None for leg, r in rankings.items()}
        assert placement.legs == want
        assert placement.fused == (fused.index(seq) + 1 if seq in fused and fused.index(seq) < depth else None)
        assert placement.in_scope == (i <= 8)  # dated 2023-01-(1+i), as of 2023-01-09 (its end of day)
    assert sum(p.fused is not None for p in report.placements.values()) == depth
