"""Dataset loaders: benchmark files -> Episode(documents, questions), with clear DatasetErrors.

    from loaders import load_dataset
    episodes = load_dataset("locomo", limit=50, categories=["temporal"])

A benchmark defined elsewhere passes its own :class:`DatasetLoader` instead of a name.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loaders import locomo, longmemeval, orgmem
from loaders.fetch import prepare_data_dir as _prepare, resolve_data_dir
from loaders.notes import DatasetNotes, dataset_notes, log_notes
from memory_protocol import DatasetError, Episode, Question, RubricFacet


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


def prepare_data_dir(dataset: str | DatasetLoader, data_dir: str | os.PathLike[str] | None = None,
                     options: Mapping[str, Any] | None = None, **kwargs: Any) -> Path | None:
    """The data folder to load ``dataset`` from (fetched when needed); None for a loader that reads no files."""
    if isinstance(dataset, DatasetLoader) and not dataset.needs_data:
        return None
    return _prepare(dataset.name if isinstance(dataset, DatasetLoader) else dataset, data_dir, options, **kwargs)


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
    root = resolve_data_dir(None if data_dir is None else str(data_dir)) if spec.needs_data else None
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
    log_notes(name, dataset_notes(episodes))
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


__all__ = ["DATASETS", "DatasetError", "DatasetLoader", "DatasetNotes", "Episode", "Question", "RubricFacet",
           "Selection", "dataset_notes", "load_dataset", "prepare_data_dir", "resolve_data_dir", "select"]
