"""The bad-input stage: each meaningless setting and each broken data file, run through ``run.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .suite import Suite


def broken_data(root: Path, data_dir: Path) -> dict[str, Path]:
    source = data_dir / "orgmembench"
    made = {}
    for name in ("benchmark_v0.0.jsonl", "corpus_index.jsonl"):
        folder = root / f"data-empty-{name}"
        shutil.copytree(source, folder / "orgmembench")
        (folder / "orgmembench" / "datasets" / "helix" / "medium" / name).write_text("")
        made[name] = folder
    huge = root / "data-huge-date" / "locomo"
    huge.mkdir(parents=True)
    conversation = {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "9" * 5_000_000,
                    "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}
    (huge / "locomo10.json").write_text(json.dumps([{"sample_id": "conv-1", "conversation": conversation, "qa": []}]))
    made["huge date"] = huge.parent
    return made


def bad_inputs(suite: Suite) -> list[list[str]]:
    data = broken_data(suite.root, suite.data_dir)
    cases = [
        ("system.gamma=0", ["system.gamma=0"]),
        ("system.gamma=-0.5", ["system.gamma=-0.5"]),
        ("all leg weights 0", ["system.weights={lexical:0,tag:0,vector:0}"]),
        ("unknown leg in weights", ["system.weights={lexical:1,tag:1,vectr:4}"]),
        ("answerer=openai_compatible, no model", ["answerer=openai_compatible"]),
        ("answerer=openai_compatible, no base_url", ["answerer=openai_compatible", "answerer.model=m"]),
        ("missing prompt_file", ["answerer=gpt-4.1-mini", "answerer.prompt_file=/no/such.txt"]),
        ("system.k=abc", ["system.k=abc"]),
        ("recency_reserve > k", ["system.k=5", "system.recency_reserve=6"]),
        ("empty benchmark_v0.0.jsonl", [f"dataset.data_dir={data['benchmark_v0.0.jsonl']}"]),
        ("empty corpus_index.jsonl", [f"dataset.data_dir={data['corpus_index.jsonl']}"]),
        ("a 5 MB date field (LoCoMo)", ["dataset=locomo", f"dataset.data_dir={data['huge date']}"]),
    ]
    table = []
    cache = suite.root / "cache-bad"
    for name, extra in cases:
        code, out, err = suite.run([*suite.overrides(cache, answered=False), *extra])
        lines = [line for line in err.strip().splitlines() if line.startswith("error:")]
        shown = lines[-1] if lines else err.strip()[-200:]
        verdict = "refused" if code == 2 and len(lines) == 1 and "Traceback" not in err + out else "NOT REFUSED CLEANLY"
        table.append([name, str(code), verdict, f"`{shown[:160]}`" + (f" ({len(shown)} chars)" if len(shown) > 160 else "")])
    return table
