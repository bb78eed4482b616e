"""What the Mem0 and Zep adapters share: the write-time model, the proxy they talk to, their folder.

An adapter holds one episode's memory. The library is pointed at an ``LLMProxy`` in front of the
write-time ``LLMClient`` and the harness encoder, with the proxy's per-run token as api_key, so
every call is cached, counted and replayable; the proxy stops on ``close`` or garbage collection.
The library's own store lives under ``store_dir`` (the run's cache folder).
"""

from __future__ import annotations

import shutil
import weakref
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from baselines.documents import ingest_ids
from memplusplus.evidence import RenderedContext, format_date, render
from model_clients.call_counts import CallCounts, difference, snapshot
from model_clients.kvstore import stable_hash
from model_clients.llm_client import LLMClient
from model_clients.proxy import LLMProxy
from memory_protocol import Document, Hit


def is_dated_turn(doc: Document) -> bool:
    """A turn leading with ``[date] speaker:`` (``evidence="as_stored"``), not an artefact that merely
    starts with ``[`` (OrgMemBench's ``[09:00:00] ...`` chat lines)."""
    text = doc.text.lstrip()
    return doc.evidence == "as_stored" and text.startswith("[") and "]" in text


def split_stamp(doc: Document) -> tuple[str, str]:
    """(the date as the dataset writes it, ``Speaker: text``): a turn's bracket holds the dataset's
    own date string (LoCoMo's ``1:56 pm on 8 May, 2023``); other documents use ``date`` and author."""
    if is_dated_turn(doc):
        stamp, rest = doc.text.lstrip()[1:].split("]", 1)
        return stamp, rest.lstrip()
    return format_date(doc.date), f"{doc.author or 'unknown'}: {doc.text}"


# How the LoCoMo loader appends a turn's image caption (loaders/locomo.py: turn_document).
CAPTION_MARK = " [shared an image: "


def without_caption(line: str) -> str:
    """The line without the loader's image caption (mem0's add.py sends ``chat['text']`` only)."""
    cut = line.rfind(CAPTION_MARK)
    return line[:cut] if cut != -1 and line.endswith("]") else line


def corpus_key(documents: Sequence[Document], settings: dict[str, Any]) -> str:
    return stable_hash({"docs": [[d.doc_id, d.text, str(d.date), d.author] for d in documents], **settings})[:20]


class ProxiedMemory:

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
        self.folder: Path | None = None
        self._finalizer: weakref.finalize | None = None

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

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        """Open a fresh store for the non-empty documents (``_open``), then write them (``_write``),
        counting the write-time calls."""
        requested = list(documents)
        docs = [doc for doc in requested if doc.text.strip()]
        self._open(docs)
        assert self.proxy is not None
        before = snapshot(self.client, self.encoder)
        self._write(docs)
        self.write_counters = difference(snapshot(self.client, self.encoder), before)
        return ingest_ids(docs, requested)

    def _open(self, documents: Sequence[Document]) -> None:
        raise NotImplementedError

    def _write(self, documents: Sequence[Document]) -> None:
        raise NotImplementedError

    def _fresh_folder(self, documents: Sequence[Document], settings: dict[str, Any]) -> Path:
        """An empty folder for this corpus's store (rebuilt each ingest: the calls are cached)."""
        folder = self.store_dir / self.kind / corpus_key(documents, settings)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        self.folder = folder
        return folder

    def _check_proxy(self) -> None:
        assert self.proxy is not None
        self.proxy.raise_errors()

    def render(self, hits: list[Hit], budget: int | None = None) -> RenderedContext:
        return render(hits, budget)


def _shutdown(proxy: LLMProxy, client: LLMClient) -> None:
    proxy.stop()
    client.close()

