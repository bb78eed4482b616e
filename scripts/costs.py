"""What each memory costs per question, from run folders alone: retrieval latency p50/p95/p99, context
tokens read, write-time calls and dollars per document, store size, as-of leakage.

    python scripts/costs.py outputs/runs/locomo/mempp-... outputs/runs/locomo/rag_4096-...
    python scripts/costs.py outputs/runs/locomo          # every run folder under it
"""

from __future__ import annotations

import sys
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from harness.run_data import CliError, run_script


def folders(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if (path / "records.jsonl").is_file():
            found.append(path)
        else:
            found += sorted(p.parent for p in path.glob("**/records.jsonl"))
    if not found:
        raise CliError(f"no run folder (with records.jsonl) in {', '.join(map(str, paths))}")
    return found


def body(argv: list[str]) -> list[str]:
    from harness.costs import cost_table
    from harness.run_data import load_run
    from judges.aggregate import format_table

    runs = [load_run(folder) for folder in folders([Path(a) for a in argv])]
    return [format_table(cost_table(runs), floatfmt=".1f").replace(" nan |", "   — |"),
            "—: not in the run folder (a run made before these figures, or a system that cannot say its store "
            "size); disk and memory MB: every episode's store after ingest; read tokens: per question, counted by "
            "the answerer's tokenizer named in 'tokens by', else chars/4, an estimate"]


if __name__ == "__main__":
    sys.exit(run_script(__doc__, sys.argv[1:], body))
