"""Download the pinned upstream evaluation files (judge and answerer wording) and verify each one.

    python scripts/fetch_official.py                  # into <repo>/official, where runs look
    python scripts/fetch_official.py --dest DIR       # elsewhere (then official_dir=DIR or $MEMPP_OFFICIAL_DIR)
    python scripts/fetch_official.py --force          # fetch again even what is already verified

Every file of ``judges.official.sources.OFFICIAL_FILES`` comes from GitHub's raw files at its pinned
commit ($MEMPP_OFFICIAL_MIRROR replaces https://raw.githubusercontent.com, same
<owner>/<repo>/<commit>/<path> layout) and goes to DIR/<folder>/<path>, the layout the harness
reads. A file already there with the pinned sha256 is kept and nothing is sent for it; one with
other bytes is fetched again. Bytes are written to a .part file, hashed, and moved into place only
when the hash is the pin's (loaders/download.py), so a failed fetch leaves no unverified file.
The authors' eval/llm.py has no file pin (its bytes were never downloaded by this project): it is
accepted when every text the harness takes from it (read with ast, never run) hashes to its text
pin, and its sha256 is printed so a user can compare it with GitHub's.
One line per file and a summary; any failure (offline, wrong bytes, a folder that cannot be
written) is one line on stderr and exit 2. Each folder gets a SOURCE.md naming its repository,
commit, licence and the hashes, written from the pins (no upstream text is copied into it).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import requests  # noqa: E402

from harness.safe_write import atomic_write  # noqa: E402
from judges.official.locate import REPO_ROOT  # noqa: E402
from judges.official.sources import GITHUB_RAW, MIRROR_ENV, OFFICIAL_FILES, TEXT_PINS, OfficialFile, Upstream  # noqa: E402
from judges.official.texts import literals_of  # noqa: E402
from loaders.download import ChecksumMismatch, SourceUnreachable, download_verified, sha256_of  # noqa: E402
from memory_protocol import DatasetError  # noqa: E402

DEFAULT_DEST = REPO_ROOT / "official"
NOTE_NAME = "SOURCE.md"


class FetchFailed(Exception):
    """One pinned file could not be brought in; the message is one line naming it."""


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one pinned file: fetched (``replaced`` when other bytes were there) or kept."""

    pin: OfficialFile
    path: Path
    fetched: bool
    replaced: bool
    size: int

    def line(self) -> str:
        action = "fetched" if self.fetched else "kept   "
        if self.replaced:
            why = " (other bytes were there, replaced)"
        else:
            why = "" if self.fetched else " (already verified, nothing sent)"
        pinned = self.pin.sha256[:12] + "..." if self.pin.sha256 else f"{sha256_of(self.path)} (its texts checked)"
        return f"{action} {self.pin.local}: {self.size:,} bytes, sha256 {pinned}{why}"


@dataclass(frozen=True)
class OfficialFetchReport:
    """Every file's outcome, where they went and where they came from."""

    dest: Path
    source: str
    outcomes: tuple[FileOutcome, ...]

    @property
    def fetched(self) -> int:
        return sum(o.fetched for o in self.outcomes)

    def summary(self) -> str:
        kept = len(self.outcomes) - self.fetched
        sent = f"from {self.source}" if self.fetched else "nothing sent"
        return (f"official files: {len(self.outcomes)} in {self.dest}: {self.fetched} fetched, {kept} already there "
                f"({sent}); each checked against its pinned sha256 (eval/llm.py: its texts' pins)")


def source_base() -> str:
    """$MEMPP_OFFICIAL_MIRROR when set, else GitHub's raw files."""
    return os.environ.get(MIRROR_ENV) or GITHUB_RAW


def texts_problem(pin: OfficialFile, path: Path) -> str | None:
    """Why the file's pinned texts are not all there (read with ast, never run), or None."""
    try:
        table = literals_of(path.read_bytes().decode("utf-8"), str(path))
    except (UnicodeDecodeError, SyntaxError) as exc:
        return f"not Python source ({exc})"
    for text in (t for t in TEXT_PINS.values() if t.local == pin.local):
        found = table.get((text.where, text.name), [])
        if len(found) <= text.index or sha256_of_text(found[text.index]) != text.sha256:
            return f"its text {text.name} ({text.where}) is not the pinned one"
    return None


def sha256_of_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verified(pin: OfficialFile, path: Path) -> bool:
    if pin.sha256 is not None:
        return sha256_of(path) == pin.sha256
    return texts_problem(pin, path) is None


def fetch_one(session: requests.Session, pin: OfficialFile, dest: Path, base: str, force: bool) -> FileOutcome:
    """Bring one pinned file to ``dest/<folder>/<path>``; FetchFailed (one line) when it cannot be."""
    path = dest / pin.local
    try:
        present = path.is_file()
        if present and not force and verified(pin, path):
            return FileOutcome(pin, path, fetched=False, replaced=False, size=path.stat().st_size)
        replaced = present and not force
        if pin.sha256 is None:
            fetch_by_texts(session, pin, path, base)
        else:
            download_verified(session, pin.url(base), path, pin.sha256, progress=False)
        return FileOutcome(pin, path, fetched=True, replaced=replaced, size=path.stat().st_size)
    except SourceUnreachable as exc:
        raise FetchFailed(f"{pin.local}: cannot download {exc} (offline? set ${MIRROR_ENV} to a mirror, or copy "
                          f"the files into {dest})") from None
    except ChecksumMismatch as exc:
        raise FetchFailed(f"{pin.local}: {exc} (the source sent other bytes than the pinned commit's; "
                          f"none were kept)") from None
    except DatasetError as exc:  # a folder that cannot be written
        raise FetchFailed(f"{pin.local}: {exc}") from None
    except OSError as exc:  # reading what is already there failed
        raise FetchFailed(f"{pin.local}: cannot read {path}: {exc.strerror or exc}") from None


def fetch_by_texts(session: requests.Session, pin: OfficialFile, path: Path, base: str) -> None:
    """A file without a file pin: downloaded beside its place, moved in only when its texts check."""
    staged = path.with_name(path.name + ".unchecked")
    try:
        download_verified(session, pin.url(base), staged, None, progress=False)
        problem = texts_problem(pin, staged)
        if problem:
            raise FetchFailed(f"{pin.local}: {problem} (none of it was kept)")
        os.replace(staged, path)
    finally:
        staged.unlink(missing_ok=True)


def source_note(upstream: Upstream, pins: Iterable[OfficialFile]) -> str:
    """The folder's SOURCE.md: where its files come from, made from the pins alone."""
    rows = "\n".join(f"{pin.sha256 or '(no file pin: checked by its texts)'}  {pin.path}" for pin in pins)
    return (f"# {upstream.folder}/: third-party files, fetched by scripts/fetch_official.py\n\n"
            f"From github.com/{upstream.repo} at commit {upstream.commit}, under its licence ({upstream.licence}, "
            f"see LICENSE here). Read at run time by the Mem++ harness, never copied into it.\n\n"
            f"sha256 of each file (checked when fetched and again when read):\n\n```\n{rows}\n```\n")


def write_note(folder: Path, text: str) -> None:
    """Write ``text`` to the folder's note unless it already says exactly that (whole or not at all)."""
    note = folder / NOTE_NAME
    if note.is_file() and note.read_text(encoding="utf-8") == text:
        return
    atomic_write(note, text)


def fetch_official(dest: Path, *, base: str | None = None, force: bool = False,
                   echo: Callable[[str], None] = print) -> OfficialFetchReport:
    """Fetch every pinned file into ``dest``, echoing one line per file; FetchFailed on the first failure."""
    base = base or source_base()
    outcomes: list[FileOutcome] = []
    with requests.Session() as session:
        for pin in OFFICIAL_FILES.values():
            outcome = fetch_one(session, pin, dest, base, force)
            echo(outcome.line())
            outcomes.append(outcome)
    by_upstream: dict[Upstream, list[OfficialFile]] = {}
    for pin in OFFICIAL_FILES.values():
        by_upstream.setdefault(pin.upstream, []).append(pin)
    for upstream, pins in by_upstream.items():
        try:
            write_note(dest / upstream.folder, source_note(upstream, pins))
        except OSError as exc:
            raise FetchFailed(f"{upstream.folder}/{NOTE_NAME}: cannot write: {exc.strerror or exc}") from None
    return OfficialFetchReport(dest, base, tuple(outcomes))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST,
                        help=f"where to put the files, as <folder>/<path> (default: {DEFAULT_DEST}, which runs search)")
    parser.add_argument("--force", action="store_true", help="fetch every file again, even one already verified")
    args = parser.parse_args(argv)
    dest = args.dest.expanduser()
    try:
        report = fetch_official(dest, force=args.force)
    except FetchFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
