"""Write or check the lock of the exact versions CI passed with (``requirements/ci.lock``).

    python scripts/lock.py check              # how this environment compares with the lock (exit 0)
    python scripts/lock.py check --strict     # exit 1 when an installed version differs from it
    python scripts/lock.py write [--out FILE] # write the lock from this environment (CI's venv)

``.ci/run`` writes its venv's lock after the tests pass and prints how it differs from the committed
one; to refresh, copy that file into ``requirements/ci.lock`` and commit it with the reason.
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from harness.provenance import LOCK_PATH, NO_DEPS, compare, installed, parse_lock, render_lock

HEADER = """The exact versions .ci/run passed with: every optional extra, Python {python}, {system} {machine}.
Exact reproduction (a new venv; the build flags make llama.cpp portable, see pyproject.toml):
  CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF" pip install -r requirements/ci.lock -e .
  pip install --no-deps {no_deps}
Written by `python scripts/lock.py write` in CI's venv; never edited by hand."""


def _write(out: Path) -> int:
    header = HEADER.format(python=platform.python_version(), system=platform.system(), machine=platform.machine(),
                           no_deps=" ".join(NO_DEPS).replace("hydra-ray-launcher", "hydra-ray-launcher==1.2.2"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_lock(installed(), header), encoding="utf-8")
    print(f"lock: wrote {len(parse_lock(out.read_text(encoding='utf-8')))} packages to {out}")
    return 0


def _check(path: Path, strict: bool) -> int:
    if not path.is_file():
        print(f"lock: {path} does not exist; write it with: python scripts/lock.py write", file=sys.stderr)
        return 2
    diff = compare(installed(), parse_lock(path.read_text(encoding="utf-8")))
    if diff.exact:
        print(f"lock: this environment is exactly {path}")
        return 0
    print(f"lock: against {path}: {len(diff.differ)} at another version, {len(diff.missing)} locked but not "
          f"installed, {len(diff.extra)} installed but not locked")
    for name, (have, locked) in diff.differ.items():
        print(f"  {name}: installed {have}, locked {locked}")
    for label, names in (("not installed", diff.missing), ("not locked", diff.extra)):
        if names:
            print(f"  {label}: {', '.join(names)}")
    return 1 if strict and diff.differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["check", "write"])
    parser.add_argument("--out", type=Path, default=LOCK_PATH, help="write: the file to write (default requirements/ci.lock)")
    parser.add_argument("--lock", type=Path, default=LOCK_PATH, help="check: the lock to compare with")
    parser.add_argument("--strict", action="store_true", help="check: exit 1 when an installed version differs")
    args = parser.parse_args(argv)
    return _write(args.out) if args.action == "write" else _check(args.lock, args.strict)


if __name__ == "__main__":
    raise SystemExit(main())
