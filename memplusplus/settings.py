"""Mem++'s read-time settings, and which author each row is tagged with (paper §3.2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from memory_protocol import Document

LEGS: tuple[str, ...] = ("lexical", "tag", "vector")
TAG_SOURCES: tuple[str, ...] = ("none", "author", "speaker")
LEXICAL_RANKERS: tuple[str, ...] = ("cover_density", "bm25")
ANN_KINDS: tuple[str, ...] = ("none", "hnsw", "ivf")


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; expected one of {list(choices)}")


@dataclass(frozen=True)
class MemPPConfig:
    """Read-time settings; the paper's per-benchmark values (its Table 6) live in the dataset configs.

    ``weights``: each leg's RRF weight (0: the leg is not run, the leg ablations); ``candidates``
    is C; ``min_term_chars``/``max_query_terms`` pick the question words of the lexical and tag legs.
    ``tags`` (paper §3.2): "author" indexes a row's author only where its document names one as an
    author (``Document.author_role``), "speaker" conversational speakers too, "none" nothing.
    ``ann`` (none|hnsw|ivf): an approximate vector leg for scopes of at least ``ann_min_rows`` rows
    (``memplusplus.ann``); none is the paper's exact search.
    """

    weights: Mapping[str, float] = field(default_factory=lambda: {"lexical": 1.0, "tag": 1.0, "vector": 4.0})
    gamma: float = 60.0
    candidates: int = 50
    k: int = 50
    conjunctive: bool = True
    lexical_ranker: str = "cover_density"
    recency_reserve: int = 3
    dedup: bool = True
    min_term_chars: int = 1
    max_query_terms: int | None = None
    tags: str = "author"
    ann: str = "none"
    ann_min_rows: int = 50_000
    ann_m: int = 32
    ann_ef_construction: int = 80
    ann_ef_search: int = 128
    ann_nlist: int | None = None  # IVF lists; None: sqrt(rows) when it trains
    ann_nprobe: int = 16

    def __post_init__(self) -> None:
        for name in ("conjunctive", "dedup"):  # bool("no") is true: a text here would run the other way
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}={getattr(self, name)!r}: must be True or False")
        check_choice("ann", self.ann, ANN_KINDS)
        if self.ann_min_rows < 0 or (self.ann_nlist is not None and self.ann_nlist < 1):
            raise ValueError("ann_min_rows must be >= 0 and ann_nlist >= 1 (or None: sqrt(rows))")
        if min(self.ann_m, self.ann_ef_construction, self.ann_ef_search, self.ann_nprobe) < 1:
            raise ValueError("ann_m, ann_ef_construction, ann_ef_search and ann_nprobe must be >= 1")
        unknown = set(self.weights) - set(LEGS)
        if unknown:
            raise ValueError(f"unknown legs {sorted(unknown)}; legs are {list(LEGS)}")
        if any(weight < 0 for weight in self.weights.values()):
            raise ValueError("leg weights must be >= 0")
        if self.candidates < 1 or self.k < 1 or self.recency_reserve < 0:
            raise ValueError("candidates and k must be >= 1 and recency_reserve >= 0")
        check_choice("lexical_ranker", self.lexical_ranker, LEXICAL_RANKERS)
        check_choice("tags", self.tags, TAG_SOURCES)

    def weight(self, leg: str) -> float:
        return float(self.weights.get(leg, 0.0))


def tag_source(doc: Document, tags: str) -> str | None:
    """The text the tag leg indexes for ``doc`` (paper §3.2): an author only where the source names
    one (``author``), speakers too (``speaker``), or nothing."""
    if doc.author is None or tags == "none":
        return None
    if tags == "author" and doc.author_role != "author":
        return None
    return doc.author
