"""The judge-robustness table of judged runs of the same answers (a run and its ``rejudge`` copies):
each system's score per judge (model and wording), its rank movement, Cohen's kappa per judge pair,
Fleiss' kappa over all (a label is "right" at a mean grade of 50), and leniency: the accept rate on
locomo-audit's deliberately wrong answers (``ap_v1`` / ``ap_v2``): the published judge's from the
files' own labels; any run's judge (model and wording, as ``rejudge`` recomposes it) by grading them
through the same cached judge calls (:func:`leniency_probe`), free once cached.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from harness.misses import PASS_MARK
from harness.run_data import CliError, RunData
from harness.stats.agreement import cohen_kappa, fleiss_kappa, leniency, rating_counts

if TYPE_CHECKING:
    from harness.plan import RunPlan
    from memory_protocol import Question
    from model_clients.chat_types import ChatRequest

PROBES = ("ap_v1", "ap_v2")
Leniency = float | str | dict[str, float]  # one rate, why none, or one rate per probe file


def judge_name(run: RunData) -> str:
    judge = run.config.get("judge") or {}
    prompt = str(judge.get("prompt_file") or "")
    wording = "strict" if "strict" in Path(prompt).stem else "run wording"
    return f"{judge.get('model') or judge.get('name')} ({wording})"


def system_name(run: RunData) -> str:
    source = (run.metrics.get("stats") or {}).get("rejudged_from")
    return Path(source).name.split("__")[0].rsplit("-", 1)[0] if source else run.system


def labels(run: RunData) -> dict[str, bool]:
    metric = run.headline()
    out = {}
    for record in run.records:
        value = (record.get("metrics") or {}).get(metric)
        if value is not None:
            out[record["qid"]] = float(value) >= PASS_MARK
    return out


def robustness(runs: Sequence[RunData], lenient: dict[str, Leniency] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The table (systems x judges: overall score, then rank movement) and the agreement lines."""
    by_judge: dict[str, dict[str, RunData]] = {}
    for run in runs:
        by_judge.setdefault(judge_name(run), {})[system_name(run)] = run
    judges = sorted(by_judge)
    systems = sorted({s for found in by_judge.values() for s in found})
    scores = pd.DataFrame(index=systems, columns=judges, dtype=float)
    for judge, found in by_judge.items():
        for system, run in found.items():
            row = run.summary.get("overall") or {}
            scores.loc[system, judge] = row.get(f"{run.headline()}_paper", row.get(run.headline(), math.nan))
    ranks = scores.rank(ascending=False)
    table = scores.copy()
    table["rank moves"] = (ranks.max(axis=1) - ranks.min(axis=1)).astype(float)
    table.index.name = "system"
    pooled = {judge: {(s, q): v for s, run in found.items() for q, v in labels(run).items()}
              for judge, found in by_judge.items()}
    lines = []
    for a, b in itertools.combinations(judges, 2):
        shared = sorted(set(pooled[a]) & set(pooled[b]))
        kappa = cohen_kappa([pooled[a][k] for k in shared], [pooled[b][k] for k in shared])
        lines.append(f"Cohen's kappa {a} vs {b}: {kappa:.3f} over {len(shared):,} answers")
    if len(judges) > 2:
        shared = sorted(set.intersection(*(set(pooled[j]) for j in judges)))
        kappa = fleiss_kappa(rating_counts([[pooled[j][k] for j in judges] for k in shared]))
        lines.append(f"Fleiss' kappa over {len(judges)} judges: {kappa:.3f} over {len(shared):,} answers")
    lenient = lenient or {}
    for judge in [*judges, *(name for name in lenient if name not in judges)]:
        known = lenient.get(judge)
        lines.append(f"leniency {judge}: " + (_rates(known) if known is not None
                                              else "— (not graded on the deliberately wrong answers)"))
    return table, lines


def _rates(known: Leniency) -> str:
    if isinstance(known, str):  # why it is not known
        return known
    if isinstance(known, dict):  # per probe file
        return ", ".join(f"{v} {r:.2f}%" for v, r in known.items()) + " of deliberately wrong answers accepted"
    return f"{known:.2f}% of deliberately wrong answers accepted"


def published_leniency(data_dir: Path) -> dict[str, float]:
    """The published mem0 judge's accept rate on ap_v1 / ap_v2 (the files' own labels, all runs)."""
    from loaders.published import read_published

    out = {}
    for version in ("ap_v1", "ap_v2"):
        path = data_dir / "published" / "audit" / f"{version}.scored.json"
        if path.is_file():
            grades = [g for item in read_published(path).items for g in item.grades]
            out[f"published mem0 judge, gpt-4o-mini, {version}"] = 100.0 * leniency(grades)
    return out


@dataclass
class Probe:
    """One judge's requests on the deliberately wrong answers; ``owners``: each request's file and question."""

    judge: str
    plan: RunPlan
    requests: list[ChatRequest]
    owners: list[tuple[str, Question]]


def leniency_probe(run: RunData, data_dir: Path) -> Probe:
    """The judge of ``run`` (a ``rejudge`` copy's own) on every ``ap_v*`` answer, mapped onto our
    LoCoMo questions by text and gold (:func:`loaders.published.match_keys`); a one-line CliError where it cannot."""
    from harness.qa import judge_requests
    from harness.rejudge import judge_plan
    from loaders.locomo import load_locomo
    from loaders.published import match_keys, read_published

    _, plan = judge_plan(run, run.provenance.get("rejudge") or {})
    judge, spec = plan.prompts.judge if plan.prompts else None, plan.config.judge
    if plan.benchmark.name not in ("locomo", "longmemeval_s") or judge is None or spec is None:
        raise CliError(f"{run.folder}: the deliberately wrong answers are LoCoMo questions, which a "
                       f"{plan.benchmark.name} judge does not grade")
    episodes = list(load_locomo(data_dir))
    requests, owners = [], []
    for version in PROBES:
        published = read_published(data_dir / "published" / "audit" / f"{version}.scored.json")
        keys = [(item.conversation, item.question, item.gold) for item in published.items]
        for item, question in zip(published.items, match_keys(keys, episodes, str(published.path))):
            question = as_judged(question, plan.benchmark.name)
            for request in judge_requests(judge, spec, question, item.answer, plan.benchmark):
                requests.append(request)
                owners.append((version, question))
    return Probe(judge_name(run), plan, requests, owners)


def as_judged(question: Question, benchmark: str) -> Question:
    """A LoCoMo question as the judge of ``benchmark`` takes it: LongMemEval's judge picks its prompt
    by question type, so a temporal question gets its temporal prompt and any other its default one."""
    if benchmark != "longmemeval_s":
        return question
    kind = "temporal-reasoning" if question.category == "temporal" else "single-session-user"
    return dataclasses.replace(question, category=kind, meta={})


def probe_leniency(probe: Probe) -> dict[str, float]:
    """The judge's accept rate per file, 0-100, over the grades it gave (unparsed and failed left out)."""
    from harness.rejudge import judge_calls

    judge = probe.plan.prompts.judge if probe.plan.prompts else None
    assert judge is not None
    accepted: dict[str, list[float | None]] = {version: [] for version in PROBES}
    for (version, question), reply in zip(probe.owners, judge_calls(probe.plan, probe.requests, desc="leniency")):
        accepted[version].append(judge.parse(reply.text, question).score if reply.ok else None)
    return {version: 100.0 * leniency(grades) for version, grades in accepted.items()}


def probed_leniency(runs: Sequence[RunData], data_dir: Path,
                    mode: str = "cached") -> tuple[dict[str, Leniency], list[str]]:
    """Each run's judge's rates (or why none), and the dry-run lines. ``mode``: ``cached`` grades only
    a judge whose every grade is cached (free), ``send`` grades every judge, ``estimate`` prices them."""
    from harness.rejudge import judge_client, judge_estimate

    first: dict[str, RunData] = {}
    for run in runs:
        first.setdefault(judge_name(run), run)
    rates: dict[str, Leniency] = {}
    notes: list[str] = []
    for name, run in first.items():
        try:
            probe = leniency_probe(run, data_dir)
        except CliError as exc:
            rates[name] = f"— ({exc})"
            continue
        if mode == "estimate":
            cost = judge_estimate(probe.plan, probe.requests)
            notes.append(f"leniency probe of {name} ({len(probe.requests):,} grades):\n{cost.format()}")
            continue
        calls = len(judge_client(probe.plan).plan(probe.requests).to_send)
        if calls and mode != "send":
            rates[name] = f"— (not graded yet: leniency=true sends {calls:,} judge calls, estimate=true prices them)"
        else:
            rates[name] = probe_leniency(probe)
    return rates, notes
