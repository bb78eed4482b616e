"""Dataset loaders: benchmark files -> Episode(documents, questions), with clear DatasetErrors.

    from loaders import load_dataset
    episodes = load_dataset("locomo", limit=50, categories=["temporal"])

A benchmark defined elsewhere passes its own :class:`DatasetLoader` instead of a name. Here too: the data
folder a run reads (fetched into when missing), the question selection, and the known upstream quirks of
the loaded questions (:func:`dataset_notes`).
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from loaders import locomo, longmemeval, orgmem
from loaders.fetch import DATA_ENV, REQUIRED, fetch_missing
from memory_protocol import DatasetError, Episode, Question, RubricFacet, cache_root, find_folder

log = logging.getLogger(__name__)
# question meta keys under which a loader lists gold references it dropped as a known quirk
DROPPED_EVIDENCE_KEYS: tuple[str, ...] = ("missing_evidence", "unparsed_evidence")
MAX_NAMED = 20  # a warning names at most this many questions; the stats keep them all


@dataclass(frozen=True)
class DatasetLoader:
    """How to load one benchmark. ``load(data_dir, **options)`` yields episodes; with ``needs_data``
    False it reads no files and is called as ``load(**options)``, with no data folder at all.
    ``keep_empty`` keeps an episode whose questions were all filtered out."""

    name: str
    load: Callable[..., Iterable[Episode]]
    categories: tuple[str, ...]
    keep_empty: bool = False
    needs_data: bool = True

    def options(self) -> list[str]:
        return list(inspect.signature(self.load).parameters)[int(self.needs_data):]


DATASETS: dict[str, DatasetLoader] = {
    "orgmem": DatasetLoader("orgmem", orgmem.load_orgmem, orgmem.CATEGORIES, keep_empty=True),
    "locomo": DatasetLoader("locomo", locomo.load_locomo, locomo.CATEGORIES),
    "longmemeval_s": DatasetLoader("longmemeval_s", longmemeval.load_longmemeval_s, longmemeval.CATEGORIES),
}


def resolve_data_dir(named: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
                     cwd: Path | None = None, repo_root: Path | None = None) -> Path:
    """The data folder: the setting, else $MEMPP_DATA_DIR (either must exist), else the first existing
    of ./data, <repo>/data, <repo>/../shared/data and <cache root>/data."""
    found, candidates = find_folder("data", named, DATA_ENV, env=env, cwd=cwd, repo_root=repo_root)
    if found is not None:
        return found
    tried = "; ".join(f"{p} ({why})" for p, why in candidates)
    if _is_named(named, env):
        raise DatasetError(str(candidates[0][0]), f"data directory does not exist; looked in: {tried}")
    raise DatasetError("data directory", f"no data directory found; looked in: {tried}. "
                                         f"Pass data_dir or set ${DATA_ENV}.")


def _is_named(named: Any, env: Mapping[str, str] | None) -> bool:
    return (named is not None and str(named) != "") or bool((os.environ if env is None else env).get(DATA_ENV))


def prepare_data_dir(dataset: str | DatasetLoader, data_dir: str | os.PathLike[str] | None = None,
                     options: Mapping[str, Any] | None = None, *, progress: bool = True,
                     env: Mapping[str, str] | None = None) -> Path | None:
    """The data folder to load ``dataset`` from (None for a loader that reads no files). When no candidate
    holds a fetchable benchmark, its pinned files are fetched into the named folder (which must exist),
    else into <cache root>/data."""
    if isinstance(dataset, DatasetLoader) and not dataset.needs_data:
        return None
    name, options = dataset.name if isinstance(dataset, DatasetLoader) else dataset, options or {}
    if name not in REQUIRED or options.get("file") or options.get("tier", "medium") != "medium":
        return resolve_data_dir(data_dir, env=env)
    named = _is_named(data_dir, env)
    if named:
        resolve_data_dir(data_dir, env=env)  # a typo is not a place to fetch into
    found, candidates = find_folder("data", data_dir, DATA_ENV, holds=REQUIRED[name], env=env)
    if found is not None:
        return found
    return fetch_missing(name, candidates[0][0] if named else cache_root(env) / "data", progress=progress)


@dataclass(frozen=True)
class Selection:
    """Which questions to keep: ``categories`` (None = all) and at most ``limit`` in total (None = all)."""

    limit: int | None = None
    categories: frozenset[str] | None = None


def make_selection(dataset: str, limit: int | None, categories: Sequence[str] | None,
                   valid: Sequence[str]) -> Selection:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise DatasetError(dataset, f"limit must be a non-negative integer or null, got {limit!r}", field_name="limit")
    if categories is None:
        return Selection(limit, None)
    wanted = [str(c) for c in ([categories] if isinstance(categories, str) else categories)]
    unknown = [c for c in wanted if c not in valid]
    if unknown:
        raise DatasetError(dataset, f"unknown categories {unknown}; valid categories: {list(valid)}",
                           field_name="categories")
    return Selection(limit, frozenset(wanted))


def select(episodes: Iterable[Episode], selection: Selection, keep_empty: bool = False) -> list[Episode]:
    """Questions of the chosen categories (or numeric category ids), at most ``limit`` in episode order;
    episodes left without questions dropped unless ``keep_empty``. Stops reading at the limit."""
    if selection.limit == 0 and not keep_empty:
        return []
    kept: list[Episode] = []
    remaining = selection.limit
    for episode in episodes:
        questions = [q for q in episode.questions if selection.categories is None
                     or ({q.category, str(q.meta.get("category_id", q.category))} & selection.categories)]
        if remaining is not None:
            questions = questions[:remaining]
            remaining -= len(questions)
        if questions or keep_empty:
            kept.append(replace(episode, questions=tuple(questions)))
        if remaining is not None and remaining <= 0:
            break
    return kept


def load_dataset(dataset: str | DatasetLoader, data_dir: str | Path | None = None, limit: int | None = None,
                 categories: Sequence[str] | None = None, **options: Any) -> list[Episode]:
    """Load a benchmark (a built-in name or a benchmark's own loader) as episodes.

    ``categories`` keeps questions whose category (or LoCoMo's numeric id as a string) is listed;
    ``options`` go to the loader (orgmem ``tier``, ``author``; locomo / longmemeval_s ``file``).
    """
    if not isinstance(dataset, DatasetLoader) and dataset not in DATASETS:
        raise DatasetError(dataset, f"unknown dataset {dataset!r}; known datasets: {sorted(DATASETS)}")
    spec = dataset if isinstance(dataset, DatasetLoader) else DATASETS[dataset]
    name = spec.name
    unknown = sorted(set(options) - set(spec.options()))
    if unknown:
        raise DatasetError(name, f"unknown options {unknown}; {name} accepts {spec.options()}")
    selection = make_selection(name, limit, categories, spec.categories)
    root = resolve_data_dir(data_dir) if spec.needs_data else None
    loaded = spec.load(root, **options) if spec.needs_data else spec.load(**options)
    counted = _Counted(loaded, name)
    episodes = select(counted, selection, keep_empty=spec.keep_empty)
    close = getattr(loaded, "close", None)
    if close is not None:  # a lazy loader stopped at a limit checks what it did not build (unique ids)
        close()
    if counted.exhausted and (counted.questions == 0 or counted.documents == 0):
        missing = "questions" if counted.questions == 0 else "documents"
        raise DatasetError(f"{name} in {root}" if root else name,
                           f"the data files yield no {missing} ({counted.episodes} episode(s), {counted.questions} "
                           f"questions, {counted.documents} documents); is a file empty or truncated?")
    for line in dataset_notes(episodes).warnings(name):
        log.warning(line)
    return episodes


class _Counted:
    """A loader's episodes passed through, counted, an episode without documents refused."""

    def __init__(self, episodes: Iterable[Episode], dataset: str) -> None:
        self._episodes, self._dataset = episodes, dataset
        self.episodes = self.questions = self.documents = 0
        self.exhausted = False

    def __iter__(self) -> Iterator[Episode]:
        for episode in self._episodes:
            if not episode.documents:  # the built-in loaders refuse this themselves; another may not
                raise DatasetError(self._dataset, "the episode has no documents, so there is nothing to retrieve "
                                                  "from", record=episode.episode_id)
            self.episodes += 1
            self.questions += len(episode.questions)
            self.documents += len(episode.documents)
            yield episode
        self.exhausted = True



@dataclass(frozen=True)
class DatasetNotes:
    """Known upstream quirks of the loaded questions, not errors but none may pass silently: question ids
    by kind, in load order, logged once per kind and recorded in ``metrics.json`` -> ``stats.dataset_notes``."""

    dropped_evidence: tuple[str, ...] = ()
    without_gold: tuple[str, ...] = ()
    dated_before_documents: tuple[str, ...] = ()
    gold_dated_after_question: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, dict[str, object]]:
        """``{kind: {"count": n, "questions": [...]}}`` for the kinds that occur."""
        return {kind: {"count": len(ids), "questions": list(ids)} for kind, ids in vars(self).items() if ids}

    def warnings(self, dataset: str) -> list[str]:
        lines = []
        for kind, ids in vars(self).items():
            if ids:
                named = ", ".join(ids[:MAX_NAMED]) + (f" and {len(ids) - MAX_NAMED} more" if len(ids) > MAX_NAMED else "")
                lines.append(f"{dataset}: {len(ids)} question(s) {EXPLANATIONS[kind]}: {named}")
        return lines


EXPLANATIONS: dict[str, str] = {
    "dropped_evidence": "cite gold evidence that matches no document (a known upstream quirk; the reference "
                        "is dropped, the question kept)",
    "without_gold": "have no gold evidence, so no retrieval score",
    "dated_before_documents": "are dated before every document of their episode (a system that honours the "
                              "question date sees nothing)",
    "gold_dated_after_question": "cite gold evidence dated after the question (a system that honours the question "
                                 "date cannot retrieve that evidence: all-gold recall is 0, and any-gold recall too "
                                 "when every gold item is later)",
}


def dataset_notes(episodes: Iterable[Episode]) -> DatasetNotes:
    dropped: list[str] = []
    without_gold: list[str] = []
    early: list[str] = []
    late_gold: list[str] = []
    for episode in episodes:
        day_of = {doc.doc_id: doc.date.date() for doc in episode.documents if doc.date is not None}
        earliest: date | None = min(day_of.values(), default=None)
        for question in episode.questions:
            if any(question.meta.get(key) for key in DROPPED_EVIDENCE_KEYS):
                dropped.append(question.qid)
            if not question.evidence_ids and not question.meta.get("abstention"):
                without_gold.append(question.qid)
            if question.as_of is not None and earliest is not None and question.as_of < earliest:
                early.append(question.qid)  # its gold is later too: named once, as the broader case
            elif question.as_of is not None and any(day_of.get(e, question.as_of) > question.as_of
                                                    for e in question.evidence_ids):
                late_gold.append(question.qid)
    return DatasetNotes(tuple(dropped), tuple(without_gold), tuple(early), tuple(late_gold))


__all__ = ["DATASETS", "DatasetError", "DatasetLoader", "DatasetNotes", "Episode", "Question", "RubricFacet",
           "Selection", "dataset_notes", "load_dataset", "prepare_data_dir", "resolve_data_dir", "select"]
