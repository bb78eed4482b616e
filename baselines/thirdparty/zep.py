"""Zep's open-source core, ``graphiti-core``, run locally on an embedded Kuzu graph database.

Each document becomes one Graphiti episode (its name is the document id, its reference time the
document's date, its body the text leading with date and speaker); Graphiti's LLM extracts
entities and facts (edges with ``valid_at``/``invalid_at``) at write time. A question is answered
by Graphiti's default hybrid edge search (BM25 full-text plus cosine, fused by RRF, no
cross-encoder): each fact is a hit whose text carries its valid period and whose sources are the
documents of the episodes it was extracted from.

The LLM is Graphiti's ``OpenAIGenericClient`` (chat completions with a ``json_schema``
response format) and the embedder its ``OpenAIEmbedder``, both pointed at the harness proxy (the
embeddings are the harness encoder's, 384-d); the reranker is never called (a stub refuses).
The Kuzu database lives in ``<cache_dir>/zep/<corpus>/``; Graphiti's telemetry is switched off.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timezone
from typing import Any

from baselines.thirdparty.common import PROXY_API_KEY, ProxiedMemory, dated_content, memory_hit
from memory_protocol import ConfigError
from memplusplus.scope import end_of_day, in_scope
from memory_protocol.documents import Document, Hit
from model_clients.llm_client import LLMClient

_UNDATED = datetime(1970, 1, 1, tzinfo=timezone.utc)
OVERFETCH = 4  # with respect_as_of: facts searched per slot, before the as-of filter  # reference time of an undated first document


def _graphiti() -> dict[str, Any]:
    os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")
    try:
        from graphiti_core import Graphiti
        from graphiti_core.cross_encoder.client import CrossEncoderClient
        from graphiti_core.driver.kuzu_driver import KuzuDriver
        from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
        from graphiti_core.llm_client.config import LLMConfig
        from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
        from graphiti_core.nodes import EpisodeType
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigError('system=zep needs the zep extra: pip install -e ".[zep]"') from exc

    class NoReranker(CrossEncoderClient):
        """The search used here fuses by RRF; a cross-encoder call would be a configuration error."""

        async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
            raise RuntimeError("the zep adapter runs without a cross-encoder reranker")

    return dict(
        Graphiti=Graphiti, KuzuDriver=KuzuDriver, OpenAIEmbedder=OpenAIEmbedder, OpenAIEmbedderConfig=OpenAIEmbedderConfig,
        LLMConfig=LLMConfig, OpenAIGenericClient=OpenAIGenericClient, EpisodeType=EpisodeType, NoReranker=NoReranker,
    )


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


class ZepMemory(ProxiedMemory):
    name = "zep"
    kind = "zep"

    def __init__(
        self,
        *,
        k: int,
        client: LLMClient,
        store_dir: str,
        encoder: Any,
        structured_output: str = "json_schema",
        respect_as_of: bool = False,
    ) -> None:
        super().__init__(client=client, store_dir=store_dir, encoder=encoder, k=k)
        if structured_output not in ("json_schema", "json_object"):
            raise ConfigError("system.structured_output must be json_schema or json_object")
        self.structured_output = structured_output
        self.respect_as_of = respect_as_of
        self.episode_docs: dict[str, str] = {}  # episode uuid -> document id
        self.doc_dates: dict[str, datetime | None] = {}
        self._graph: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _run(self, coroutine: Any) -> Any:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coroutine)

    def close(self) -> None:
        """Close Kuzu explicitly, connections before the database (graphiti's KuzuDriver.close leaves
        both to the garbage collector, whose order is not guaranteed), then the proxy and the loop."""
        driver = getattr(self._graph, "driver", None)
        if driver is not None:
            driver.client.close()
            driver.db.close()
            self._graph = None
        super().close()
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    # ------------------------------------------------------------------ write
    def _open(self, documents: Sequence[Document]) -> Any:
        g = _graphiti()
        proxy = self._start_proxy()
        folder = self._fresh_folder(documents, {"model": self.model.model, "structured_output": self.structured_output})
        config = g["LLMConfig"](api_key=PROXY_API_KEY, base_url=proxy.base_url, model=self.model.model,
                                small_model=self.model.model, temperature=self.model.temperature)
        llm = g["OpenAIGenericClient"](config, structured_output_mode=self.structured_output)
        embedder = g["OpenAIEmbedder"](g["OpenAIEmbedderConfig"](
            api_key=PROXY_API_KEY, base_url=proxy.base_url, embedding_model="harness-encoder",
            embedding_dim=int(self.encoder.dimension)))
        driver = g["KuzuDriver"](db=str(folder / "graph.kuzu"))
        graph = g["Graphiti"](graph_driver=driver, llm_client=llm, embedder=embedder, cross_encoder=g["NoReranker"](),
                              max_coroutines=self.model.concurrency)
        # KuzuDriver.build_indices_and_constraints is a no-op; its maintenance ops create the FTS indices.
        self._run(driver.graph_ops.build_indices_and_constraints(driver))
        return graph, g["EpisodeType"]

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        documents = list(documents)
        docs = [doc for doc in documents if doc.text.strip()]
        self._graph, episode_type = self._open(docs)
        assert self.proxy is not None
        before = self._counts()
        last = _UNDATED
        for doc in docs:
            when = _utc(doc.date) if doc.date is not None else last
            last = when
            result = self._run(self._graph.add_episode(
                name=doc.doc_id, episode_body=dated_content(doc), source_description="conversation turn or document",
                reference_time=when, source=episode_type.message,
            ))
            self._check_proxy()
            self.episode_docs[str(result.episode.uuid)] = doc.doc_id
            self.doc_dates[doc.doc_id] = doc.date
        self.ingested += len(docs)
        self._count_write(before)
        kept = {doc.doc_id for doc in docs}
        return [doc.doc_id if doc.doc_id in kept else None for doc in documents]

    # ------------------------------------------------------------------ read
    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        """Graphiti's hybrid edge search; each fact shows its valid period.

        With ``respect_as_of`` a fact is kept only when one of the documents it was extracted from is
        dated up to the end of the as-of day (Graphiti's own filters see ``valid_at``, the model's
        guess of when a fact became true, and ``created_at``, the wall-clock time of ingest: neither
        is when the fact was learnt); ``OVERFETCH`` times k facts are searched so k can remain. A
        kept fact's text and valid period are as the whole ingest left them (a later document may
        have set ``invalid_at``). Otherwise (default, as for the other baselines) the date is ignored.
        """
        if self._graph is None:
            return []
        k = k or self.k
        theta = end_of_day(as_of) if (self.respect_as_of and as_of is not None) else None
        edges = self._run(self._graph.search(query, num_results=k * OVERFETCH if theta else k))
        self._check_proxy()
        hits = []
        for edge in edges:
            doc_ids = [self.episode_docs[e] for e in (edge.episodes or []) if e in self.episode_docs]
            if theta is not None and not any(in_scope(self.doc_dates.get(d), theta) for d in doc_ids):
                continue
            rank = len(hits)
            period = f"valid from {_show(edge.valid_at)} to {_show(edge.invalid_at, 'present')}"
            when = edge.valid_at.replace(tzinfo=None) if edge.valid_at is not None else None
            hits.append(memory_hit(f"zep:{edge.uuid}", f"{edge.fact} ({period})", when, float(len(edges) - rank),
                                   doc_ids, rank, "zep"))
        return hits[:k]


def _show(value: datetime | None, missing: str = "unknown") -> str:
    return missing if value is None else value.strftime("%Y-%m-%d %H:%M")
