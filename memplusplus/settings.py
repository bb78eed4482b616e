"""Mem++'s read-time settings, and which author each row is tagged with (paper §3.2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from memplusplus.ann import check_ann
from memplusplus.legs import LEGS
from memory_protocol.documents import Document


TAG_SOURCES: tuple[str, ...] = ("none", "author", "speaker")


@dataclass(frozen=True)
class MemPPConfig:
    """Read-time settings; the paper's per-benchmark values (its Table 6) live in the dataset configs.

    ``weights`` maps each leg to its RRF weight; a leg with weight 0 is not run at all (the leg
    ablations). ``candidates`` is C, the most rows any one leg may return. ``min_term_chars`` and
    ``max_query_terms`` restrict which question words the lexical and tag legs use.

    ``tags`` is the tag leg's source (paper §3.2): "author" (the paper's rule) indexes a row's
    author only where its document names one as an author (``Document.author_role``);
    "speaker" also indexes conversational speakers; "none" indexes nothing.

    ``ann`` (none|hnsw|ivf) makes the vector leg approximate through faiss for scopes of at least
    ``ann_min_rows`` rows; the default, none, is the paper's exact search (``memplusplus.ann``).
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
        check_ann(self)
        unknown = set(self.weights) - set(LEGS)
        if unknown:
            raise ValueError(f"unknown legs {sorted(unknown)}; legs are {list(LEGS)}")
        if any(weight < 0 for weight in self.weights.values()):
            raise ValueError("leg weights must be >= 0")
        if self.candidates < 1 or self.k < 1 or self.recency_reserve < 0:
            raise ValueError("candidates and k must be >= 1 and recency_reserve >= 0")
        if self.lexical_ranker not in ("cover_density", "bm25"):
            raise ValueError(f"unknown lexical_ranker {self.lexical_ranker!r}")
        if self.tags not in TAG_SOURCES:
            raise ValueError(f"unknown tags {self.tags!r}; expected one of {list(TAG_SOURCES)}")

    def weight(self, leg: str) -> float:
        return float(self.weights.get(leg, 0.0))


def tag_source(doc: Document, tags: str) -> str | None:
    """The text the tag leg indexes for ``doc`` under the tag source ``tags`` (paper §3.2): an
    author only where the source names one (``author``), speakers too (``speaker``), or nothing."""
    if doc.author is None or tags == "none":
        return None
    if tags == "author" and doc.author_role != "author":
        return None
    return doc.author
