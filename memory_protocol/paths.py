"""Where the harness writes (one cache root) and where it looks for a folder of inputs (one search order)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CACHE_ENV = "MEMPP_CACHE_DIR"
REPO_ROOT = Path(__file__).resolve().parent.parent


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """$MEMPP_CACHE_DIR, else ~/.cache/mempp: every file the harness computes or fetches lives below it."""
    env = os.environ if env is None else env
    return Path(env.get(CACHE_ENV) or "~/.cache/mempp").expanduser()


def search_folders(name: str, named: str | os.PathLike[str] | None = None, env_var: str | None = None, *,
                   env: Mapping[str, str] | None = None, cwd: Path | None = None,
                   repo_root: Path | None = None) -> list[tuple[Path, str]]:
    """Where a folder of inputs called ``name`` may be, in order, each with why it is a candidate.

    A setting (``named``) or ``$env_var`` is the only candidate when given; otherwise ./<name>,
    <repo>/<name>, <repo>/../shared/<name>, then <cache root>/<name> (where the fetch scripts write).
    """
    env = os.environ if env is None else env
    if named is not None and str(named) != "":
        return [(Path(named).expanduser(), f"{name}_dir argument")]
    if env_var and env.get(env_var):
        return [(Path(env[env_var]).expanduser(), f"${env_var}")]
    cwd, repo_root = cwd or Path.cwd(), repo_root or REPO_ROOT
    return [(cwd / name, f"./{name}"), (repo_root / name, f"<repo>/{name}"),
            (repo_root.parent / "shared" / name, f"<repo>/../shared/{name}"),
            (cache_root(env) / name, "the cache root")]
