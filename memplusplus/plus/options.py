"""The read-time switches of Mem++ plus, one group per lever; each lever can be turned off alone.

Everything here is chosen per dataset (configs/system/mempp_plus.yaml reads the dataset config),
never per question; nothing reads gold labels or question ids.
"""

from __future__ import annotations

from dataclasses import dataclass

LEXICAL_RANKERS = ("bm25", "cover_density")


@dataclass(frozen=True)
class PlusOptions:
    """Switches and settings of the plus read path.

    Lexical leg: ``any_term_lexical`` replaces the paper's lexical leg by one that matches a row
    sharing any query term, ranked by ``lexical_ranker`` (BM25 with ``bm25_k1``/``bm25_b``, or cover
    density), with RRF weight ``lexical_weight``.

    Thread expansion: ``thread_expansion`` lets the other in-scope rows of a taken row's thread
    follow it; ``thread_window`` keeps only siblings within that many rows of it in ingest order
    (None: the whole thread), ``thread_max`` caps the followers per taken row. ``thread_order``
    "leader": followers come right after the row that brought them, threads in the order of their
    best row; "sum": whole threads ordered by the sum of their rows' fused scores (the window is
    not used).

    Date-aware scope: ``date_scope`` adds a leg (weight ``date_weight``) ranking the rows dated in
    or near a date or period the question names, nearest first, up to ``date_window_days`` away.

    Clause views: ``clause_views`` scores a row for the vector leg by its best cosine over the
    whole question and each of its clauses with at least ``clause_min_words`` content words.

    Sentence views: ``sentence_views`` embeds each sentence of a row too (rows of
    ``sentence_authors`` only; None: every row), and the vector leg scores a row by its best cosine
    over its own embedding and its sentences'; a sentence under ``sentence_min_words`` words joins
    its neighbour.

    Packing: ``packing`` orders the rows to render so the ``budget`` characters hold the most
    evidence: near-duplicates (cosine >= ``near_duplicate``) go to the end, and a row that no
    longer fits whole lets the next rows that do fit go first (looking ``lookahead`` rows ahead),
    never moving a row by more than that.
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
        if self.lexical_ranker not in LEXICAL_RANKERS:
            raise ValueError(f"plus.lexical_ranker={self.lexical_ranker!r}; use one of {list(LEXICAL_RANKERS)}")
        if min(self.lexical_weight, self.date_weight) < 0:
            raise ValueError("plus.lexical_weight and plus.date_weight must be >= 0")
        if self.sentence_min_words < 1:
            raise ValueError("plus.sentence_min_words must be >= 1")
        if self.sentence_authors is not None:
            object.__setattr__(self, "sentence_authors", tuple(self.sentence_authors))
        if self.bm25_k1 < 0 or not 0 <= self.bm25_b <= 1:
            raise ValueError("plus.bm25_k1 must be >= 0 and plus.bm25_b in [0, 1]")
        if self.thread_order not in ("leader", "sum"):
            raise ValueError(f"plus.thread_order={self.thread_order!r}; use leader or sum")
        if self.thread_window is not None and self.thread_window < 1:
            raise ValueError("plus.thread_window must be >= 1 or null (the whole thread)")
        if self.thread_max < 0 or self.date_window_days < 0 or self.lookahead < 0:
            raise ValueError("plus.thread_max, plus.date_window_days and plus.lookahead must be >= 0")
        if self.budget is not None and self.budget < 1:
            raise ValueError("plus.budget must be >= 1 or null (no cut)")
        if self.near_duplicate is not None and not 0 < self.near_duplicate <= 1:
            raise ValueError("plus.near_duplicate must be in (0, 1] or null (keep repeats in place)")
