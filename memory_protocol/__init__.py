"""The types every side shares, importing nothing else of ours: a memory takes ``Document``s and returns
``Hit``s through ``MemorySystem``; a loader yields ``Episode``s of ``Question``s; bad input raises
``ConfigError`` or ``DatasetError`` (one clear line). Also where the harness writes (one cache root) and
where it looks for a folder of inputs (one search order)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

CACHE_ENV = "MEMPP_CACHE_DIR"
REPO_ROOT = Path(__file__).resolve().parent.parent


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key."""


class DatasetError(Exception):
    """Bad or missing dataset input; the message names the file, the record and the field."""

    def __init__(self, path: str, message: str, record: str | None = None, field_name: str | None = None):
        where = str(path) + ("" if record is None else f", record {record}")
        where += "" if field_name is None else f", field '{field_name}'"
        super().__init__(f"{where}: {message}")
        self.path, self.record, self.field_name = str(path), record, field_name


# Who ``author`` names: a document's author, or only a conversational turn's speaker; the paper
# (§3.2) makes a tag only of a name the source gives as an author (MemPPConfig.tags).
AuthorRole = Literal["author", "speaker"]
AUTHOR_ROLES: tuple[str, ...] = ("author", "speaker")
# How a row is shown (paper §3.4, Appendix B): under a date + author header, or as stored behind
# its rank number (a conversational turn already leads with its date and speaker).
EvidenceStyle = Literal["header", "as_stored"]
EVIDENCE_STYLES: tuple[str, ...] = ("header", "as_stored")


@dataclass(frozen=True)
class Document:
    """One artefact, turn or session, stored whole; ``date`` is naive, ``thread`` groups versions
    and replies (an event, a session)."""

    doc_id: str
    text: str
    author: str | None = None
    date: datetime | None = None
    thread: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    author_role: AuthorRole = "author"
    evidence: EvidenceStyle = "header"

    def __post_init__(self) -> None:
        if self.author_role not in AUTHOR_ROLES:
            raise ValueError(f"author_role must be one of {list(AUTHOR_ROLES)}, got {self.author_role!r}")
        if self.evidence not in EVIDENCE_STYLES:
            raise ValueError(f"evidence must be one of {list(EVIDENCE_STYLES)}, got {self.evidence!r}")


@dataclass(frozen=True)
class Hit:
    """A retrieved document: its 0-based rank in each leg that returned it, whether it entered
    through the recency reserve; a chunk lists its documents in ``sources`` (id, offset)."""

    doc_id: str
    text: str
    date: datetime | None
    author: str | None
    score: float
    leg_ranks: dict[str, int] = field(default_factory=dict)
    reserve: bool = False
    thread: str | None = None
    sources: tuple[tuple[str, int], ...] = ()
    evidence: EvidenceStyle = "header"

    @property
    def source_ids(self) -> tuple[str, ...]:
        return tuple(doc_id for doc_id, _ in self.sources) if self.sources else (self.doc_id,)


@dataclass(frozen=True)
class RubricFacet:
    """One graded sub-point of an OrgMemBench answer; ``max_score`` is its weight."""

    facet_id: str
    max_score: float
    criterion: str
    fail_criterion: str = ""


@dataclass(frozen=True)
class Question:
    """``as_of``: the memory sees rows dated up to the end of that day (None: all). ``evidence_ids``:
    the gold documents; ``meta``: dataset extras (LongMemEval's ``evidence_sessions``, abstention)."""

    qid: str
    text: str
    category: str
    answer: str
    as_of: date | None = None
    rubric: tuple[RubricFacet, ...] | None = None
    evidence_ids: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Episode:
    """A corpus and the questions asked of it."""

    episode_id: str
    documents: tuple[Document, ...]
    questions: tuple[Question, ...]


@runtime_checkable
class MemorySystem(Protocol):
    """What every memory offers; evidence is rendered apart (``memplusplus.evidence``)."""

    name: str

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]: ...

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]: ...


@dataclass(frozen=True)
class StoreSize:
    """Bytes a memory's store takes on disk and in memory (None: it cannot say; 0 on disk: it writes nothing)."""

    disk_bytes: int | None
    memory_bytes: int | None


def store_size(memory: Any) -> StoreSize | None:
    """``memory.store_size()`` when the memory offers that optional method, else None."""
    method = getattr(memory, "store_size", None)
    return method() if callable(method) else None


def file_sha256(path: Path) -> str:
    """The sha256 (hex) of a file's bytes: pins, sealed run folders, model files, data provenance."""
    with Path(path).open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


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


def find_folder(name: str, named: str | os.PathLike[str] | None, env_var: str, *,
                holds: Sequence[tuple[str, ...]] = (), env: Mapping[str, str] | None = None,
                cwd: Path | None = None, repo_root: Path | None = None) -> tuple[Path | None, list[tuple[Path, str]]]:
    """The first of :func:`search_folders` that exists and holds, of each group in ``holds``, one file
    (None if none does), and every candidate tried."""
    candidates = search_folders(name, named, env_var, env=env, cwd=cwd, repo_root=repo_root)
    for path, _ in candidates:
        if path.is_dir() and all(any((path / n).is_file() for n in group) for group in holds):
            return path.resolve(), candidates
    return None, candidates
