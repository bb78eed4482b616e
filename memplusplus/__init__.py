"""Mem++: non-destructive long-term memory for organizational LLM agents.

    from memplusplus import MemPlusPlus, render
    memory = MemPlusPlus()
    memory.add("We moved the launch to May 3.", author="Maya Patel", date=datetime(2023, 4, 1))
    hits = memory.search("When is the launch?", as_of=date(2023, 4, 2), k=5)
    print(render(hits).text)
"""

from memplusplus.encoder import Encoder, EncoderConfig
from memplusplus.evidence import RenderedContext, render
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memory_protocol import Document, Hit

__all__ = ["Document", "Encoder", "EncoderConfig", "Hit", "MemPPConfig", "MemPlusPlus", "RenderedContext", "render"]
