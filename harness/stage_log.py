"""Plain progress lines when stdout is not a terminal (a log, nohup, CI), where the bars are off: one
line per stage, and at most one every ``every`` seconds with the count done and the time left."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TextIO, TypeVar

from tqdm import tqdm

EVERY_SECONDS = 30.0
T = TypeVar("T")


@dataclass
class StageLog:
    enabled: bool = False
    every: float = EVERY_SECONDS
    out: TextIO | None = None  # None: sys.stdout at the time of writing
    started: float = field(default_factory=time.monotonic)
    _last: float = 0.0

    def _say(self, text: str) -> None:
        if self.enabled:
            print(f"[{time.monotonic() - self.started:7.1f} s] {text}", file=self.out or sys.stdout, flush=True)

    def stage(self, text: str) -> None:
        self._last = time.monotonic()
        self._say(text)

    def each(self, items: Sequence[T], what: str, unit: str, bar_label: str, bar: bool) -> Iterator[T]:
        """``items`` one by one (``unit``: one item's name), with a tqdm bar (``bar``: progress asked for and, for the lines, a terminal);
        without a terminal a line for the stage, then at most one every ``every`` seconds with the count
        done and the time left."""
        total, started = len(items), time.monotonic()
        self.stage(f"{what}: {total} {unit}s")
        with tqdm(items, desc=bar_label, unit=unit, disable=not bar) as progress:
            for done, item in enumerate(progress, 1):
                yield item
                now = time.monotonic()
                if not self.enabled or now - self._last < self.every:
                    continue
                self._last, left = now, ""
                if done < total and now > started:
                    left = f", about {(now - started) / done * (total - done) / 60:.1f} min left"
                self._say(f"{what}: {done}/{total} {unit}s ({100 * done / max(total, 1):.0f}%){left}")


LOG = StageLog()


def enable_when_not_a_terminal(progress_requested: bool, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    LOG.enabled = progress_requested and not stream.isatty()
    LOG.started = time.monotonic()
