"""``key=value`` options of the statistics scripts (rescore, compare, rejudge); a CliError is one line, exit 2."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence


class CliError(Exception):
    pass


def parse_options(items: Sequence[str], known: Sequence[str]) -> dict[str, str]:
    """``["dataset.errata=locomo-audit"]`` -> ``{"dataset.errata": "locomo-audit"}``; unknown keys refused."""
    options: dict[str, str] = {}
    for item in items:
        key, sep, value = item.lstrip("+").partition("=")
        if not sep:
            raise CliError(f"expected key=value, got {item!r} (keys: {', '.join(known)})")
        if key not in known:
            raise CliError(f"unknown option {key!r} (keys: {', '.join(known)})")
        options[key] = value
    return options


def int_option(options: dict[str, str], key: str, default: int) -> int:
    try:
        return int(options.get(key, default))
    except ValueError:
        raise CliError(f"{key} must be an integer, got {options[key]!r}") from None


def run_script(doc: str, argv: list[str], body: Callable[[list[str]], list[str]], min_args: int = 1) -> int:
    """``--help`` (or too few arguments) prints ``doc``; ``body(argv)`` returns the lines to print."""
    if len(argv) < min_args or argv[0] in ("-h", "--help"):
        print(doc)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        lines = body(argv)
    except CliError as exc:
        print(exc, file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0
