"""Find the directory that holds the benchmark data files."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memory_protocol import DatasetError

ENV_VAR = "MEMPP_DATA_DIR"
REPO_ROOT = Path(__file__).resolve().parent.parent
USER_DATA_DIR = Path("~/.cache/mempp/data")  # where scripts/fetch_data.py and run.py put fetched data


@dataclass(frozen=True)
class Candidate:
    """One place a data directory may be, and why it was considered."""

    path: Path
    origin: str


def _describe(candidates: list[Candidate]) -> str:
    return "; ".join(f"{c.path} ({c.origin})" for c in candidates)


def user_data_dir() -> Path:
    """The user data cache (``~/.cache/mempp/data``), where fetched benchmarks go."""
    return USER_DATA_DIR.expanduser()


def explicit_data_dir(explicit: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Candidate | None:
    """The directory named by the ``data_dir`` setting, else by $MEMPP_DATA_DIR; None when neither is set."""
    if explicit is not None and str(explicit) != "":
        return Candidate(Path(explicit).expanduser(), "data_dir argument")
    if env.get(ENV_VAR):
        return Candidate(Path(env[ENV_VAR]).expanduser(), f"${ENV_VAR}")
    return None


def fallback_candidates(cwd: Path | None = None, repo_root: Path | None = None) -> list[Candidate]:
    """Where to look when nothing is named, in order; the user data cache comes last."""
    cwd, repo_root = cwd or Path.cwd(), repo_root or REPO_ROOT
    return [
        Candidate(cwd / "data", "./data in the working directory"),
        Candidate(repo_root / "data", "<repo root>/data"),
        Candidate(repo_root.parent / "shared" / "data", "<repo root>/../shared/data"),
        Candidate(user_data_dir(), "user data cache"),
    ]


def resolve_data_dir(
    explicit: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    repo_root: Path | None = None,
) -> Path:
    """Return the data directory: ``explicit``, else $MEMPP_DATA_DIR, else the first existing fallback
    (./data, <repo>/data, <repo>/../shared/data, the user data cache ~/.cache/mempp/data).

    An explicit argument or environment value that names a missing directory is an error (it is not
    silently replaced by a fallback). ``env``, ``cwd`` and ``repo_root`` exist for tests.
    """
    env = os.environ if env is None else env
    named = explicit_data_dir(explicit, env)
    if named is not None:
        return _must_exist([named])
    candidates = fallback_candidates(cwd, repo_root)
    for candidate in candidates:
        if candidate.path.is_dir():
            return candidate.path.resolve()
    raise DatasetError(
        "data directory",
        f"no data directory found; looked in: {_describe(candidates)}. "
        f"Pass data_dir or set ${ENV_VAR}.",
    )


def _must_exist(candidates: list[Candidate]) -> Path:
    candidate = candidates[0]
    if candidate.path.is_dir():
        return candidate.path.resolve()
    raise DatasetError(
        str(candidate.path),
        f"data directory does not exist; looked in: {_describe(candidates)}",
    )


def find_data_file(data_dir: Path, subdir: str, names: tuple[str, ...], explicit: str | None, what: str) -> Path:
    """The dataset file to read.

    ``explicit`` (an option) is taken as given when it exists, else relative to ``data_dir/subdir``;
    without it, the first of ``names`` that exists in ``data_dir/subdir``. Errors list every path tried.
    """
    folder = data_dir / subdir
    if explicit:
        tried = list(dict.fromkeys([Path(explicit).expanduser(), folder / explicit]))
    else:
        tried = [folder / name for name in names]
    for path in tried:
        if path.is_file():
            return path
    raise DatasetError(str(tried[0]), f"missing file ({what}); looked for: {', '.join(str(p) for p in tried)}")
