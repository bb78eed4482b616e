"""Corrected golds for LoCoMo: the locomo-audit project's errata, pinned by sha256.

``errors.json`` (github.com/dial481/locomo-audit @ 9493fb4b, CC BY-NC 4.0) lists 156 of the 1,540
graded questions: 99 with a wrong gold answer and 57 with right answer but wrong evidence ids
(``WRONG_CITATION``), each with the corrected answer and evidence; the ceiling is 1,441 / 1,540 = 93.57 %.
Read from ``<data dir>/published/audit/errors.json`` (or a given file), refused unless its bytes are the pinned ones;
a run (``dataset.errata=locomo-audit``) fetches it like the benchmarks when no data folder holds it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from loaders.fetch import DATA_ENV, GitHubFiles, PinnedFile, SourceUnreachable, fetch_pinned, raw_url
from loaders.reading import read_bytes
from memory_protocol import ConfigError, DatasetError, cache_root, find_folder

CITATION_ONLY = "WRONG_CITATION"
_CONVERSATION = re.compile(r"(\d+)_qa\d+$")


ERRATA: dict[str, GitHubFiles] = {
    "locomo-audit": GitHubFiles("dial481/locomo-audit", "9493fb4b", (PinnedFile(
        "errors.json", "published/audit/errors.json", "f298ef46263fada20688a1d672be37d4f488c6da3b19343eea55ae5c1b5fe55e"),)),
}
FOR_LOADER = {"locomo-audit": "locomo"}  # the benchmark (loader) each errata file corrects


def check_errata(name: str | None, loader: str, evidence: bool = False) -> None:
    """``dataset.errata``: a known name for this benchmark, or null (then no ``errata_evidence``)."""
    if name is None:
        if evidence:
            raise ConfigError("dataset.errata_evidence=true needs dataset.errata=<name> (the corrected evidence ids)")
        return
    if FOR_LOADER.get(str(name)) != loader:
        choices = ", ".join(["null", *(n for n, on in FOR_LOADER.items() if on == loader)])
        known = ", ".join(f"{n} ({on} only)" for n, on in FOR_LOADER.items())
        raise ConfigError(f"dataset.errata={name!r}: the {loader} benchmark takes {choices}; known errata: {known}")


def fetch_errata(name: str, root: Path | None, data_dir: str | None = None) -> Path:
    """The errata file: under ``root`` (the run's data folder), else, unless that folder was named
    (``data_dir``: ``dataset.data_dir``; or ``$MEMPP_DATA_DIR``), in another data folder; else fetched
    (pinned) into the named folder or ``<cache root>/data``. One-line DatasetError when offline."""
    source, pin = _source(name)
    named = bool(data_dir) or bool(os.environ.get(DATA_ENV))
    if root is not None and (root / pin.local).is_file():
        return root / pin.local
    found = None if named else find_folder("data", None, DATA_ENV, holds=((pin.local,),))[0]
    if found is not None:
        return found / pin.local
    target = (root if named and root is not None else cache_root() / "data") / pin.local
    try:
        with requests.Session() as session:
            fetch_pinned(session, raw_url(source.repo, source.commit, pin.remote), target, pin.sha256)
    except SourceUnreachable as exc:
        raise DatasetError(str(target), f"errata {name!r} missing and the fetch failed ({exc}); put {pin.remote} "
                                        f"of github.com/{source.repo}@{source.commit} there") from None
    return target


@dataclass(frozen=True)
class Erratum:
    """One audited question, keyed (conversation index, question text, gold) as the file states it."""

    conversation: int
    question: str
    gold: str
    category: int
    error_type: str
    correct_answer: str
    correct_evidence: tuple[str, ...]

    @property
    def wrong_gold(self) -> bool:  # not just its evidence ids
        return self.error_type != CITATION_ONLY


def _source(name: str) -> tuple[GitHubFiles, PinnedFile]:
    if name not in ERRATA:
        raise DatasetError("dataset.errata", f"unknown errata {name!r}; known: {sorted(ERRATA)}")
    return ERRATA[name], ERRATA[name].files[0]


def _entry(item: Any, index: int, path: Path) -> Erratum:
    if not isinstance(item, dict):
        raise DatasetError(str(path), "an erratum is not an object", f"[{index}]")
    try:
        match = _CONVERSATION.search(str(item["question_id"]))
        if match is None:
            raise DatasetError(str(path), f"question_id {item['question_id']!r} names no conversation", f"[{index}]")
        return Erratum(int(match[1]), str(item["question"]), str(item["golden_answer"]), int(item["category"]),
                       str(item["error_type"]), str(item["correct_answer"]), tuple(map(str, item["correct_evidence"])))
    except KeyError as exc:
        raise DatasetError(str(path), f"missing field {exc}", f"[{index}]") from None


def load_errata(name: str, data_dir: Path | None = None, file: Path | None = None) -> list[Erratum]:
    """The named errata, after checking the file's sha256 against the pinned one."""
    source, pin = _source(name)
    path = file or (data_dir / pin.local if data_dir is not None else None)
    if path is None or not path.is_file():
        raise DatasetError(str(path or f"<data dir>/{pin.local}"), f"errata {name!r} not found: put {pin.remote} "
                                                                   f"of github.com/{source.repo}@{source.commit} there")
    data = read_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise DatasetError(str(path), f"sha256 {digest[:12]}... is not the pinned {pin.sha256[:12]}... of "
                                      f"{source.repo}@{source.commit}:{pin.remote}")
    items = json.loads(data)
    if not isinstance(items, list):
        raise DatasetError(str(path), "expected a JSON list of errata")
    return [_entry(item, i, path) for i, item in enumerate(items)]
