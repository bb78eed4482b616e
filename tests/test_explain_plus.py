"""scripts/explain.py for Mem++ plus (issue 24): the gold turn's rank in each of mempp_plus's legs
and in its fused list, as for mempp (tests/test_explain.py).

mempp_plus fuses other lists than Mem++ (its any-term BM25 lexical leg at its own weight, a date leg
when the question names a day or period, rows following their thread's leader), so the placements
come from the very lists its ``retrieve`` takes the top k from. On LoCoMo (lexical weight 2, no
thread expansion, no sentence views: configs/dataset/locomo.yaml) conv-26/1 "When did Melanie
paint a sunrise?" names no date, so its legs are lexical, tag and vector.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from model_clients.kvstore import EMBEDDINGS, run_cache
from harness.compose import compose_config
from harness.config import RunConfig
from harness.plan import build_encoder
from harness.systems import RunContext, build_system
from loaders import load_dataset, prepare_data_dir
from memplusplus import MemPPConfig
from memplusplus.ranking import weighted_rrf
from memplusplus.plus import PlusMemory, PlusOptions
from memplusplus.plus.dates import named_periods
from tests.test_mempp_plus import CLOCK, dated_pair, ids, thread_docs

ROOT = Path(__file__).resolve().parent.parent
OVERRIDES = ["dataset=locomo", "system=mempp_plus", "dataset.limit=3"]
QID, GOLD = "conv-26/1", "D1:12"


def record_of(folder: Path, qid: str) -> dict:
    lines = (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return next(r for r in map(json.loads, lines) if r["qid"] == qid)


@pytest.fixture(scope="module")
def plus_run(tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    tmp = tmp_path_factory.mktemp("explain_plus")
    run = subprocess.run([sys.executable, "run.py", *OVERRIDES, "progress=false", f"store.cache_dir={tmp / 'cache'}",
                          f"store.results_dir={tmp / 'runs'}"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr
    (folder,) = (tmp / "runs" / "locomo").iterdir()
    explained = subprocess.run([sys.executable, "scripts/explain.py", str(folder), QID], cwd=ROOT,
                               capture_output=True, text=True, timeout=120)
    return folder, tmp / "cache", explained


def test_explain_names_the_gold_turns_rank_in_each_plus_leg_and_the_fused_list(plus_run):
    folder, _, explained = plus_run
    record = record_of(folder, QID)
    (gold,) = record["gold_docs"]
    # Measured: BM25 over any question term ranks D1:12 31st, the vector leg not in its top 50, the tag
    # leg (no tags on LoCoMo) matches nothing; fused 41st, so the run returns it at #41 of k = 50.
    assert gold["doc_id"] == GOLD and gold["legs"] == {"lexical": 31, "tag": None, "vector": None}
    assert (gold["fused_rank"], gold["rank"], gold["returned_rank"], gold["read"]) == (41, 41, 41, True)
    assert record["leg_sizes"] == {"lexical": 200, "tag": 0, "vector": 200} and record["reference"] == "2022"
    assert explained.returncode == 0, explained.stderr
    lines = explained.stdout.splitlines()
    assert "gold D1:12: system rank #41, returned at #41" in lines
    assert "  legs: lexical #31, tag matched nothing, vector not in the top 50; fused #41" in lines
    assert "answer: not answered (retrieval-only run); reference: '2022'" in lines


def test_the_recorded_ranks_are_those_of_plus_own_legs(plus_run):
    """The same ranks from mempp_plus's legs queried directly and fused by hand at LoCoMo's weights."""
    folder, cache, _ = plus_run
    config = RunConfig.from_dict(compose_config([*OVERRIDES, f"store.cache_dir={cache}"]))
    data = prepare_data_dir("locomo", config.dataset.data_dir, config.dataset.options, progress=False)
    (episode,) = load_dataset("locomo", data_dir=data, limit=3)
    question = next(q for q in episode.questions if q.qid == QID)
    encoder = build_encoder(config.encoder.backend, config.encoder.params, run_cache(config.store, EMBEDDINGS))
    memory = build_system(RunContext(config.system, encoder, str(cache))).memory
    assert isinstance(memory, PlusMemory) and not memory.options.thread_expansion
    memory.ingest(episode.documents)
    assert named_periods(question.text, question.as_of) == []  # no date leg for this question
    rankings = memory.leg_rankings(question.text, memory.scope_mask(question.as_of))
    seq = memory.store.by_doc_id[GOLD]
    direct = {leg: ranking.index(seq) + 1 if seq in ranking else None for leg, ranking in rankings.items()}
    assert direct["lexical"] == 31 and direct["tag"] is None and direct["vector"] > 50
    weights = {"lexical": 2.0, "tag": 1.0, "vector": 2.0}  # configs/dataset/locomo.yaml: plus lexical_weight, Table 6
    fused = [row.seq for row in weighted_rrf(rankings, weights, memory.config.gamma)]
    assert fused.index(seq) + 1 == 41
    recorded = record_of(folder, QID)
    assert recorded["gold_docs"][0]["legs"] == {leg: r if r is not None and r <= 50 else None for leg, r in direct.items()}
    hits = memory.retrieve(question.text, question.as_of, 50)
    assert [h.doc_id for h in hits] == [h["doc_id"] for h in recorded["hits"]]  # diagnose changed nothing


def test_plus_diagnose_reports_the_date_leg_and_rows_that_followed_their_thread(encoder):
    """With the date leg and thread expansion on, the fused ranks are the order retrieve takes rows
    in (no recency reserve): a follower's fused rank is its leader's next, above its own legs'."""
    config = MemPPConfig(weights={"lexical": 1.0, "tag": 0.0, "vector": 2.0}, k=4, recency_reserve=0, tags="none")
    memory = PlusMemory(config, PlusOptions(date_scope=True, thread_expansion=True, packing=False), encoder=encoder,
                        clock=CLOCK)
    docs = thread_docs() + dated_pair()
    memory.ingest(docs)
    question, as_of = "What did the postmortem of March 1, 2023 say about the load balancer?", date(2023, 4, 1)
    report = memory.diagnose(question, as_of, [d.doc_id for d in docs], 8)
    assert report.leg_sizes == {"lexical": 2, "vector": 6, "date": 6}
    by_fused = sorted((p.fused, doc) for doc, p in report.placements.items() if p.fused is not None)
    assert ids(memory.retrieve(question, as_of, 4)) == [doc for _, doc in by_fused[:4]] == ["b1", "b2", "a1", "a2"]
    # b2 follows b1 (thread T2): fused 2nd, though its best leg puts it 3rd
    assert (report.placements["b2"].legs, report.placements["b2"].fused) == ({"lexical": None, "vector": 3, "date": 3}, 2)
    assert not report.placements["july"].in_scope and report.placements["july"].fused is None
