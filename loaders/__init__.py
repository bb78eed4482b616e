"""Dataset loaders: benchmark files -> Episode(documents, questions), with clear DatasetErrors.

    from loaders import load_dataset
    episodes = load_dataset("locomo", limit=50, categories=["temporal"])

``DATASETS`` holds the built-in benchmarks' loaders by name. A benchmark defined elsewhere passes
its own :class:`DatasetLoader` to :func:`load_dataset` instead of a name, so adding one never edits
this package.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loaders import locomo, longmemeval, orgmem
from loaders.autofetch import prepare_data_dir
from loaders.datadir import resolve_data_dir
from loaders.notes import DatasetNotes, dataset_notes, log_notes
from memory_protocol import DatasetError, Episode, Question, RubricFacet
from loaders.selection import Selection, make_selection, select


@dataclass(frozen=True)
class DatasetLoader:
    """How to load one benchmark: its loader, valid category names, and whether an empty episode stays."""

    name: str
    load: Callable[..., Iterable[Episode]]
    categories: tuple[str, ...]
    keep_empty: bool = False

    def options(self) -> list[str]:
        """Keyword options the loader accepts besides the data directory."""
        return list(inspect.signature(self.load).parameters)[1:]


DATASETS: dict[str, DatasetLoader] = {
    "orgmem": DatasetLoader("orgmem", orgmem.load_orgmem, orgmem.CATEGORIES, keep_empty=True),
    "locomo": DatasetLoader("locomo", locomo.load_locomo, locomo.CATEGORIES),
    "longmemeval_s": DatasetLoader("longmemeval_s", longmemeval.load_longmemeval_s, longmemeval.CATEGORIES),
}


def get_spec(name: str | DatasetLoader) -> DatasetLoader:
    """The built-in dataset called ``name`` (a :class:`DatasetLoader` is returned as it is)."""
    if isinstance(name, DatasetLoader):
        return name
    if name not in DATASETS:
        raise DatasetError(name, f"unknown dataset {name!r}; known datasets: {sorted(DATASETS)}")
    return DATASETS[name]


def load_dataset(
    dataset: str | DatasetLoader,
    data_dir: str | Path | None = None,
    limit: int | None = None,
    categories: Sequence[str] | None = None,
    **options: Any,
) -> list[Episode]:
    """Load a benchmark as episodes: ``dataset`` is a built-in name or a benchmark's own loader.

    ``limit``: at most this many questions in total (episode order); episodes left without questions are
    dropped, except OrgMemBench's single episode. ``categories``: keep questions whose category (or, for
    LoCoMo, numeric category id as a string) is listed. ``options`` go to the loader: orgmem ``tier``,
    ``author``; locomo / longmemeval_s ``file``.
    """
    spec = get_spec(dataset)
    name = spec.name
    unknown = sorted(set(options) - set(spec.options()))
    if unknown:
        raise DatasetError(name, f"unknown options {unknown}; {name} accepts {spec.options()}")
    selection = make_selection(name, limit, categories, spec.categories)
    root = resolve_data_dir(None if data_dir is None else str(data_dir))
    loaded = spec.load(root, **options)
    counted = _Counted(loaded, name)
    episodes = select(counted, selection, keep_empty=spec.keep_empty)
    close = getattr(loaded, "close", None)
    if close is not None:  # a lazy loader stopped at a limit checks what it did not build (unique ids)
        close()
    if counted.exhausted and (counted.questions == 0 or counted.documents == 0):
        missing = "questions" if counted.questions == 0 else "documents"
        raise DatasetError(
            f"{name} in {root}",
            f"the data files yield no {missing} ({counted.episodes} episode(s), {counted.questions} questions, "
            f"{counted.documents} documents); is a file empty or truncated?",
        )
    log_notes(name, dataset_notes(episodes))
    return episodes


class _Counted:
    """Passes a loader's episodes through, counting what the data files held (as far as read),
    and refusing an episode without documents."""

    def __init__(self, episodes: Iterable[Episode], dataset: str) -> None:
        self._episodes = episodes
        self._dataset = dataset
        self.episodes = self.questions = self.documents = 0
        self.exhausted = False

    def __iter__(self) -> Iterator[Episode]:
        for episode in self._episodes:
            if not episode.documents:  # every loader refuses this itself; a benchmark's own loader may not
                raise DatasetError(self._dataset, "the episode has no documents, so there is nothing to retrieve "
                                                  "from", record=episode.episode_id)
            self.episodes += 1
            self.questions += len(episode.questions)
            self.documents += len(episode.documents)
            yield episode
        self.exhausted = True


__all__ = [
    "DATASETS",
    "DatasetError",
    "DatasetLoader",
    "DatasetNotes",
    "Episode",
    "Question",
    "RubricFacet",
    "Selection",
    "dataset_notes",
    "load_dataset",
    "prepare_data_dir",
    "resolve_data_dir",
]
