"""Download the pinned upstream evaluation files (judge and answerer wording) and verify each one.

    python scripts/fetch_official.py                  # into <cache root>/official, where runs look
    python scripts/fetch_official.py --dest DIR       # elsewhere (then official_dir=DIR)
    python scripts/fetch_official.py --force          # fetch again even what is already verified

Each file of ``judges.official.texts.OFFICIAL_FILES`` goes to DIR/<folder>/<path> through
``loaders.fetch.fetch_pinned`` (GitHub raw at its commit, or $MEMPP_MIRROR). The authors' eval/llm.py has
no file pin: it is kept when every text taken from it (read with ast, never run) hashes to its text pin,
and its sha256 is printed. One line per file, then a summary; a failure is one line and exit 2. Each
folder gets a SOURCE.md (repository, commit, licence, hashes) written from the pins.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import requests  # noqa: E402

from harness.safe_write import atomic_write  # noqa: E402
from judges.official.texts import OFFICIAL_FILES, TEXT_PINS, OfficialFile  # noqa: E402
from judges.official.texts import literals_of  # noqa: E402
from loaders.fetch import (  # noqa: E402
    MIRROR_ENV, ChecksumMismatch, SourceUnreachable, download_verified, fetch_pinned, mirror_base, raw_url,
)
from memory_protocol import DatasetError, cache_root, file_sha256  # noqa: E402

DEFAULT_DEST = cache_root() / "official"


class FetchFailed(Exception):
    """One pinned file could not be brought in (a one-line message naming it)."""


def outcome_line(pin: OfficialFile, path: Path, fetched: bool, replaced: bool) -> str:
    why = " (other bytes were there, replaced)" if replaced else "" if fetched else " (already verified, nothing sent)"
    pinned = f"{pin.sha256[:12]}..." if pin.sha256 else f"{file_sha256(path)} (its texts checked)"
    return f"{'fetched' if fetched else 'kept   '} {pin.local}: {path.stat().st_size:,} bytes, sha256 {pinned}{why}"


@dataclass(frozen=True)
class OfficialFetchReport:
    dest: Path
    source: str
    fetched: int
    files: int

    def summary(self) -> str:
        sent = f"from {self.source}" if self.fetched else "nothing sent"
        return (f"official files: {self.files} in {self.dest}: {self.fetched} fetched, {self.files - self.fetched} "
                f"already there ({sent}); each checked against its pinned sha256 (eval/llm.py: its texts' pins)")


def texts_problem(pin: OfficialFile, path: Path) -> str | None:
    """Why the file's pinned texts are not all there (read with ast, never run), or None."""
    try:
        table = literals_of(path.read_bytes().decode("utf-8"), str(path))
    except (UnicodeDecodeError, SyntaxError) as exc:
        return f"not Python source ({exc})"
    for text in (t for t in TEXT_PINS.values() if t.local == pin.local):
        found = table.get((text.where, text.name), [])
        if len(found) <= text.index or hashlib.sha256(found[text.index].encode()).hexdigest() != text.sha256:
            return f"its text {text.name} ({text.where}) is not the pinned one"
    return None


def fetch_one(session: requests.Session, pin: OfficialFile, dest: Path, base: str, force: bool) -> tuple[bool, bool]:
    """(fetched, replaced other bytes) for one pinned file; FetchFailed naming it."""
    path = dest / pin.local
    url = raw_url(pin.upstream.repo, pin.upstream.commit, pin.path, base)
    try:
        if pin.sha256 is not None:
            return fetch_pinned(session, url, path, pin.sha256, force=force)
        present = path.is_file()
        if present and not force and texts_problem(pin, path) is None:
            return False, False
        staged = path.with_name(path.name + ".unchecked")  # moved in only when its texts check
        try:
            download_verified(session, url, staged, None)
            problem = texts_problem(pin, staged)
            if problem:
                raise FetchFailed(f"{pin.local}: {problem} (none of it was kept)")
            os.replace(staged, path)
        finally:
            staged.unlink(missing_ok=True)
        return True, present and not force
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


def fetch_official(dest: Path, *, base: str | None = None, force: bool = False,
                   echo: Callable[[str], None] = print) -> OfficialFetchReport:
    """Fetch every pinned file into ``dest``, one line each; FetchFailed on the first failure."""
    base = base or mirror_base()
    fetched = 0
    with requests.Session() as session:
        for pin in OFFICIAL_FILES.values():
            got, replaced = fetch_one(session, pin, dest, base, force)
            echo(outcome_line(pin, dest / pin.local, got, replaced))
            fetched += got
    for upstream in dict.fromkeys(pin.upstream for pin in OFFICIAL_FILES.values()):
        rows = "\n".join(f"{pin.sha256 or '(no file pin: checked by its texts)'}  {pin.path}"
                         for pin in OFFICIAL_FILES.values() if pin.upstream == upstream)
        text = (f"# {upstream.folder}/: third-party files, fetched by scripts/fetch_official.py\n\n"
                f"From github.com/{upstream.repo} at commit {upstream.commit}, under its licence ({upstream.licence}, "
                f"see LICENSE here). Read at run time by the Mem++ harness, never copied into it.\n\n"
                f"sha256 of each file (checked when fetched and again when read):\n\n```\n{rows}\n```\n")
        note = dest / upstream.folder / "SOURCE.md"
        try:
            if not note.is_file() or note.read_text(encoding="utf-8") != text:
                atomic_write(note, text)
        except OSError as exc:
            raise FetchFailed(f"{upstream.folder}/SOURCE.md: cannot write: {exc.strerror or exc}") from None
    return OfficialFetchReport(dest, base, fetched, len(OFFICIAL_FILES))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST, help=f"default: {DEFAULT_DEST}, which runs search")
    parser.add_argument("--force", action="store_true", help="fetch every file again, even one already verified")
    args = parser.parse_args(argv)
    try:
        report = fetch_official(args.dest.expanduser(), force=args.force)
    except FetchFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
