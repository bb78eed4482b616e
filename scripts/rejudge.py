"""Grade a run's cached answers again with another judge; only judge requests are sent.

    python scripts/rejudge.py RUN_DIR judge=gpt-4.1-mini
    python scripts/rejudge.py RUN_DIR judge=openai_compatible judge.model=M judge.base_url=URL wording=strict

Options as ``key=value``: ``judge=<config>`` (configs/judge/), ``judge.<key>=<value>``,
``wording=run|strict`` (the run's judge wording, or our strict one). Writes ``<RUN_DIR>__rejudge-<label>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.cli_options import CliError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    try:
        options: dict[str, str] = {}
        for item in argv[1:]:
            key, sep, value = item.partition("=")
            if not sep or not (key in ("judge", "wording") or key.startswith("judge.")):
                raise CliError(f"expected judge=..., judge.<key>=... or wording=..., got {item!r}")
            options[key] = value
        from harness.rejudge import rejudge
        from harness.run_data import load_run

        folder = rejudge(load_run(Path(argv[0])), options)
    except CliError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"rejudged: {folder}")
    print((folder / "summary.md").read_text(encoding="utf-8").rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
