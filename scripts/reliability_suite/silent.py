"""Issue 31's silent cases (points 1, 2, 3, 5, 10, 11) on a checkout: the exit code, the figure a run
printed, the line on stderr. Runs share one embedding cache (``$MEMPP_HOSTILE_CACHE``, default
/tmp/mempp-hostile-cache) so only the first embeds; the ONNX case tampers with an export of its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

from .common import GUARD_S, case_registry, ROOT, last_json, python
from .common import run_py as _run_py

DATA = Path(os.environ.get("MEMPP_DATA_DIR", ROOT.parent / "shared" / "data"))
CACHE = Path(os.environ.get("MEMPP_HOSTILE_CACHE", "/tmp/mempp-hostile-cache"))

CASES, case = case_registry()


def run_py(code: Path, args: list[str], cwd: Path, cache: Path = CACHE, script: str | None = None) -> dict:
    env = {"MEMPP_DATA_DIR": str(DATA), "MEMPP_CACHE_DIR": str(cache), "MEMPP_RESULTS_DIR": str(cwd / "runs")}
    return _run_py(code, args, cwd, env, script)


def recall(result: dict, metric: str = "recall_any@10") -> str:
    value = result["metrics"].get("summary", {}).get("overall", {}).get(metric)
    return "no figure" if value is None else f"{metric} {value:.3f}"


def outcome(result: dict) -> str:
    if result["exit"] == 0:
        return f"exit 0, {recall(result)}"
    return f"exit {result['exit']}: `{result['stderr'][:110]}`"


def boolean_no(code: Path, scratch: Path, setting: list[str]) -> str:
    """A boolean setting given as ``no`` (its last override), beside the same run with ``false`` and ``true``."""
    said = run_py(code, setting, scratch)
    key = setting[-1].split("=")[0]
    false = run_py(code, [*setting[:-1], f"{key}=false"], scratch)
    true = run_py(code, [*setting[:-1], f"{key}=true"], scratch)
    return f"{outcome(said)} (=false: {recall(false)}; =true: {recall(true)})"


case("system.conjunctive=no (orgmem)")(partial(boolean_no, setting=["system.conjunctive=no"]))
case("system=bm25 system.respect_as_of=no (orgmem)")(partial(boolean_no, setting=["system=bm25", "system.respect_as_of=no"]))


@case("estimate=no")
def estimate_no(code: Path, scratch: Path) -> str:
    result = run_py(code, ["estimate=no", "dataset.limit=3"], scratch)
    dry = "a dry run" if "Dry run" in result["stdout"] else "a real run" if result["folder"] else "no run"
    return f"{outcome(result) if result['exit'] else 'exit 0'}: {dry}"


def flip_sign_bits(path: Path, tensors: int = 12) -> None:
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    floats = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT]
    for tensor in sorted(floats, key=lambda t: -int(np.prod(t.dims)))[:tensors]:
        tensor.CopyFrom(numpy_helper.from_array(-numpy_helper.to_array(tensor), tensor.name))
    onnx.save(model, str(path))
    onnx.checker.check_model(str(path))


@case("ONNX export with 12 sign-flipped weight tensors (LoCoMo, 100 questions, vector)")
def tampered_onnx(code: Path, scratch: Path) -> str:
    """LoCoMo (first 100 questions, vector search) on the ONNX export, then on the same export with
    12 weight tensors' sign bits flipped and the embedding and retrieval caches emptied; then check_cache."""
    cache = scratch / "onnx-cache"
    args = ["dataset=locomo", "dataset.limit=100", "system=vector", "encoder=minilm_onnx"]
    clean = run_py(code, args, scratch, cache)
    exports = sorted((cache / "onnx").glob("*.onnx"))
    if clean["exit"] or not exports:
        return f"first run: {outcome(clean)}"
    flip_sign_bits(exports[0])
    for stale in cache.glob("*.sqlite*"):
        stale.unlink()
    check = subprocess.run([sys.executable, str(code / "scripts" / "check_cache.py"), str(cache)], capture_output=True,
                           text=True, timeout=GUARD_S, env={**os.environ, "PYTHONPATH": str(code)})
    bad = [line for line in check.stdout.splitlines() if "bad" in line and ".onnx" in line]
    tampered = run_py(code, args, scratch, cache)
    warned = [line for line in tampered["stderr_lines"] if ".onnx" in line]
    return (f"{recall(clean)} -> {outcome(tampered)}; {len(warned)} stderr line(s) on the export; "
            f"check_cache: exit {check.returncode}, {len(bad)} bad model(s)")


@case("same request to a second local server on another port")
def two_local_servers(code: Path, scratch: Path) -> str:
    script = '''
        import json
        from pathlib import Path
        from model_clients.kvstore import KVStore
        from model_clients.llm_client import ChatRequest, LLMClient, LLMConfig
        from tests.fake_openai_server import FakeOpenAIServer
        request = ChatRequest(messages=[{"role": "user", "content": "How many lamps?"}], template_hash="t")
        cache = KVStore(Path("llm.sqlite"))
        def server(reply):  # a local server that says nothing of what it serves (a user's own vLLM, llama.cpp ...)
            try:
                return FakeOpenAIServer(answer_fn=lambda b: reply, serves=None)
            except TypeError:  # the fake of a checkout from before issue 31
                return FakeOpenAIServer(answer_fn=lambda b: reply)
        with server("two") as a, server("three") as b:
            client = lambda url: LLMClient(LLMConfig(model="same", base_url=url, api_key_env=None, max_retries=0), cache)
            first = client(a.base_url).complete(request).text
            second = client(b.base_url).complete(request).text
            print(json.dumps({"a": first, "b": second, "b_requests": b.request_count}))
    '''
    got = last_json(python(code, script, scratch))
    return f"server B got {got['b_requests']} request(s) and the reply {got['b']!r} (server A said {got['a']!r}, B says 'three')"


@case("same-size data edit with its mtime put back")
def same_size_edit(code: Path, scratch: Path) -> str:
    """Run on a copy of OrgMemBench, edit one byte of a question (same size, mtime put back), run again."""
    data = scratch / "data"
    shutil.copytree(DATA / "orgmembench", data / "orgmembench")
    name = "orgmembench/datasets/helix/medium/benchmark_v0.0.jsonl"  # the questions the run reads
    target = data / name
    time.sleep(2.5)  # the copy is settled before the first run hashes it
    args = [f"dataset.data_dir={data}", "dataset.limit=2"]
    first = run_py(code, args, scratch)
    before = os.stat(target)
    raw = bytearray(target.read_bytes())
    at = raw.index(b'"text": "') + len(b'"text": "') + 2  # a letter of the first question
    raw[at] = ord("Z") if raw[at] != ord("Z") else ord("Y")
    target.write_bytes(bytes(raw))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = run_py(code, args, scratch)
    truth = hashlib.sha256(target.read_bytes()).hexdigest()
    history = [json.loads(line) for line in (Path(second["folder"]) / "history.jsonl").read_text().splitlines() if line]
    digest = history[-1]["provenance"]["data_files"].get(name, "")
    first_digest = first["metrics"]["provenance"]["data_files"].get(name, "")
    verdict = "the bytes read" if digest == truth else "the OLD bytes" if digest == first_digest else "neither"
    return f"second run's history records {digest[:12]}... = sha256 of {verdict} (file now {truth[:12]}...)"


def one_setting(code: Path, scratch: Path, args: list[str]) -> str:
    result = run_py(code, [*args, "dataset.limit=3"], scratch)
    return outcome(result) if result["exit"] else f"exit 0, run folder {'written' if result['folder'] else 'none'}"


case("encoder.max_tokens=0")(partial(one_setting, args=["encoder.max_tokens=0"]))
case("store.results_dir=/proc")(lambda code, scratch: outcome(run_py(code, ["store.results_dir=/proc", "dataset.limit=3"], scratch)))


@case("store.cache_dir= (empty)")
def empty_cache_dir(code: Path, scratch: Path) -> str:
    folder = scratch / "work"
    folder.mkdir()
    result = run_py(code, ["store.cache_dir=", "dataset.limit=3", "system=bm25"], folder)
    written = sorted(p.name for p in folder.iterdir() if p.name not in ("runs", "outputs"))
    return f"{outcome(result) if result['exit'] else 'exit 0'}; written into the working folder: {written or 'nothing'}"


case("dataset.categories=[]")(partial(one_setting, args=["dataset.categories=[]"]))


def frozen_clock(code: Path) -> str:
    """A ``python -c`` script running ``code``'s run.py with Hydra's clock stopped at 2026-01-02 03:04:05."""
    return f'''
        import datetime, runpy, sys
        import hydra.core.utils as hydra_utils
        class Frozen(datetime.datetime):
            @classmethod
            def now(cls, tz=None):
                return cls(2026, 1, 2, 3, 4, 5)
        hydra_utils.datetime = Frozen
        sys.path.insert(0, {str(code)!r})
        sys.argv = ["run.py", *sys.argv[1:]]
        runpy.run_path({str(code / "run.py")!r}, run_name="__main__")
    '''


@case("two single runs in the same second")
def runs_in_one_second(code: Path, scratch: Path) -> str:
    frozen = frozen_clock(code)
    for k in (5, 7):
        run_py(code, [f"system.k={k}", "dataset.limit=3", "system=bm25"], scratch, script=frozen)
    day = scratch / "outputs" / "hydra" / "2026-01-02"
    folders = sorted(p.name for p in day.iterdir()) if day.is_dir() else []
    return f"{len(folders)} Hydra run folder(s) for 2 runs ({', '.join(folders)})"


@case("LongMemEval gold session dated after its question")
def late_gold(code: Path, scratch: Path) -> str:  # BM25 honouring the as-of date
    from tests.test_loaders_synthetic import lme_entry, write_lme

    late = lme_entry("late")
    late["haystack_dates"][1] = "2023/06/02 (Fri) 10:00"
    write_lme(scratch / "lme", [lme_entry("fine"), late])
    result = run_py(code, ["dataset=longmemeval_s", f"dataset.data_dir={scratch / 'lme'}", "system=bm25",
                           "system.respect_as_of=true"], scratch)
    notes = result["metrics"].get("stats", {}).get("dataset_notes", {})
    said = [line for line in result["stderr_lines"] if "late" in line]
    return (f"exit {result['exit']}, {recall(result)}; notes in metrics.json: {sorted(notes) or 'none'}; "
            f"{len(said)} stderr line(s) naming it")
