"""Opt-in approximate vector leg for very large stores (faiss HNSW or IVF, inner product); exact
search (``ann="none"``) is the paper's and the default.

Used when at least ``ann_min_rows`` rows are in scope (a graph filtered to a few rows finds them
badly). The as-of scope is an ID bitmap inside the search; HNSW widens ``efSearch`` by the inverse of
the in-scope share (at most 16x); found rows are rescored exactly, and too few found means an exact
scan. The index fills lazily at each search (IVF trains on the rows present at its first search)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from memplusplus.settings import MemPPConfig

_EF_WIDENING_CAP = 16

ANN_FIELDS: tuple[str, ...] = (
    "ann", "ann_min_rows", "ann_m", "ann_ef_construction", "ann_ef_search", "ann_nlist", "ann_nprobe",
)


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        raise RuntimeError("ann=hnsw/ivf needs faiss: pip install 'mempp-harness[ann]' (faiss-cpu)") from exc
    return faiss


class AnnIndex:
    """A faiss index over a store's vector column, kept in step with it at each search."""

    def __init__(self, settings: MemPPConfig, dimension: int) -> None:
        if settings.ann == "none":
            raise ValueError("AnnIndex needs ann=hnsw or ann=ivf")
        self.settings = settings
        self.dimension = dimension
        self.faiss = _faiss()
        self.index: Any = None
        if settings.ann == "hnsw":
            self.index = self.faiss.IndexHNSWFlat(dimension, settings.ann_m, self.faiss.METRIC_INNER_PRODUCT)
            self.index.hnsw.efConstruction = settings.ann_ef_construction

    @property
    def size(self) -> int:
        return 0 if self.index is None else int(self.index.ntotal)

    def sync(self, vectors: np.ndarray) -> None:
        """Add the rows not yet indexed (training IVF on the rows present, the first time)."""
        if self.index is None:
            self.index = self._trained_ivf(vectors)
        if len(vectors) > self.size:
            self.index.add(np.ascontiguousarray(vectors[self.size :], dtype=np.float32))

    def _trained_ivf(self, vectors: np.ndarray) -> Any:
        faiss = self.faiss
        nlist = self.settings.ann_nlist or round(math.sqrt(len(vectors)))
        nlist = max(1, min(nlist, len(vectors) // 39))  # faiss wants ~39 training rows a centroid
        quantizer = faiss.IndexFlatIP(self.dimension)
        index = faiss.IndexIVFFlat(quantizer, self.dimension, nlist, faiss.METRIC_INNER_PRODUCT)
        index.train(np.ascontiguousarray(vectors, dtype=np.float32))
        self._quantizer = quantizer  # the index points at it; keep it alive
        return index

    def search(self, vectors: np.ndarray, query: np.ndarray, scope: np.ndarray, in_scope: int, limit: int) -> np.ndarray | None:
        """The in-scope row seqs the index finds for ``query`` (at most ``limit``, unordered), or
        None when it found fewer than ``min(limit, in_scope)`` (the caller then scans exactly)."""
        self.sync(vectors)
        faiss = self.faiss
        bits = np.packbits(scope, bitorder="little")
        selector = faiss.IDSelectorBitmap(len(scope), faiss.swig_ptr(bits))
        if self.settings.ann == "hnsw":
            params = faiss.SearchParametersHNSW()
            widening = min(len(scope) / max(in_scope, 1), _EF_WIDENING_CAP)
            params.efSearch = int(math.ceil(max(self.settings.ann_ef_search, limit) * widening))
        else:
            params = faiss.SearchParametersIVF()
            params.nprobe = self.settings.ann_nprobe
        params.sel = selector
        query32 = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        _, labels = self.index.search(query32, limit, params=params)
        del selector, bits  # the selector reads ``bits`` until the search returns
        found = labels[0][labels[0] >= 0]
        if found.size < min(limit, in_scope):
            return None
        return found.astype(np.int64)


def make_index(settings: MemPPConfig, dimension: int) -> AnnIndex | None:
    """The ANN index the settings ask for, or None for exact search (the default)."""
    return None if settings.ann == "none" else AnnIndex(settings, dimension)
