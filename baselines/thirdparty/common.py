"""What the Mem0 and Zep adapters share: the write-time model, the proxy they talk to, their folder.

Each adapter instance holds one episode's memory. It is given an :class:`~model_clients.llm_client.LLMClient`
(the write-time model, over the run's LLM cache) and puts an :class:`~model_clients.proxy.LLMProxy`
in front of it and of the harness encoder; the library is pointed at the proxy, with the proxy's
per-run token as its api_key (the proxy refuses any request without it), so every model call is
cached, counted and replayable with ``cache_only``. The proxy starts on first use and stops on
:meth:`ProxiedMemory.close` (or when the adapter is garbage-collected). The library's own store
lives under ``store_dir`` (the run's cache folder), which is not one of the system's settings.
"""

from __future__ import annotations

import shutil
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from model_clients.kvstore import stable_hash
from model_clients.llm_client import LLMClient
from model_clients.call_counts import CallCounts, snapshot
from model_clients.proxy import LLMProxy
from model_clients.call_counts import difference
from memplusplus.evidence import RenderedContext, format_date, render
from memory_protocol.documents import Document, Hit


def is_dated_turn(doc: Document) -> bool:
    """A conversational turn whose text leads with ``[date] speaker:`` (the loaders mark it
    ``evidence="as_stored"``); an artefact that merely starts with ``[`` (OrgMemBench's
    ``[09:00:00] ...`` chat lines) is not one."""
    text = doc.text.lstrip()
    return doc.evidence == "as_stored" and text.startswith("[") and "]" in text


def dated_content(doc: Document) -> str:
    """The document as one message: conversational turns already lead with ``[date] speaker:``."""
    if is_dated_turn(doc):
        return doc.text
    return f"[{format_date(doc.date)}] {doc.author or 'unknown'}: {doc.text}"


def split_stamp(doc: Document) -> tuple[str, str]:
    """A document as (its date as the dataset writes it, ``Speaker: text``).

    A conversational turn leads with ``[date] speaker:`` (the loaders put the dataset's own date
    string in the brackets, e.g. LoCoMo's ``1:56 pm on 8 May, 2023``): the bracket is the date and
    the rest the line. Any other document (an artefact, even one whose text starts with a bracket)
    is dated by its ``date`` and led by its author.
    """
    if is_dated_turn(doc):
        stamp, rest = doc.text.lstrip()[1:].split("]", 1)
        return stamp, rest.lstrip()
    return format_date(doc.date), f"{doc.author or 'unknown'}: {doc.text}"


# How the LoCoMo loader appends a turn's image caption (loaders/locomo.py: turn_document).
CAPTION_MARK = " [shared an image: "


def without_caption(line: str) -> str:
    """The line without the image caption the loader appended: mem0's add.py sends a turn's
    ``Speaker: text`` only (its ``chat['text']``), never the caption."""
    cut = line.rfind(CAPTION_MARK)
    return line[:cut] if cut != -1 and line.endswith("]") else line


def corpus_key(documents: Sequence[Document], settings: dict[str, Any]) -> str:
    return stable_hash({"docs": [[d.doc_id, d.text, str(d.date), d.author] for d in documents], **settings})[:20]


class ProxiedMemory:
    """Base of the adapters: the proxy's lifecycle, the store folder, the write-time call counts."""

    name = "thirdparty"
    kind = "thirdparty"

    def __init__(self, *, client: LLMClient, store_dir: str | Path, encoder: Any, k: int) -> None:
        self.client = client  # the write-time model behind the proxy (its counters: model_clients.call_counts)
        self.model = client.config
        self.store_dir = Path(store_dir).expanduser()
        self.encoder = encoder
        self.k = k
        self.proxy: LLMProxy | None = None
        self.write_counters = CallCounts()  # what the last ingest called (chat through the proxy, embeddings)
        self.ingested = 0
        self.folder: Path | None = None
        self._finalizer: weakref.finalize | None = None

    # ------------------------------------------------------------ proxy lifecycle
    def _start_proxy(self, rewrite: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> LLMProxy:
        if self.proxy is None:
            self.proxy = LLMProxy(self.client, self.encoder, rewrite=rewrite).start()
            self._finalizer = weakref.finalize(self, _shutdown, self.proxy, self.client)
        return self.proxy

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self.proxy = None

    def __enter__(self) -> "ProxiedMemory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fresh_folder(self, documents: Sequence[Document], settings: dict[str, Any]) -> Path:
        """An empty folder for this corpus's store under ``<store_dir>/<kind>/`` (rebuilt each ingest:
        the model calls are cached, so a rebuild costs no request)."""
        folder = self.store_dir / self.kind / corpus_key(documents, settings)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        self.folder = folder
        return folder

    def _check_proxy(self) -> None:
        assert self.proxy is not None
        self.proxy.raise_errors()

    def _counts(self) -> CallCounts:
        return snapshot(self.client, self.encoder)

    def _count_write(self, before: CallCounts) -> None:
        self.write_counters = difference(self._counts(), before)

    @property
    def write_calls_per_document(self) -> float:
        return self.write_counters.chat_calls / self.ingested if self.ingested else 0.0

    def render(self, hits: list[Hit], budget: int | None = None) -> RenderedContext:
        return render(hits, budget)


def _shutdown(proxy: LLMProxy, client: LLMClient) -> None:
    proxy.stop()
    client.close()


def memory_hit(memory_id: str, text: str, when: datetime | None, score: float, doc_ids: Sequence[str], rank: int, leg: str) -> Hit:
    """A derived memory as a hit: its text under its date, carrying the documents it came from."""
    shown = f"[{format_date(when)}] {text}" if when is not None else text
    sources = tuple((doc_id, 0) for doc_id in dict.fromkeys(doc_ids))
    return Hit(memory_id, shown, when, None, float(score), {leg: rank}, False, None, sources)
