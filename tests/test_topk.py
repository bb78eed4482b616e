"""The top-k cut with its recency reserve (memplusplus.ranking), shared by the Postgres backend and the
fact index; plain Python, so it runs on a base install."""

from datetime import datetime

from memplusplus.ranking import FusedRow, select_top_k


def test_top_k_cut_keeps_fused_order_among_equal_dates():
    """Seqs 2 and 4 share a date; 2 is fused first though ingested earlier and must stay first
    (the old rule put the later-ingested 4 first); 3, ingested after 2 with an earlier date, comes
    after both: the authors' reserve sorts by date only, stably."""
    fused = [FusedRow(seq, 1.0 - rank / 10) for rank, seq in enumerate([0, 1, 2, 4, 3])]
    recency = {0: datetime(2023, 1, 1), 1: datetime(2023, 1, 2), 2: datetime(2023, 6, 1),
               3: datetime(2023, 2, 1), 4: datetime(2023, 6, 1)}
    chosen = select_top_k(fused, recent_pool=[], recency=recency, k=4, reserve=2)
    assert [(row.seq, reserve) for row, reserve in chosen] == [(0, False), (1, False), (2, True), (4, True)]
    chosen = select_top_k(fused, recent_pool=[], recency=recency, k=5, reserve=3)
    assert [row.seq for row, _ in chosen] == [0, 1, 2, 4, 3]


def test_top_k_cut_keeps_the_reserve_for_the_latest_dated_matches():
    fused = [FusedRow(seq, 1.0 - seq / 10) for seq in range(6)]  # fused order 0..5
    recency = {0: datetime(2023, 1, 1), 1: datetime(2023, 1, 2), 2: datetime(2023, 1, 3),
               3: datetime(2023, 5, 1), 4: datetime(2023, 2, 1), 5: datetime(2023, 9, 1)}
    chosen = select_top_k(fused, recent_pool=[9, 8, 5], recency=recency, k=4, reserve=2)
    assert [(row.seq, reserve) for row, reserve in chosen] == [(0, False), (1, False), (5, True), (3, True)]
    # Short of matched rows the reserve takes the most recently ingested unmatched ones.
    chosen = select_top_k(fused[:2], recent_pool=[9, 8, 1], recency=recency, k=4, reserve=2)
    assert [(row.seq, reserve) for row, reserve in chosen] == [(0, False), (1, False), (9, True), (8, True)]
