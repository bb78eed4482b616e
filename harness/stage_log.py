"""Plain progress lines for a run whose output is not a terminal (a log file, nohup, CI).

Progress bars are turned off when stderr is not a terminal (they would fill a log with carriage
returns), which left a 27-minute LongMemEval run silent until its table. When the run asked for
progress (``progress=true``, the default) and stdout is not a terminal, the runner prints instead
one line when a stage starts and, within the episode loop, one line at most every ``every`` seconds
with the count done and an estimate of the time left. On a terminal the bars show this and these
lines stay off.
"""

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
    _last: float = 0.0  # when the last line was printed
    _stage_start: float = 0.0  # when the current counted stage began

    def _say(self, text: str) -> None:
        if self.enabled:
            print(f"[{time.monotonic() - self.started:7.1f} s] {text}", file=self.out or sys.stdout, flush=True)

    def stage(self, text: str) -> None:
        """One line: a stage starts (also restarts the periodic clock)."""
        self._last = time.monotonic()
        self._say(text)

    def tick(self, what: str, done: int, total: int, unit: str) -> None:
        """A line with ``done``/``total`` when ``every`` seconds have passed since the last one."""
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
        """A stage over ``total`` items: its line, and the start of its time-left estimate."""
        self._stage_start = time.monotonic()
        self.stage(f"{what}: {total} {unit}")


LOG = StageLog()


def enable_when_not_a_terminal(progress_requested: bool, stream: TextIO | None = None) -> None:
    """Turn the lines on when progress was asked for and ``stream`` (stdout) is not a terminal."""
    stream = stream or sys.stdout
    LOG.enabled = progress_requested and not stream.isatty()
    LOG.started = time.monotonic()
