"""Where a prompt's words come from, and the request settings that go with them.

``official``: a benchmark's or mem0's own text, read at run time (``judges.official``: an upstream
file or a templates file, each text checked against its pin) and sent with the settings of the
upstream script. ``authors``: the Mem++ authors' own answer template (``eval/llm.py``), read the
same way, for the answer prompts the paper does not state. ``own``: our wording in
``judges/prompts/`` (used when no source holds the texts; such scores are not comparable with
published ones). ``custom``: a file the user named with ``prompt_file``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RequestParams", "Wording", "WORDING_SOURCES", "texts_hash"]

WORDING_SOURCES = ("official", "authors", "own", "custom")


@dataclass(frozen=True)
class Wording:
    """The source of a prompt: one of :data:`WORDING_SOURCES` and what exactly was read
    (``files``: (path, sha256) pairs of the files read; ``cite``: the upstream file(s) or our prompt
    file; ``texts``: (text key, sha256) of each pinned text used)."""

    source: str
    cite: str
    files: tuple[tuple[str, str], ...] = ()
    texts: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.source not in WORDING_SOURCES:
            raise ValueError(f"wording source {self.source!r}; expected one of {WORDING_SOURCES}")

    def record(self) -> dict[str, Any]:
        """What metrics.json keeps of it."""
        record: dict[str, Any] = {"source": self.source, "cite": self.cite,
                                  "files": [{"path": p, "sha256": h} for p, h in self.files]}
        if self.texts:
            record["texts"] = {key: sha for key, sha in self.texts}
        return record


@dataclass(frozen=True)
class RequestParams:
    """Request settings a prompt prescribes; None leaves the model config's value.
    ``response_format`` is sent as it is (e.g. ``{"type": "json_object"}``); ``omit`` names settings
    (``seed``, ``max_tokens``) the upstream script does not send, so neither do we."""

    temperature: float | None = None
    max_tokens: int | None = None
    response_format: Mapping[str, Any] | None = field(default=None)
    omit: tuple[str, ...] = ()
    seed: int | None = None

    def extra(self) -> dict[str, Any]:
        return {"response_format": dict(self.response_format)} if self.response_format is not None else {}


def texts_hash(wording: Wording) -> str:
    """One hash naming the pinned texts a wording sends (a cache key's template hash)."""
    return hashlib.sha256("\n".join(f"{k}={v}" for k, v in wording.texts).encode("utf-8")).hexdigest()
