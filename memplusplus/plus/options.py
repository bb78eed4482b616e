"""The read-time switches of Mem++ plus, one group per lever, each chosen per dataset (never per
question; configs/system/mempp_plus.yaml reads the dataset config)."""

from __future__ import annotations

from dataclasses import dataclass

from memplusplus.settings import LEXICAL_RANKERS, check_choice



@dataclass(frozen=True)
class PlusOptions:
    """``any_term_lexical``: a lexical leg matching any query stem, by ``lexical_ranker`` (BM25 with
    ``bm25_k1``/``bm25_b``, or cover density), weight ``lexical_weight``. ``thread_*``: a taken
    row's in-scope thread follows it (``thread_window`` rows away at most, None: the whole thread;
    ``thread_max`` per row; order "leader" after their row, "sum" whole threads by summed score).
    ``date_*``: a leg for rows dated within ``date_window_days`` of a period the question names.
    ``clause_views``/``sentence_views``: the vector leg also scores question clauses / row
    sentences (``sentence_authors``' rows only, None: all). ``packing``: the render order for
    ``budget`` characters (near-duplicates last, fit-first ``lookahead`` rows ahead).
    """

    any_term_lexical: bool = True
    lexical_ranker: str = "bm25"
    lexical_weight: float = 1.0
    bm25_k1: float = 1.5
    bm25_b: float = 0.75
    thread_expansion: bool = True
    thread_window: int | None = None
    thread_max: int = 10
    thread_order: str = "leader"
    date_scope: bool = True
    date_weight: float = 2.0
    date_window_days: int = 3
    clause_views: bool = False
    clause_min_words: int = 3
    sentence_views: bool = False
    sentence_min_words: int = 4
    sentence_authors: tuple[str, ...] | None = None
    packing: bool = True
    budget: int | None = None
    near_duplicate: float | None = 0.97
    lookahead: int = 5

    def __post_init__(self) -> None:
        check_choice("plus.lexical_ranker", self.lexical_ranker, LEXICAL_RANKERS)
        if min(self.lexical_weight, self.date_weight) < 0:
            raise ValueError("plus.lexical_weight and plus.date_weight must be >= 0")
        if self.sentence_min_words < 1:
            raise ValueError("plus.sentence_min_words must be >= 1")
        if self.sentence_authors is not None:
            object.__setattr__(self, "sentence_authors", tuple(self.sentence_authors))
        if self.bm25_k1 < 0 or not 0 <= self.bm25_b <= 1:
            raise ValueError("plus.bm25_k1 must be >= 0 and plus.bm25_b in [0, 1]")
        check_choice("plus.thread_order", self.thread_order, ("leader", "sum"))
        if self.thread_window is not None and self.thread_window < 1:
            raise ValueError("plus.thread_window must be >= 1 or null (the whole thread)")
        if self.thread_max < 0 or self.date_window_days < 0 or self.lookahead < 0:
            raise ValueError("plus.thread_max, plus.date_window_days and plus.lookahead must be >= 0")
        if self.budget is not None and self.budget < 1:
            raise ValueError("plus.budget must be >= 1 or null (no cut)")
        if self.near_duplicate is not None and not 0 < self.near_duplicate <= 1:
            raise ValueError("plus.near_duplicate must be in (0, 1] or null (keep repeats in place)")
