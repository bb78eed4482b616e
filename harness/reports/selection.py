"""Which run feeds which row: a run matches a job of the table's preset when their resolved configurations
agree on every key that changes a number (execution-only keys ignored).

Retrieval rows (no answerer) ignore the answerer and judge keys and tolerate another encoder (the paper's
needs an API key; the encoder is footnoted). Limited, failed and plumbing runs are left out unless asked;
``allow`` tolerates keys (footnoted). The newest matching run wins; every run left out is named.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from harness.reports.format import short_text
from harness.reports.store import flatten, runs_of

IGNORED_PREFIXES = (
    "store.", "estimate", "cache_only", "progress", "print_mode", "run_name", "dataset.data_dir", "dataset.ks",
    "encoder.params.batch_size", "encoder.params.threads", "encoder.params.model_dir", "encoder.params.timeout_s",
    "encoder.params.max_retries", "encoder.params.api_key_env", "encoder.params.base_url",
    "batch", "write_time_batch", "system.params.llm.batch",  # live or batch calls: the same requests and answers
)
IGNORED_MODEL_KEYS = ("concurrency", "timeout_s", "max_retries", "api_key_env", "base_url", "local",
                      "local_context_tokens", "batch", "batch_api", "batch_poll_s")
ANSWER_PREFIXES = ("answerer", "judge", "dataset.answer_max_tokens", "answer_recipe")
# Keys added after runs were made, with the value those runs had (a missing key is that value).
DEFAULTS = {"answer_recipe": "harness"}
KEYLESS_TOLERATED = ("encoder.", "encoder_rule")  # retrieval rows: a key-less run embeds with a local encoder
LIMIT_KEYS = ("dataset.limit", "dataset.categories")


@dataclass(frozen=True)
class Job:
    """One run a table's preset asks for."""

    table: str
    overrides: tuple[str, ...]
    config: dict[str, Any]  # the resolved configuration, as config.json holds it

    @property
    def flat(self) -> dict[str, Any]:
        return flatten(self.config)

    @property
    def dataset(self) -> str:
        return str(self.config["dataset"]["name"])

    @property
    def system(self) -> str:
        return str(self.config["system"]["name"])

    @property
    def answerer(self) -> str:
        spec = self.config.get("answerer")
        return "none" if not spec else str(spec.get("name", "none"))


@dataclass(frozen=True)
class Options:
    include_limited: bool = False
    include_failed: bool = False
    include_plumbing: bool = False
    allow: tuple[str, ...] = ()


@dataclass
class Selection:
    tidy: pd.DataFrame  # the chosen runs only
    notes: list[str] = field(default_factory=list)
    differences: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)  # run -> tolerated {key: (ours, preset)}
    filled: set[int] = field(default_factory=set)  # indices of the jobs a judged run fills


def _ignored(key: str) -> bool:
    if key.startswith(IGNORED_PREFIXES):
        return True
    head, _, tail = key.partition(".")
    return head in ("answerer", "judge") and tail in IGNORED_MODEL_KEYS


def differences(run: dict[str, Any], job: dict[str, Any], answers: bool) -> dict[str, tuple[Any, Any]]:
    """``{key: (run value, preset value)}`` over the keys that change a number."""
    out = {}
    for key in sorted(set(run) | set(job)):
        if _ignored(key) or (not answers and key.startswith(ANSWER_PREFIXES)):
            continue
        ours, theirs = run.get(key, DEFAULTS.get(key, "<missing>")), job.get(key, DEFAULTS.get(key, "<missing>"))
        if ours != theirs:
            out[key] = (ours, theirs)
    return out


def _tolerated(key: str, run: pd.Series, options: Options, judged: bool) -> bool:
    if not judged and key.startswith(KEYLESS_TOLERATED):
        return True
    if key.startswith(tuple(options.allow)):
        return True
    if options.include_limited and key in LIMIT_KEYS:
        return True
    return bool(options.include_plumbing and run["plumbing"] and key.startswith(ANSWER_PREFIXES))


def _describe(diff: dict[str, tuple[Any, Any]], limit: int = 3) -> str:
    parts = [f"{key}={short_text(ours)} (preset {short_text(theirs)})" for key, (ours, theirs) in list(diff.items())[:limit]]
    more = f" and {len(diff) - limit} more" if len(diff) > limit else ""
    return ", ".join(parts) + more


def select_runs(tidy: pd.DataFrame, jobs: Sequence[Job], options: Options = Options(),
                datasets: Iterable[str] | None = None) -> Selection:
    """The runs that feed ``jobs``' rows, with a note per run left out. Per job and row kind (judged
    or retrieval) an exact match beats one with tolerated differences; then the newest wins."""
    if tidy.empty:
        return Selection(tidy)
    runs = runs_of(tidy)
    wanted = set(datasets) if datasets is not None else {job.dataset for job in jobs}
    runs = runs[runs["dataset"].isin(wanted)].sort_values(["mtime", "run"], ascending=False)
    candidates: dict[tuple[int, bool], list[tuple[int, str]]] = {}
    tolerated: dict[str, dict[str, tuple[Any, Any]]] = {}
    left_out: dict[str, str] = {}
    for _, run in runs.iterrows():
        judged = run["answerer"] != "none"
        if run["failed"] and not options.include_failed:
            left_out[run["folder"]] = "every answer failed or no score (--include-failed)"
            continue
        if run["plumbing"] and judged and not options.include_plumbing:
            left_out[run["folder"]] = "plumbing: local model or non-provider endpoint (--include-plumbing)"
            continue
        best: dict[str, tuple[Any, Any]] | None = None
        # The job with the run's own answerer first: a plumbing run may stand in for another
        # answerer's job, but never when its own answerer's job is in the preset (else its row,
        # shown under its own answerer, is footnoted against the other answerer's model).
        for index, job in sorted(enumerate(jobs), key=lambda pair: pair[1].answerer != run["answerer"]):
            if job.dataset != run["dataset"] or job.system != run["system_name"]:
                continue
            if judged and job.answerer != run["answerer"] and not (options.include_plumbing and run["plumbing"]):
                continue
            diff = differences(run["config"], job.flat, answers=judged)
            hard = {k: v for k, v in diff.items() if not _tolerated(k, run, options, judged)}
            if not hard:
                candidates.setdefault((index, judged), []).append((len(diff), run["folder"]))
                if diff:
                    tolerated[run["run"]] = diff
                best = {}
                break
            if best is None or len(hard) < len(best):
                best = hard
        if best is None:
            left_out[run["folder"]] = "not in the preset (no job with this dataset, system and answerer)"
        elif best:
            left_out[run["folder"]] = f"differs from the preset: {_describe(best)}"
    chosen = set()
    filled = set()
    for (index, judged), ranked in candidates.items():  # runs are newest first; a stable sort keeps that among equals
        ranked = sorted(ranked, key=lambda item: item[0])
        chosen.add(ranked[0][1])
        if judged:
            filled.add(index)
        for _, folder in ranked[1:]:
            left_out[folder] = f"another run of the same job is shown ({ranked[0][1]})"
    notes = []
    if left_out:
        notes.append(f"Left out {len(left_out)} run(s): "
                     + "; ".join(f"{folder}: {why}" for folder, why in sorted(left_out.items())) + ".")
    keep = set(tidy.loc[tidy["folder"].isin(chosen), "run"])
    tolerated = {run: diff for run, diff in tolerated.items() if run in keep}
    return Selection(tidy[tidy["run"].isin(keep)].reset_index(drop=True), notes, tolerated, filled)
