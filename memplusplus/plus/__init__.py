"""Mem++ plus: Mem++'s non-destructive store with a read path aimed at what the answerer reads.

One module per lever: :mod:`.lexical` (any-term BM25 leg), :mod:`.threads` (thread expansion),
:mod:`.dates` (date-aware ranking), :mod:`.packing` (budget-aware render order); :mod:`.memory`
puts them together. No generative call anywhere; nothing here imports the harness.
"""

from memplusplus.plus.memory import PlusMemory
from memplusplus.plus.options import PlusOptions

__all__ = ["PlusMemory", "PlusOptions"]
