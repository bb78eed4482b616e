"""Zep's open-source core, ``graphiti-core``, on an embedded Kuzu database, run as mem0's LoCoMo
evaluation runs Zep (``evaluation/src/zep/{add,search}.py``).

Write: each document is one message episode named by its id, body ``Speaker: text``, reference
time its date; Graphiti's LLM extracts entities (with summaries) and facts (edges with ``valid_at``
/ ``invalid_at``), whose states after each episode are noted (``Known``) for the as-of filter.
Read: hybrid searches (BM25 plus cosine, fused by RRF) for ``fact_limit`` facts and
``entity_limit`` entities (their 20 each); the cosine leg drops candidates below ``cosine_floor``
(graphiti's 0.6 suits OpenAI embeddings, not the harness encoder: configs/system/zep.yaml).
LLM (``OpenAIGenericClient``, json_schema) and embedder point at the harness proxy; no reranker
(their edge search uses Zep cloud's cross-encoder, with no local counterpart). Telemetry is off.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

from baselines.thirdparty.common import ProxiedMemory, split_stamp
from baselines.thirdparty.context import ZEP_ENTITY_LEG, ZEP_FACT_LEG, entity_line, fact_line
from memory_protocol import ConfigError, Document, Hit
from memplusplus.ranking import end_of_day, in_scope
from model_clients.llm_client import LLMClient

_UNDATED = datetime(1970, 1, 1, tzinfo=timezone.utc)  # reference time of an undated first document
OVERFETCH = 4  # with respect_as_of: results searched per slot, before the as-of filter
NO_START = "date unknown"  # a fact's missing start, as their layout shows it
NO_END = "present"  # a fact's missing end


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def _naive(value: datetime | None) -> datetime | None:
    return None if value is None else _utc(value).replace(tzinfo=None)


@dataclass(frozen=True)
class Known:
    """A fact (or an entity's summary and name) as it stood after the episode dated ``when``."""

    when: datetime | None
    text: str
    name: str = ""
    valid_at: datetime | None = None
    invalid_at: datetime | None = None


def known_by(history: Sequence[Known], theta: datetime) -> Known | None:
    """The last state noted from a document dated up to ``theta`` (None: not yet known)."""
    found = [state for state in history if in_scope(state.when, theta)]
    return found[-1] if found else None


def shown_date(value: datetime | None, missing: str, theta: datetime | None) -> str:
    """A fact's bound as their layout prints it, or ``missing`` (also for a bound after ``theta``)."""
    if value is None or (theta is not None and _naive(value) > theta):
        return missing
    return str(_utc(value))


class ZepMemory(ProxiedMemory):
    name = "zep"
    kind = "zep"

    def __init__(self, *, k: int, client: LLMClient, store_dir: str, encoder: Any, structured_output: str = "json_schema",
                 fact_limit: int = 20, entity_limit: int = 20, cosine_floor: float = 0.25, respect_as_of: bool = False) -> None:
        super().__init__(client=client, store_dir=store_dir, encoder=encoder, k=k)
        if structured_output not in ("json_schema", "json_object"):
            raise ConfigError("system.structured_output must be json_schema or json_object")
        if fact_limit < 0 or entity_limit < 0:
            raise ConfigError("system.fact_limit and system.entity_limit must be >= 0")
        if not -1.0 <= cosine_floor <= 1.0:
            raise ConfigError("system.cosine_floor must lie in [-1, 1]")
        self.structured_output = structured_output
        self.fact_limit = fact_limit
        self.entity_limit = entity_limit
        self.cosine_floor = cosine_floor
        self.respect_as_of = respect_as_of
        self.episode_docs: dict[str, str] = {}  # episode uuid -> document id
        self.doc_dates: dict[str, datetime | None] = {}
        self.fact_history: dict[str, list[Known]] = {}  # edge uuid -> its states, in ingest order
        self.entity_history: dict[str, list[Known]] = {}  # node uuid -> its states
        self._graph: Any = None
        self._message: Any = None  # graphiti's EpisodeType.message
        self._search_config: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _run(self, coroutine: Any) -> Any:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coroutine)

    def close(self) -> None:
        """Close Kuzu's connection before its database (graphiti leaves both to the garbage collector)."""
        driver = getattr(self._graph, "driver", None)
        if driver is not None:
            driver.client.close()
            driver.db.close()
            self._graph = None
        super().close()
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    def _open(self, documents: Sequence[Document]) -> None:
        os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")
        try:
            from graphiti_core import Graphiti
            from graphiti_core.cross_encoder.client import CrossEncoderClient
            from graphiti_core.driver.kuzu_driver import KuzuDriver
            from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
            from graphiti_core.llm_client.config import LLMConfig
            from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
            from graphiti_core.nodes import EpisodeType
            from graphiti_core.search import search_config
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigError('system=zep needs the zep extra: pip install -e ".[zep]"') from exc

        class NoReranker(CrossEncoderClient):
            """The search used here fuses by RRF; a cross-encoder call would be a configuration error."""

            async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
                raise RuntimeError("the zep adapter runs without a cross-encoder reranker")

        self._search_config, self._message = search_config, EpisodeType.message
        proxy = self._start_proxy()
        folder = self._fresh_folder(documents, {"model": self.model.model, "structured_output": self.structured_output,
                                                "body": "speaker: text"})
        config = LLMConfig(api_key=proxy.token, base_url=proxy.base_url, model=self.model.model,
                           small_model=self.model.model, temperature=self.model.temperature)
        llm = OpenAIGenericClient(config, structured_output_mode=self.structured_output)
        embedder = OpenAIEmbedder(OpenAIEmbedderConfig(
            api_key=proxy.token, base_url=proxy.base_url, embedding_model="harness-encoder",
            embedding_dim=int(self.encoder.dimension)))
        driver = KuzuDriver(db=str(folder / "graph.kuzu"))
        self._graph = Graphiti(graph_driver=driver, llm_client=llm, embedder=embedder, cross_encoder=NoReranker(),
                               max_coroutines=self.model.concurrency)
        # KuzuDriver.build_indices_and_constraints is a no-op; its maintenance ops create the FTS indices.
        self._run(driver.graph_ops.build_indices_and_constraints(driver))

    def _write(self, docs: Sequence[Document]) -> None:
        last = _UNDATED
        for doc in docs:
            when = _utc(doc.date) if doc.date is not None else last
            last = when
            result = self._run(self._graph.add_episode(
                name=doc.doc_id, episode_body=split_stamp(doc)[1], source_description="conversation turn or document",
                reference_time=when, source=self._message,
            ))
            self._check_proxy()
            self.episode_docs[str(result.episode.uuid)] = doc.doc_id
            self.doc_dates[doc.doc_id] = doc.date
            self._note(result, doc.date)

    def _note(self, result: Any, when: datetime | None) -> None:
        for edge in result.edges:
            self.fact_history.setdefault(str(edge.uuid), []).append(
                Known(when, edge.fact, valid_at=edge.valid_at, invalid_at=edge.invalid_at))
        for node in result.nodes:
            self.entity_history.setdefault(str(node.uuid), []).append(Known(when, node.summary or "", node.name))

    def _search(self, query: str, scope: str, limit: int) -> list[Any]:
        sc = self._search_config
        if scope == "edges":
            edge = sc.EdgeSearchConfig(search_methods=[sc.EdgeSearchMethod.bm25, sc.EdgeSearchMethod.cosine_similarity],
                                       reranker=sc.EdgeReranker.rrf, sim_min_score=self.cosine_floor)
            return self._run(self._graph.search_(query, config=sc.SearchConfig(edge_config=edge, limit=limit))).edges
        node = sc.NodeSearchConfig(search_methods=[sc.NodeSearchMethod.bm25, sc.NodeSearchMethod.cosine_similarity],
                                   reranker=sc.NodeReranker.rrf, sim_min_score=self.cosine_floor)
        return self._run(self._graph.search_(query, config=sc.SearchConfig(node_config=node, limit=limit))).nodes

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        """Facts (leg ``zep:fact``) then entities (``zep:entity``); a ``k`` above the system's own widens
        the fact search. ``respect_as_of`` shows each as it stood after the last document up to the
        as-of day, with no later date and sources up to that day; else as the whole ingest left it."""
        if self._graph is None:
            return []
        theta = end_of_day(as_of) if (self.respect_as_of and as_of is not None) else None
        widen = max((k or self.k) - self.k, 0)
        over = OVERFETCH if theta is not None else 1
        hits: list[Hit] = []
        if self.fact_limit + widen:
            hits += self._facts(self._search(query, "edges", (self.fact_limit + widen) * over), theta,
                                self.fact_limit + widen)
        if self.entity_limit:
            hits += self._entities(self._search(query, "nodes", self.entity_limit * over), theta)
        self._check_proxy()
        return hits

    def _facts(self, edges: list[Any], theta: datetime | None, limit: int) -> list[Hit]:
        hits: list[Hit] = []
        for edge in edges:
            doc_ids = [self.episode_docs[e] for e in (edge.episodes or []) if e in self.episode_docs]
            state = Known(None, edge.fact, valid_at=edge.valid_at, invalid_at=edge.invalid_at)
            if theta is not None:
                doc_ids = [d for d in doc_ids if in_scope(self.doc_dates.get(d), theta)]
                state = known_by(self.fact_history.get(str(edge.uuid), []), theta)
                if state is None or not doc_ids:
                    continue
            line = fact_line(state.text, shown_date(state.valid_at, NO_START, theta), shown_date(state.invalid_at, NO_END, theta))
            rank = len(hits)
            hits.append(Hit(f"zep:{edge.uuid}", line, _naive(state.valid_at), None, float(len(edges) - rank),
                            {ZEP_FACT_LEG: rank}, False, None, tuple((d, 0) for d in dict.fromkeys(doc_ids))))
        return hits[:limit]

    def _entities(self, nodes: list[Any], theta: datetime | None) -> list[Hit]:
        """Entities carry no source document (a summary draws on every turn naming the entity)."""
        hits: list[Hit] = []
        for node in nodes:
            name, summary = node.name, node.summary or ""
            if theta is not None:
                state = known_by(self.entity_history.get(str(node.uuid), []), theta)
                if state is None:
                    continue
                name, summary = state.name, state.text
            rank = len(hits)
            entity_id = f"zep:entity:{node.uuid}"
            hits.append(Hit(entity_id, entity_line(name, summary), None, None, float(len(nodes) - rank),
                            {ZEP_ENTITY_LEG: rank}, False, None, ((entity_id, 0),)))
        return hits[: self.entity_limit]
