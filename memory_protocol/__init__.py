"""The types every side shares, importing nothing else of ours: a memory takes ``Document``s and
returns ``Hit``s through ``MemorySystem``; a loader yields ``Episode``s and ``Question``s."""

from memory_protocol.benchmark import Episode, Question, RubricFacet
from memory_protocol.documents import AUTHOR_ROLES, EVIDENCE_STYLES, AuthorRole, Document, EvidenceStyle, Hit
from memory_protocol.errors import ConfigError, DatasetError
from memory_protocol.protocol import MemorySystem, StoreSize, store_size

__all__ = ["AUTHOR_ROLES", "EVIDENCE_STYLES", "AuthorRole", "ConfigError", "DatasetError", "Document", "Episode",
           "EvidenceStyle", "Hit", "MemorySystem", "Question", "RubricFacet", "StoreSize",
           "store_size"]
