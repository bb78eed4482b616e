"""What would fill a table's empty judged cells: the preset command for the missing jobs, and its dollars.

Dollars come from dry runs (``harness.estimate``). Measured on LoCoMo with 2 shared cores: 1.5-8 s a
retrieval-based job, 1-1.5 min a Full Context job, 4 min 14 s for Table 2's 14 jobs; too slow for
every rebuild, so a table prints the ``estimate=true`` command and ``make_tables.py --estimate`` runs it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tqdm import tqdm

from harness.reports.selection import Job

log = logging.getLogger(__name__)
RUN_COMMAND = "python run.py"
LOADER_LOGGER = "loaders"  # the dataset notes a run prints (known upstream quirks); the tables' notes do not need them


@dataclass(frozen=True)
class DryRunCost:
    """The dry-run figure of some jobs: dollars over the priced ones, calls, and what could not be priced."""

    usd: float
    calls: int
    jobs: int
    unpriced: tuple[str, ...] = ()  # jobs with an unknown price or a dry run that failed, with why

    def text(self) -> str:
        dollars = f"${self.usd:,.2f}"
        if self.unpriced:
            dollars = f"at least {dollars} ({len(self.unpriced)} job(s) not priced: {'; '.join(self.unpriced[:2])})"
        return f"{dollars} for {self.calls:,} model calls over {self.jobs} job(s) (dry run, nothing sent)"


@dataclass(frozen=True)
class FillPlan:
    """The jobs of a table's presets that no answered run fills, as the commands that would run them."""

    commands: tuple[str, ...]
    jobs: tuple[Job, ...]
    cost: DryRunCost | None = None  # None: not computed here (the estimate command prints it)

    def lines(self) -> list[str]:
        if not self.jobs:
            return []
        head = (f"Not run yet, {len(self.jobs)} judged job(s) of the preset (their cells print — beside the paper's "
                f"figure); to fill them:")
        lines = [head, *[f"`{command}`" for command in self.commands]]
        if self.cost is not None:
            lines.append(f"Estimated cost: {self.cost.text()}.")
        else:
            lines.append("Dollars: " + " / ".join(f"`{c} estimate=true`" for c in self.commands)
                         + " prints them without sending anything (or `make_tables.py --estimate` here).")
        return lines


def _sweep_values(job: Job) -> tuple[tuple[str, str], ...]:
    """The job's sweep choices (``key=value`` overrides past ``+experiment=``), as (key, value) pairs."""
    return tuple((o.partition("=")[0], o.partition("=")[2]) for o in job.overrides if not o.startswith("+experiment="))


def fill_commands(jobs: Sequence[Job]) -> list[str]:
    """The fewest preset commands running exactly ``jobs``: jobs sharing every sweep choice but one
    merge into ``key=a,b`` (a Hydra multirun takes the product)."""
    groups: dict[str, list[tuple[tuple[str, str], ...]]] = {}
    for job in jobs:
        groups.setdefault(job.table, []).append(_sweep_values(job))
    commands = []
    for preset, combos in groups.items():
        merged: list[list[tuple[str, list[str]]]] = [[(k, [v]) for k, v in combo] for combo in dict.fromkeys(combos)]
        for position in range(max((len(c) for c in merged), default=0) - 1, -1, -1):
            out: dict[tuple, list[tuple[str, list[str]]]] = {}
            for combo in merged:
                if position >= len(combo):
                    out[tuple((k, tuple(v)) for k, v in combo)] = combo
                    continue
                rest = tuple((k, tuple(v)) for i, (k, v) in enumerate(combo) if i != position)
                if rest in out:
                    key, values = out[rest][position]
                    out[rest][position] = (key, values + [v for v in combo[position][1] if v not in values])
                else:
                    out[rest] = [(k, list(v)) for k, v in combo]
            merged = list(out.values())
        for combo in merged:
            choices = " ".join(f"{key}={','.join(values)}" for key, values in combo)
            commands.append(f"{RUN_COMMAND} +experiment={preset} {choices}".rstrip())
    return commands


def missing_jobs(jobs: Sequence[Job], filled: set[int], systems: Sequence[str] | None = None) -> list[Job]:
    """The jobs (of ``systems`` only, when given) whose judged row no selected run fills."""
    return [job for index, job in enumerate(jobs)
            if index not in filled and (systems is None or job.system in systems)]


def dry_run_cost(jobs: Sequence[Job], progress: bool = True,
                 estimate: Callable[[Job], tuple[float | None, int]] | None = None) -> DryRunCost:
    """The dry run (``estimate=true``) of every job, in-process: dollars and calls summed."""
    estimate = estimate or estimate_job
    usd, calls, unpriced = 0.0, 0, []
    for job in tqdm(jobs, desc="dry runs (estimate=true)", unit="job", disable=not progress):
        try:
            with _quiet(LOADER_LOGGER):  # the dataset's notes, once per job, would bury the tables
                dollars, job_calls = estimate(job)
        except Exception as exc:  # a missing dataset, a bad preset: the figure says so, the tables still build
            log.warning("dry run of %s failed: %s", job.system, type(exc).__name__)
            unpriced.append(f"{job.system} [{job.answerer}]: {type(exc).__name__}")
            continue
        calls += job_calls
        if dollars is None:
            unpriced.append(f"{job.system} [{job.answerer}]: a price is unknown")
        else:
            usd += dollars
    return DryRunCost(usd, calls, len(jobs), tuple(unpriced))


@contextlib.contextmanager
def _quiet(name: str):
    """Warnings of logger ``name`` left out while the block runs (errors still shown)."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def estimate_job(job: Job) -> tuple[float | None, int]:
    """One job's dry run as ``python run.py <overrides> estimate=true``: (dollars or None, calls)."""
    from harness.compose import compose_config
    from harness.config import RunConfig
    from harness.estimate import dry_run
    from harness.plan import build_plan

    result = dry_run(build_plan(RunConfig.from_dict(compose_config([*job.overrides, "estimate=true", "progress=false"]))))
    priced = ([result.embedding_estimate] if result.embedding_estimate is not None else []) + list(result.estimates)
    dollars = [e.usd for e in priced]
    calls = sum(e.calls for e in result.estimates)
    return (None if any(d is None for d in dollars) else sum(dollars)), calls
