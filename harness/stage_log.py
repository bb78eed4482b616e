"""Plain progress lines when stdout is not a terminal (a log, nohup, CI), where the bars are off: one
line per stage, and at most one every ``every`` seconds with the count done and the time left."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

EVERY_SECONDS = 30.0


@dataclass
class StageLog:
    enabled: bool = False
    every: float = EVERY_SECONDS
    out: TextIO | None = None  # None: sys.stdout at the time of writing
    started: float = field(default_factory=time.monotonic)
    _last: float = 0.0
    _stage_start: float = 0.0

    def _say(self, text: str) -> None:
        if self.enabled:
            print(f"[{time.monotonic() - self.started:7.1f} s] {text}", file=self.out or sys.stdout, flush=True)

    def stage(self, text: str) -> None:
        self._last = time.monotonic()
        self._say(text)

    def tick(self, what: str, done: int, total: int, unit: str) -> None:
        now = time.monotonic()
        if not self.enabled or now - self._last < self.every:
            return
        since = now - self._stage_start
        self._last = now
        left = ""
        if 0 < done < total and since > 0:
            left = f", about {since / done * (total - done) / 60:.1f} min left"
        self._say(f"{what}: {done}/{total} {unit} ({100 * done / max(total, 1):.0f}%){left}")

    def begin(self, what: str, total: int, unit: str) -> None:
        self._stage_start = time.monotonic()
        self.stage(f"{what}: {total} {unit}")


LOG = StageLog()


def enable_when_not_a_terminal(progress_requested: bool, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    LOG.enabled = progress_requested and not stream.isatty()
    LOG.started = time.monotonic()
