"""Where each benchmark's files come from: pinned commits and revisions, and their expected sha256.

Three benchmarks, two kinds of source:

- OrgMemBench (medium tier) and LoCoMo are files of a GitHub repository at a fixed commit, read as
  ``<base>/<owner>/<repo>/<commit>/<path>`` (``raw.githubusercontent.com`` unless
  ``$MEMPP_DATA_MIRROR`` names a mirror with the same layout).
- LongMemEval_S is one file of a Hugging Face hub dataset at a fixed revision, fetched through
  ``huggingface_hub`` (which honours ``HF_ENDPOINT``, ``HF_HOME`` and ``HF_HUB_CACHE``).

The OrgMemBench manifest (``manifests/orgmem_medium.sha256``, ``sha256sum`` format) pins the bytes of
our reference copy of the pinned commit. That copy was transcribed from a public file index, not
hash-checked against the upstream repository (see its SOURCE.md), so a byte that differs upstream
would show here as a hash mismatch, not as a silently different benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loaders import longmemeval

MANIFEST_DIR = Path(__file__).resolve().parent / "manifests"
GITHUB_RAW = "https://raw.githubusercontent.com"
MIRROR_ENV = "MEMPP_DATA_MIRROR"


@dataclass(frozen=True)
class PinnedFile:
    """One file to fetch: its path in the source, its path under the data directory, its sha256."""

    remote: str
    local: str
    sha256: str


@dataclass(frozen=True)
class GitHubFiles:
    """Files of one GitHub repository at one commit."""

    owner: str
    repo: str
    commit: str
    files: tuple[PinnedFile, ...]
    manifest: Path | None = None  # where the list of files and hashes was read from, if a file

    def url(self, base: str, remote: str) -> str:
        """The raw-file URL of ``remote`` under ``base`` (GitHub's raw host or a mirror)."""
        return f"{base.rstrip('/')}/{self.owner}/{self.repo}/{self.commit}/{remote}"

    def where(self) -> str:
        return f"github.com/{self.owner}/{self.repo}@{self.commit[:12]}"


@dataclass(frozen=True)
class HubFile:
    """One file of a Hugging Face hub dataset at one revision; no hash is known in advance."""

    repo_id: str
    filename: str
    revision: str
    local: str

    def where(self) -> str:
        return f"huggingface.co/datasets/{self.repo_id}@{self.revision[:12]}"


@dataclass(frozen=True)
class BenchmarkSource:
    """One benchmark: where its files come from, its licence, and which local files must exist to run it.

    ``required`` lists paths under the data directory; a tuple inside it means "any one of these"
    (LongMemEval_S may be the official file or our 499-question rebuild). A directory holding them
    is used as it is; a fetch writes them after every other file.
    """

    name: str
    origin: GitHubFiles | HubFile
    licence: str
    required: tuple[str | tuple[str, ...], ...]

    def missing(self, data_dir: Path) -> list[str]:
        """The required paths (or groups of alternatives) absent from ``data_dir``."""
        absent = []
        for entry in self.required:
            names = (entry,) if isinstance(entry, str) else entry
            if not any((data_dir / name).is_file() for name in names):
                absent.append(" or ".join(names))
        return absent


def read_manifest(path: Path, remote_prefix: str, local_prefix: str) -> tuple[PinnedFile, ...]:
    """``<sha256>  <path>`` lines -> PinnedFiles (remote = ``remote_prefix + path``, local likewise)."""
    files = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        digest, _, name = line.partition("  ")
        files.append(PinnedFile(f"{remote_prefix}{name}", f"{local_prefix}{name}", digest))
    return tuple(files)


# ---------------------------------------------------------------- the three benchmarks

ORGMEM_COMMIT = "4d6fb64b8c0a7111fbdf00a5d3c5705872343606"
ORGMEM_MANIFEST = MANIFEST_DIR / "orgmem_medium.sha256"
ORGMEM_MEDIUM = "orgmembench/datasets/helix/medium/"
# What a run checks for before loading (the loader names any other file that is missing); a fetch
# writes these last, so an interrupted fetch never looks complete.
ORGMEM_ENTRY_FILES = ("source_of_truth/events.jsonl", "benchmark_v0.0.jsonl", "corpus_index.jsonl")

LOCOMO_COMMIT = "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"
LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"

# The commit of the hub dataset repository xiaowu0162/longmemeval-cleaned that several public
# projects pin (its "cleaned" release of 2025-09); we could not reach the hub to confirm it, and no
# sha256 of the file is pinned here: the fetch records the hash of what it downloaded beside the file.
LONGMEMEVAL_REVISION = "98d7416c24c778c2fee6e6f3006e7a073259d48f"


def orgmem_source() -> BenchmarkSource:
    files = read_manifest(ORGMEM_MANIFEST, "", "orgmembench/")
    origin = GitHubFiles("PandelisZ", "OrgMemBench", ORGMEM_COMMIT, files, ORGMEM_MANIFEST)
    required = tuple(f"{ORGMEM_MEDIUM}{name}" for name in ORGMEM_ENTRY_FILES)
    return BenchmarkSource("orgmem", origin, "CC-BY-4.0 (OrgMemBench by Jack Gardner)", required)


def locomo_source() -> BenchmarkSource:
    files = (PinnedFile("data/locomo10.json", "locomo/locomo10.json", LOCOMO_SHA256),)
    origin = GitHubFiles("snap-research", "locomo", LOCOMO_COMMIT, files)
    return BenchmarkSource("locomo", origin, "CC BY-NC 4.0 (Maharana et al., 2024)", ("locomo/locomo10.json",))


def longmemeval_source() -> BenchmarkSource:
    official = longmemeval.FILE_NAMES[0]  # the hub's name; the loader also takes our 499-question rebuild
    origin = HubFile("xiaowu0162/longmemeval-cleaned", official, LONGMEMEVAL_REVISION,
                     f"{longmemeval.SUBDIR}/{official}")
    required = (tuple(f"{longmemeval.SUBDIR}/{name}" for name in longmemeval.FILE_NAMES),)
    return BenchmarkSource("longmemeval_s", origin, "MIT (Wu et al., 2025)", required)


def benchmark_sources() -> dict[str, BenchmarkSource]:
    """Every fetchable benchmark by its dataset name (the names of ``loaders.DATASETS``)."""
    return {s.name: s for s in (orgmem_source(), locomo_source(), longmemeval_source())}
