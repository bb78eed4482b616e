"""Statistics over per-question scores (plain numpy, no run folders, no model calls): bootstrap
intervals, paired tests, judge agreement; every result names its method."""
