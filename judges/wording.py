"""Where a prompt's words come from, and the request settings that go with them.

``official``: read at run time from a pinned upstream file (``judges.official``), sent with the
settings of the upstream script. ``own``: our wording in ``judges/prompts/`` (used when the upstream
files cannot be found; such scores are not comparable with published ones). ``custom``: a file the
user named with ``prompt_file``. ``authors``: the rules the Mem++ authors' evaluation code sends,
in our words (for the answer prompts the paper does not state).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RequestParams", "Wording", "WORDING_SOURCES"]

WORDING_SOURCES = ("official", "authors", "own", "custom")


@dataclass(frozen=True)
class Wording:
    """The source of a prompt: one of :data:`WORDING_SOURCES` and what exactly was read
    (``files``: (path, sha256) pairs; ``cite``: the upstream file(s) or our prompt file)."""

    source: str
    cite: str
    files: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.source not in WORDING_SOURCES:
            raise ValueError(f"wording source {self.source!r}; expected one of {WORDING_SOURCES}")

    def record(self) -> dict[str, Any]:
        """What metrics.json keeps of it."""
        return {"source": self.source, "cite": self.cite, "files": [{"path": p, "sha256": h} for p, h in self.files]}


@dataclass(frozen=True)
class RequestParams:
    """Request settings a prompt prescribes; None leaves the model config's value.
    ``response_format`` is sent as it is (e.g. ``{"type": "json_object"}``)."""

    temperature: float | None = None
    max_tokens: int | None = None
    response_format: Mapping[str, Any] | None = field(default=None)

    def extra(self) -> dict[str, Any]:
        return {"response_format": dict(self.response_format)} if self.response_format is not None else {}
