"""The types every side of the project shares, importing nothing else of ours.

A memory under test (Mem++, a baseline, your own) takes ``Document``s and returns ``Hit``s
through the ``MemorySystem`` protocol; a benchmark loader yields ``Episode``s of documents and
``Question``s. Import from here to be measured without importing Mem++ or the harness:

    from memory_protocol import Document, Hit, MemorySystem
"""

from memory_protocol.benchmark import Episode, Question, RubricFacet
from memory_protocol.documents import AUTHOR_ROLES, EVIDENCE_STYLES, AuthorRole, Document, EvidenceStyle, Hit
from memory_protocol.errors import ConfigError, DatasetError
from memory_protocol.protocol import MemorySystem

__all__ = [
    "AUTHOR_ROLES",
    "EVIDENCE_STYLES",
    "AuthorRole",
    "ConfigError",
    "DatasetError",
    "Document",
    "Episode",
    "EvidenceStyle",
    "Hit",
    "MemorySystem",
    "Question",
    "RubricFacet",
]
