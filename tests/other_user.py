"""Run a small action as another local OS user (root only): a forked child drops to that user for
good, runs the action and reports one line through a pipe. Used by the tests and the probe that
check what a second user on the machine can reach."""

from __future__ import annotations

import os
import pwd
from collections.abc import Callable


def as_user(name: str, action: Callable[[], str], failed: Callable[[BaseException], str] | None = None) -> str:
    """``action()`` run as user ``name``; an exception becomes ``failed(exc)`` (default: its type
    and message)."""
    entry = pwd.getpwnam(name)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child switches user for good, then reports through the pipe
        os.close(read_end)
        try:
            os.setgroups([])
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
            message = action()
        except BaseException as exc:  # noqa: BLE001 - the outcome is the message
            message = failed(exc) if failed is not None else f"{type(exc).__name__}: {exc}"
        os.write(write_end, message.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        message = pipe.read()
    os.waitpid(pid, 0)
    return message
