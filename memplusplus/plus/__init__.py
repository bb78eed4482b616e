"""Mem++ plus: Mem++'s store with a read path aimed at what the answerer reads (``memory``: threads
and packing; ``dates``, ``views``; the any-term lexical leg is ``memplusplus.lexical``)."""

from memplusplus.plus.memory import PlusMemory
from memplusplus.plus.options import PlusOptions

__all__ = ["PlusMemory", "PlusOptions"]
