"""Issue 31's integrity cases (items 4, 6, 7 and 8) on a checkout: a run folder rewritten on a full
disk (every free-page count 0-47, a 73-question run over a 3-question one) and under SIGKILLs at
random moments, a mixed folder tabled, keys without a known prefix, the proxy's body bound, a full
disk under the cache. Keys are fake; the proxy's memory is the peak RSS of the process serving it.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import textwrap
import time
from contextlib import closing
from pathlib import Path

from tests.small_disk import SmallDisk

from .common import ROOT, case_registry, last_json, python, run_py, stderr_shown

HEX_KEY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
AWS_KEY = "AKIAZ7QX4M2N6PLRT3VW"
SENT_MIB = 256

CASES, case = case_registry()

# A writer of two runs of one configuration (3 and 73 questions) and a judge of what a folder holds.
RUNS = '''
    import json, os, sys
    from pathlib import Path
    import pandas as pd
    from harness.results import RunPaths, write_run
    NAMES = ("config.json", "records.jsonl", "summary.csv", "summary.md", "metrics.json")

    def write(root, n, tag):
        records = [{"qid": f"q{i}", "tag": tag, "hits": ["d" * 30] * 40} for i in range(n)]
        summary = pd.DataFrame({"n": [n], "recall_any@10": [round(1 / (n + 1), 4)]}, index=["overall"])
        write_run(RunPaths(Path(root)), {"dataset": {"name": "orgmem", "limit": n}}, records, summary, f"t {tag}",
                  {"stats": {"questions": n}, "provenance": {"tag": tag}})

    def snapshot(root):
        return {name: (Path(root) / name).read_bytes() for name in NAMES if (Path(root) / name).exists()}

    def expected(scratch):
        write(scratch + "/x/old", 3, "old")
        write(scratch + "/x/new", 3, "old")
        write(scratch + "/x/new", 73, "new")
        return snapshot(scratch + "/x/old"), snapshot(scratch + "/x/new")

    def verdict(root, old, new):
        now = snapshot(root)
        return "previous" if now == old else "new" if now == new else "mixed"
'''


def _script(body: str) -> str:
    return textwrap.dedent(RUNS) + textwrap.dedent(body)


def _run(code: Path, body: str, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """``body`` (after the run writer above) in a subprocess importing ``code`` only."""
    return python(code, _script(body), cwd, *args, with_tests=False)


@case("4. a run folder rewritten on a full disk (every page count 0-47)", needs_root=True)
def folder_on_full_disk(code: Path, scratch: Path) -> str:
    with closing(SmallDisk(scratch / "fs", 1024)) as fs:
        body = '''
            import errno, shutil
            old, new = expected(sys.argv[2])
            disk, counts = Path(sys.argv[1]), {"previous": 0, "new": 0, "mixed": 0}
            for pages in range(48):
                root = disk / "orgmem" / "mempp-0123456789"
                write(root, 3, "old")
                stats = os.statvfs(disk)
                with open(disk / "filler", "wb") as handle:
                    try:
                        handle.write(b"\\0" * max(0, stats.f_bavail * stats.f_frsize - pages * 4096))
                    except OSError:
                        pass
                try:
                    write(root, 73, "new")
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                (disk / "filler").unlink()
                counts[verdict(root, old, new)] += 1
                shutil.rmtree(disk / "orgmem")
            print(json.dumps(counts))
        '''
        proc = _run(code, body, scratch, str(fs.path), str(scratch))
    if proc.returncode != 0:
        return f"error: {proc.stderr.strip()[-200:]}"
    counts = last_json(proc)
    return (f"48 page counts: the previous run whole {counts['previous']}, the new run whole {counts['new']}, "
            f"a mix of both {counts['mixed']}")


@case("4. a run folder's writer killed (SIGKILL) at random moments")
def folder_killed(code: Path, scratch: Path, kills: int = 20) -> str:
    writer = '''
        root = sys.argv[1]
        write(root, 3, "old")
        print("ready", flush=True)
        while True:
            write(root, 73, "new")
            write(root, 3, "old")
    '''
    judge = '''
        import tempfile
        old, new = expected(tempfile.mkdtemp(dir=sys.argv[2]))
        print(verdict(sys.argv[1], old, new))
    '''
    chance, seen = random.Random(31), {"previous": 0, "new": 0, "mixed": 0}
    env = {**os.environ, "PYTHONPATH": str(code)}
    root = scratch / "runs" / "orgmem" / "mempp-0123456789"
    for _ in range(kills):
        proc = subprocess.Popen([sys.executable, "-c", _script(writer), str(root)], env=env, stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()
        time.sleep(chance.uniform(0.01, 0.4))
        proc.kill()
        proc.communicate(timeout=60)
        out = _run(code, judge, scratch, str(root), str(scratch)).stdout.split()
        seen[out[-1] if out else "mixed"] += 1
    return f"{kills} kills: the previous run whole {seen['previous']}, the new run whole {seen['new']}, a mix {seen['mixed']}"


@case("4. make_tables over a folder mixing two runs (records 73, metrics 3)")
def tables_from_mixed_folder(code: Path, scratch: Path) -> str:
    body = '''
        root = sys.argv[1] + "/runs/orgmem/mempp-0123456789"
        write(root, 3, "old")
        stale = Path(root, "metrics.json").read_bytes()
        write(root, 73, "new")
        Path(root, "metrics.json").write_bytes(stale)
    '''
    _run(code, body, scratch, str(scratch))
    proc = subprocess.run([sys.executable, str(code / "scripts" / "make_tables.py"), "--runs", str(scratch / "runs"),
                           "--out", str(scratch / "tables"), "--newest", "--quiet"], cwd=scratch,
                          env={**os.environ, "PYTHONPATH": str(code)}, capture_output=True, text=True, timeout=600)
    err = [line.replace(str(scratch), "<scratch>") for line in proc.stderr.strip().splitlines() if line.strip()]
    shown = "traceback" if "Traceback" in proc.stderr else f"`{err[-1][:110]}…`" if err else "nothing"
    return f"exit {proc.returncode}; stderr: {shown}"


@case("6. answerer.api_key_env=<64 hex digits> / =<AKIA… key>")
def key_without_prefix(code: Path, scratch: Path) -> str:
    found = []
    for key in (HEX_KEY, AWS_KEY):
        folder = scratch / key[:4]
        folder.mkdir()
        env = {"MEMPP_RESULTS_DIR": "runs", "MEMPP_CACHE_DIR": "cache"}
        result = run_py(code, ["answerer=gpt-4o-mini", f"answerer.api_key_env={key}", "dataset.limit=1", "estimate=true"],
                        folder, env)
        files = [p for p in folder.rglob("*") if p.is_file() and key.encode() in p.read_bytes()]
        echoed = (result["stdout"] + result["stderr_text"]).count(key)
        found.append(f"{key[:4]}…: exit {result['exit']}, {len(files)} file(s) hold it, printed {echoed}x")
    return "; ".join(found)


@case("7. the proxy sent 1.5 GB (announced) without its token")
def proxy_big_body(code: Path, scratch: Path) -> str:
    server = '''
        import sys
        from pathlib import Path
        from model_clients.kvstore import KVStore
        from model_clients.llm_client import LLMClient, LLMConfig
        from model_clients.proxy import LLMProxy
        config = LLMConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=None, timeout_s=5, max_retries=0)
        with LLMProxy(LLMClient(config, KVStore(Path("llm.sqlite")))) as proxy:
            print(proxy.port, flush=True)
            sys.stdin.readline()
    '''
    env = {**os.environ, "PYTHONPATH": f"{code}{os.pathsep}{ROOT}"}
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(server)], cwd=scratch, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        port = int(proc.stdout.readline())
        start_rss = _rss_mib(proc.pid, "VmRSS")
        conn = socket.create_connection(("127.0.0.1", port), timeout=120)
        conn.sendall("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1500000000\r\n\r\n".encode())
        conn.settimeout(2)
        try:
            early = conn.recv(64).split(b" ", 2)[1].decode()
        except (socket.timeout, IndexError):
            early = None
        sent, block = 0, b"0" * (1 << 20)
        conn.settimeout(120)
        try:
            while sent < SENT_MIB << 20:
                conn.sendall(block)
                sent += len(block)
            conn.shutdown(socket.SHUT_WR)
            late = early or conn.recv(64).split(b" ", 2)[1].decode()
        except OSError:
            late = early
        peak = _rss_mib(proc.pid, "VmHWM")
        conn.close()
    finally:
        proc.communicate("\n", timeout=60)
    when = f"HTTP {early} before any of the body" if early else f"HTTP {late} only after the body was sent"
    return f"{when}; {sent >> 20} MiB accepted; proxy peak RSS {peak - start_rss:+.0f} MiB over its start"


def _rss_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


@case("8. run.py with store.cache_dir on a full disk", needs_root=True)
def cache_on_full_disk(code: Path, scratch: Path) -> str:
    with closing(SmallDisk(scratch / "fs", 1024)) as fs:
        fs.leave(40)
        result = run_py(code, ["dataset.limit=3", f"store.cache_dir={fs.path / 'cache'}"], scratch,
                        {"MEMPP_RESULTS_DIR": str(scratch / "runs")})
    return f"exit {result['exit']}; stderr: {stderr_shown(result['stderr_text'], scratch, 110)}"


# What these cases measured on the code before issue 31's fix (main at 9efb619), case by case.
BEFORE_ISSUE_31 = {
    "4. a run folder rewritten on a full disk (every page count 0-47)":
        "48 page counts: the previous run whole 1, the new run whole 23, a mix of both 24",
    "4. a run folder's writer killed (SIGKILL) at random moments":
        "20 kills: the previous run whole 14, the new run whole 6, a mix 0",
    "4. make_tables over a folder mixing two runs (records 73, metrics 3)":
        "exit 0; stderr: nothing (the stale metrics.json tabled)",
    "6. answerer.api_key_env=<64 hex digits> / =<AKIA… key>":
        "e3b0…: exit 0, 4 file(s) hold it; AKIA…: exit 0, 4 file(s) hold it",
    "7. the proxy sent 1.5 GB (announced) without its token":
        "HTTP 401 only after the body was sent; 256 MiB accepted; proxy peak RSS +256 MiB over its start",
    "8. run.py with store.cache_dir on a full disk":
        "exit 1; stderr: traceback, `sqlite3.OperationalError: disk I/O error`",
}
