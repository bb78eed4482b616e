"""Grade a run's cached answers again with another judge; only judge requests are sent.

    python scripts/rejudge.py RUN_DIR judge=gpt-4.1-mini
    python scripts/rejudge.py RUN_DIR judge=openai_compatible judge.model=M judge.base_url=URL wording=strict
    python scripts/rejudge.py RUN_DIR judge=gpt-4.1-mini estimate=true   # its calls and price, nothing sent

Options as ``key=value``: ``judge=<config>`` (configs/judge/), ``judge.<key>=<value>``,
``wording=run|strict`` (the run's judge wording, or our strict one), ``estimate=true`` (a dry run).
Writes ``<RUN_DIR>__rejudge-<label>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from harness.run_data import CliError, run_script


def body(argv: list[str]) -> list[str]:
    from harness.rejudge import rejudge, rejudge_estimate
    from harness.run_data import load_run

    options: dict[str, str] = {}
    for item in argv[1:]:
        key, sep, value = item.partition("=")
        if not sep or not (key in ("judge", "wording", "estimate") or key.startswith("judge.")):
            raise CliError(f"expected judge=..., judge.<key>=..., wording=... or estimate=true, got {item!r}")
        options[key] = value
    if options.pop("estimate", "false") == "true":
        return [rejudge_estimate(load_run(Path(argv[0])), options).format()]
    folder = rejudge(load_run(Path(argv[0])), options)
    return [f"rejudged: {folder}", (folder / "summary.md").read_text(encoding="utf-8").rstrip()]


if __name__ == "__main__":
    sys.exit(run_script(__doc__, sys.argv[1:], body))
