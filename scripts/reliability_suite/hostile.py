"""Issue 23's hostile cases (items 6-10) on a checkout: history and run folders on a full disk, tables
over a full disk, two sweeps in one second, the proxy without its token, a key given as a setting.

The disk-full cases fill a real 1 MiB tmpfs to its last page (root); the make_tables case fails the
third file it writes with ENOSPC after 7 bytes, at the system-call level for either code
(``builtins.open`` and ``os.write``). The key is fake; every file of the scratch folder is searched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

from tests.small_disk import SmallDisk

from .common import GUARD_S, case_registry, last_json, python, run_py, stderr_shown
from .silent import frozen_clock

FAKE_KEY = "sk-proj-hostileFakeKey0123456789abcdef"

CASES, case = case_registry()


@case("full disk during a history.jsonl append, then a normal run", needs_root=True)
def torn_history(code: Path, scratch: Path) -> str:
    step = '''
        import sys
        from pathlib import Path
        from harness.results import RunPaths, append_history
        n = int(sys.argv[2])
        pad = "x" * (4096 - 60) if n == 1 else "y" * 200  # entry 1 leaves ~40 bytes of its page
        try:
            append_history(RunPaths(Path(sys.argv[1]) / "run"), {"n": n, "pad": pad})
            print("ok")
        except BaseException as exc:
            print(type(exc).__name__)
    '''
    with closing(SmallDisk(scratch / "fs-history", 1024)) as fs:
        results = []
        for n in (1, 2, 3):
            if n == 2:
                fs.leave(0)
            proc = python(code, step, scratch, str(fs.path), str(n), with_tests=False)
            results.append(proc.stdout.strip() or proc.stderr.strip().splitlines()[-1])
            fs.free()
        lines = (fs.path / "run" / "history.jsonl").read_bytes().decode(errors="replace").splitlines()
        readable = []
        for line in lines:
            try:
                readable.append(json.loads(line)["n"])
            except (json.JSONDecodeError, KeyError):
                pass
        torn = (fs.path / "run" / "history.jsonl.torn").exists()
        return (f"append on the full disk: {results[1]}; entries readable after: {readable} of the 2 completed "
                f"(1, 3); {len(lines) - len(readable)} broken line(s){'; fragment in history.jsonl.torn' if torn else ''}")


@case("run.py with its results store on a full disk", needs_root=True)
def run_on_full_disk(code: Path, scratch: Path) -> str:
    with closing(SmallDisk(scratch / "fs-run", 1024)) as fs:
        fs.leave(0)
        result = run_py(code, ["dataset.limit=3"], scratch, {"MEMPP_RESULTS_DIR": str(fs.path / "runs")})
        shown = "traceback" if "Traceback" in result["stderr_text"] else stderr_shown(result["stderr_text"])
        return f"exit {result['exit']}; stderr: {shown}; temp files left: {len(list(fs.path.rglob('*.tmp')))}"

@case("make_tables over old tables, the 3rd file hits a full disk")
def tables_on_full_disk(code: Path, scratch: Path) -> str:
    script = '''
        import builtins, errno, io, json, os, sys
        from pathlib import Path
        code, runs, out, fail = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4] == "fail"
        sys.argv = [sys.argv[0]]
        import importlib.util
        spec = importlib.util.spec_from_file_location("make_tables", code / "scripts" / "make_tables.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        opened = []
        real_open, real_write = builtins.open, os.write

        class FullAfter7(io.RawIOBase):
            def __init__(self, handle): self.handle, self.room = handle, 7
            def writable(self): return True
            def write(self, data):
                if self.room <= 0: raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                n = self.handle.write(bytes(data[:self.room])); self.room -= n; return n
            def close(self): self.handle.close(); super().close()

        def is_third(path):
            path = str(path)
            if str(out) not in path: return False
            if path not in opened: opened.append(path)
            return len(opened) == 3 and opened[2] == path

        def fake_open(file, mode="r", *args, **kwargs):
            if fail and "w" in mode and is_third(file):
                raw = FullAfter7(real_open(file, "wb"))
                return io.TextIOWrapper(io.BufferedWriter(raw), encoding=kwargs.get("encoding") or "utf-8") if "b" not in mode else io.BufferedWriter(raw)
            return real_open(file, mode, *args, **kwargs)

        def fake_write(fd, data):
            if fail and is_third(os.readlink(f"/proc/self/fd/{fd}")):
                size = os.fstat(fd).st_size
                if size == 0 and len(data) > 7: return real_write(fd, bytes(data[:7]))
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_write(fd, data)

        builtins.open, io.open, os.write = fake_open, fake_open, fake_write
        try:
            code_ = module.main(["--runs", str(runs), "--out", str(out), "--tables", "1,7", "--quiet", "--newest"])
            print(json.dumps({"exit": code_}))
        except BaseException as exc:
            print(json.dumps({"exit": "traceback " + type(exc).__name__}))
    '''
    from tests.tables_support import write_run  # the tables tests' hand-written run folders

    runs, out = scratch / "tables-runs", scratch / "tables-out"
    overall = {"overall": {"n": 73, "recall_any@10": 0.5, "ndcg_any@10": 0.4, "budget_recall": 0.3}}
    write_run(runs, "orgmem", "mempp-a", system="mempp", k=10, answerer="none", summary=overall)
    ok = python(code, script, scratch, str(code), str(runs), str(out), "ok")
    assert ok.returncode == 0, ok.stderr[-2000:]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    write_run(runs, "orgmem", "mempp-b", system="mempp", k=10, answerer="none",
              summary={"overall": {**overall["overall"], "recall_any@10": 0.9}}, mtime=10)
    proc = python(code, script, scratch, str(code), str(runs), str(out), "fail")
    outcome = json.loads(proc.stdout.strip().splitlines()[-1])["exit"] if proc.stdout.strip() else proc.stderr[-300:]
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    changed = sorted(name for name in before if after.get(name) != before[name])
    partial = sorted(name for name, data in after.items() if name in before and data != before[name] and len(data) <= 7)
    temps = sorted(name for name in after if name.endswith(".tmp"))
    return (f"exit {outcome}; {len(changed)} of {len(before)} files replaced ({len(partial)} cut to 7 bytes or less), "
            f"{len(before) - len(changed)} old; temp files left: {len(temps)}")


@case("two sweeps started in the same second")
def sweeps_in_one_second(code: Path, scratch: Path) -> str:
    folder = scratch / "sweeps"
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": str(code), "MEMPP_RESULTS_DIR": str(folder / "runs")}
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(frozen_clock(code)), "-m", f"system.k={k}",
                               "dataset.limit=3", "progress=false"], cwd=folder, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for k in (5, 7)]
    for proc in procs:
        proc.communicate(timeout=GUARD_S)
    day = folder / "outputs" / "hydra" / "multirun" / "2026-01-02"
    sweeps = sorted(p.name for p in day.iterdir()) if day.is_dir() else []
    pointers = list(day.glob("*/*/sweep_job.json"))
    return (f"{len(sweeps)} multirun folder(s) for 2 sweeps ({', '.join(sweeps)}); {len(pointers)} job pointer(s) "
            f"left of 2 (exit codes {[p.returncode for p in procs]})")


@case("a local request to the caching proxy without its token")
def proxy_without_token(code: Path, scratch: Path) -> str:
    script = '''
        import json, urllib.error, urllib.request
        from pathlib import Path
        from model_clients.kvstore import KVStore
        from model_clients.llm_client import LLMClient, LLMConfig
        from model_clients.proxy import LLMProxy
        from tests.fake_openai_server import FakeOpenAIServer
        with FakeOpenAIServer() as server:
            config = LLMConfig(model="gpt-4o-mini", base_url=server.base_url, api_key_env=None, timeout_s=10, max_retries=0)
            with LLMProxy(LLMClient(config, KVStore(Path("llm.sqlite")))) as proxy:
                body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "spend the owner's key"}]}).encode()
                request = urllib.request.Request(proxy.base_url + "/chat/completions", data=body,
                                                 headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=30) as response:
                        status = response.status
                except urllib.error.HTTPError as exc:
                    status = exc.code
            print(json.dumps({"status": status, "upstream": server.request_count}))
    '''
    result = last_json(python(code, script, scratch))
    return f"HTTP {result['status']}; requests sent upstream on the owner's key: {result['upstream']}"


@case("answerer.api_key_env=sk-… (the key itself)")
def key_in_env_setting(code: Path, scratch: Path) -> str:
    script = f'''
        import os, subprocess, sys
        from tests.fake_openai_server import FakeOpenAIServer
        with FakeOpenAIServer() as server:
            url = server.base_url
            args = ["answerer=openai_compatible", "answerer.model=fake", "answerer.base_url=" + url,
                    "answerer.api_key_env={FAKE_KEY}", "judge.model=fake-judge", "judge.base_url=" + url,
                    "judge.api_key_env=null", "dataset.limit=2", "progress=false"]
            env = {{**os.environ, "{FAKE_KEY}": "x", "MEMPP_RESULTS_DIR": "runs", "MEMPP_CACHE_DIR": "cache"}}
            proc = subprocess.run([sys.executable, {str(code / "run.py")!r}, *args], env=env, capture_output=True, text=True)
        print(proc.returncode)
        sys.stderr.write(proc.stdout + proc.stderr)
    '''
    folder = scratch / "key"
    folder.mkdir()
    proc = python(code, script, folder)
    holding = [p.name for p in folder.rglob("*") if p.is_file() and FAKE_KEY.encode() in p.read_bytes()]
    return (f"exit {proc.stdout.strip().splitlines()[-1]}; {len(holding)} file(s) hold the key "
            f"({', '.join(sorted(set(holding))) or 'none'}); "
            f"console {'echoes it' if FAKE_KEY in proc.stderr else 'does not show it'}")
