"""Model calls of the write-time systems per document and per question, ingest time and peak memory.

    python scripts/measure_write_time.py                       # LoCoMo conv-26, then OrgMemBench
    python scripts/measure_write_time.py --datasets locomo --systems mempp mem0 zep

Each system runs in a child process (empty LLM cache; its getrusage gives peak RSS and CPU) against
one local fake server answering fixture replies (tests/write_time_fakes.py); calls are counted at the
system's client, at the proxy before Mem0 and Zep, and at the server, and must agree. No score comes
out of this, and counts that depend on the model's answers (Mem^g++'s triple call, consolidation
groups, Mem0's update step, Zep's resolution calls) are those of the fixtures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from script_common import ROOT, markdown, run_config

from harness.safe_write import atomic_write
from harness.systems import write_time_kinds

SYSTEMS = ("mempp", *write_time_kinds())  # Mem++ (no write-time call) beside every system that makes some
EPISODE = {"locomo": "conv-26", "orgmem": None}  # None: the dataset's only episode
CHILD_TIMEOUT_S = 3 * 3600  # a hang guard only


def _child(dataset: str, system: str, base_url: str, workdir: str, embeddings: str, max_docs: int | None) -> dict[str, Any]:
    """Ingest one episode and answer its questions' retrievals; return the counts and costs."""
    from harness.plan import build_encoder
    from model_clients.kvstore import KVStore, embedding_store
    from model_clients.call_counts import difference, snapshot
    from harness.systems import RunContext, build_system
    from loaders import load_dataset

    overrides = [f"system={system}", f"dataset={dataset}", "progress=false", f"store.cache_dir={workdir}"]
    if system != "mempp":
        overrides += [f"system.llm.base_url={base_url}", "system.llm.api_key_env=null"]
    config = run_config(*overrides)
    episodes = load_dataset(config.dataset.name, data_dir=config.dataset.data_dir, **config.dataset.options)
    wanted = EPISODE[dataset]
    episode = next(e for e in episodes if wanted is None or e.episode_id == wanted)
    documents = episode.documents[:max_docs] if max_docs else episode.documents
    encoder = build_encoder(config.encoder.backend, config.encoder.params, cache=embedding_store(Path(embeddings)))
    built = build_system(RunContext(config.system, encoder, workdir, KVStore(Path(workdir) / "llm.sqlite")))
    memory = built.memory
    try:
        start = snapshot(built.client, encoder)
        wall, cpu = time.perf_counter(), time.process_time()
        memory.ingest(documents)
        ingest_wall, ingest_cpu = time.perf_counter() - wall, time.process_time() - cpu
        written = snapshot(built.client, encoder)
        for question in episode.questions:
            memory.retrieve(question.text, question.as_of, config.system.k)
        read = snapshot(built.client, encoder)
        proxy = getattr(memory, "proxy", None)
        proxy_total = proxy.counters if proxy is not None else None
    finally:
        built.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "dataset": dataset, "episode": episode.episode_id, "system": system,
        "documents": len(documents), "questions": len(episode.questions),
        "write": difference(written, start).as_dict(), "read": difference(read, written).as_dict(),
        "proxy_total_chat": proxy_total.chat_requests if proxy_total is not None else None,
        "ingest_wall_s": round(ingest_wall, 1), "ingest_cpu_s": round(ingest_cpu, 1),
        "process_cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024),
    }


def _measure(server: Any, dataset: str, system: str, scratch: Path, max_docs: int | None) -> dict[str, Any]:
    workdir = scratch / f"{dataset}-{system}"
    embeddings = scratch / f"{dataset}-embeddings.sqlite" if dataset == "orgmem" else workdir / "embeddings.sqlite"
    workdir.mkdir(parents=True, exist_ok=True)
    seen = len(server.requests)
    command = [sys.executable, __file__, "--child", dataset, system, server.base_url, str(workdir), str(embeddings)]
    if max_docs:
        command += ["--max-docs", str(max_docs)]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    if proc.returncode != 0:
        return {"dataset": dataset, "system": system, "error": proc.stderr.strip()[-1500:]}
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    received = server.requests[seen:]
    row["server_chat"] = sum(1 for r in received if "messages" in r.body)
    row["server_embedding_requests"] = len(received) - row["server_chat"]
    return row


def table(rows: list[dict[str, Any]]) -> str:
    header = ["dataset", "system", "docs", "questions", "write chat calls (sent)", "per doc", "read chat calls",
              "per question", "at proxy", "at server", "ingest wall / CPU s", "peak RSS MB"]
    body = []
    for r in rows:
        if "error" in r:
            body.append([r["dataset"], r["system"], f"failed: {r['error'].splitlines()[-1][:120]}"])
            continue
        w, q = r["write"], r["read"]
        body.append([r["episode"], r["system"], r["documents"], r["questions"],
                     f"{w['chat_calls']} ({w['chat']['requests_sent']})", f"{w['chat_calls'] / max(r['documents'], 1):.2f}",
                     q["chat_calls"], f"{q['chat_calls'] / max(r['questions'], 1):.2f}",
                     "-" if r["proxy_total_chat"] is None else r["proxy_total_chat"], r["server_chat"],
                     f"{r['ingest_wall_s']} / {r['ingest_cpu_s']}", f"{r['peak_rss_mb']:,}"])
    # the figures as formatted above, counts and figures right-aligned
    return markdown(header, body, numbers=False, align=["left"] * 2 + ["right"] * (len(header) - 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["locomo", "orgmem"], choices=sorted(EPISODE))
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--max-docs", type=int, default=None, help="ingest only the first N documents (a stated subset)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--child", nargs=5, metavar=("DATASET", "SYSTEM", "BASE_URL", "WORKDIR", "EMBEDDINGS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child, args.max_docs)))
        return
    from tests.fake_openai_server import FakeOpenAIServer
    from tests.write_time_fakes import any_write_time_reply

    print(f"started {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="mempp-write-time-") as folder, FakeOpenAIServer(answer_fn=any_write_time_reply) as server:
        for dataset in args.datasets:
            for system in args.systems:
                row = _measure(server, dataset, system, Path(folder), args.max_docs)
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.json:
                    atomic_write(args.json, json.dumps(rows, indent=1))
    print(f"finished {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()}\n")
    print(table(rows))


if __name__ == "__main__":
    main()
