"""An in-memory matrix of unit vectors for exact cosine search.

Rows live in fixed-size float32 blocks (:data:`BLOCK` rows each; the first
block starts small and doubles until it reaches that size), so growing
never copies more than one block and a million 384-dim vectors never need
a second 1.5 GB buffer. An id -> row map makes updates O(1); deleting
moves the last row into the hole (swap-with-last), so rows stay dense.

A search is one matrix-vector product per block (BLAS, memory bound),
a threshold mask, and :func:`numpy.argpartition` for the top k.

The class is not thread-safe; the SQLite backend only touches it from its
single worker thread.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

BLOCK = 131072  # rows; 192 MiB at 384 dims (fewer BLAS calls than 64 Ki rows, ~15 % faster)
_FIRST = 1024


class MatrixIndex:
    """Dense rows of unit float32 vectors, addressed by string id."""

    def __init__(self, dim: int):
        self.dim = dim
        self._blocks: list[np.ndarray] = []
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}

    @classmethod
    def from_batches(cls, dim: int, batches: Iterable[tuple[list[str], np.ndarray]],
                     expected: int = 0) -> "MatrixIndex":
        """Build from ``(ids, rows)`` batches of distinct ids (rows unit-norm).

        ``expected`` (the row count, if known) sizes the blocks up front.
        """
        index = cls(dim)
        index._reserve(expected)
        for ids, rows in batches:
            index._append(ids, rows)
        return index

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, id_: str) -> bool:
        return id_ in self._pos

    @property
    def nbytes(self) -> int:
        """Bytes held by the row blocks."""
        return sum(block.nbytes for block in self._blocks)

    # -- changes -------------------------------------------------------------

    def upsert(self, ids: list[str], rows: np.ndarray) -> None:
        """Set the rows of ``ids`` (distinct) to ``rows``."""
        fresh_ids, fresh_rows = [], []
        for i, id_ in enumerate(ids):
            row = self._pos.get(id_)
            if row is None:
                fresh_ids.append(id_)
                fresh_rows.append(i)
            else:
                block, offset = divmod(row, BLOCK)
                self._blocks[block][offset] = rows[i]
        if fresh_ids:
            self._append(fresh_ids, rows[fresh_rows])

    def delete(self, ids: Iterable[str]) -> None:
        """Remove ``ids`` (unknown ids are ignored)."""
        for id_ in ids:
            row = self._pos.pop(id_, None)
            if row is None:
                continue
            last = len(self._ids) - 1
            last_id = self._ids.pop()
            if row != last:
                self._ids[row] = last_id
                self._pos[last_id] = row
                self._set(row, self._get(last))

    def _append(self, ids: list[str], rows: np.ndarray) -> None:
        start = len(self._ids)
        self._reserve(start + len(ids))
        for block, lo, hi, src in self._spans(start, start + len(ids)):
            self._blocks[block][lo:hi] = rows[src:src + hi - lo]
        self._pos.update(zip(ids, range(start, start + len(ids))))
        self._ids.extend(ids)

    def _reserve(self, total: int) -> None:
        if total <= 0:
            return
        if not self._blocks:
            self._blocks.append(np.empty((min(BLOCK, _grow(_FIRST, total)), self.dim),
                                         np.float32))
        first = self._blocks[0]
        if len(self._blocks) == 1 and len(first) < min(total, BLOCK):
            grown = np.empty((min(BLOCK, _grow(len(first), total)), self.dim), np.float32)
            grown[: len(self._ids)] = first[: len(self._ids)]
            self._blocks[0] = grown
        while len(self._blocks) * BLOCK < total and len(self._blocks[-1]) == BLOCK:
            self._blocks.append(np.empty((BLOCK, self.dim), np.float32))

    def _spans(self, start: int, stop: int) -> Iterator[tuple[int, int, int, int]]:
        """(block, lo, hi, source offset) pieces covering rows [start, stop)."""
        row = start
        while row < stop:
            block, lo = divmod(row, BLOCK)
            hi = min(BLOCK, lo + stop - row)
            yield block, lo, hi, row - start
            row += hi - lo

    def _get(self, row: int) -> np.ndarray:
        block, offset = divmod(row, BLOCK)
        return self._blocks[block][offset]

    def _set(self, row: int, value: np.ndarray) -> None:
        block, offset = divmod(row, BLOCK)
        self._blocks[block][offset] = value

    # -- search ----------------------------------------------------------------

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine similarity of the unit ``query`` with every row."""
        n = len(self._ids)
        out = np.empty(n, np.float32)
        for block, lo, hi, src in self._spans(0, n):
            np.matmul(self._blocks[block][lo:hi], query, out=out[src:src + hi - lo])
        return out

    def search(self, query: np.ndarray, top_k: int,
               threshold: float | None = None) -> list[tuple[str, float]]:
        """The ``top_k`` best (id, score) pairs, best first, above ``threshold``."""
        if top_k <= 0 or not self._ids:
            return []
        scores = self.scores(query)
        rows = None if threshold is None else np.flatnonzero(scores >= threshold)
        cand = scores if rows is None else scores[rows]
        k = min(top_k, len(cand))
        if k == 0:
            return []
        top = np.argpartition(cand, len(cand) - k)[len(cand) - k:]
        top = top[np.argsort(-cand[top], kind="stable")]
        rows = top if rows is None else rows[top]
        best = np.clip(scores[rows], -1.0, 1.0)  # rounding can overshoot 1
        return [(self._ids[r], float(s)) for r, s in zip(rows, best)]


def _grow(current: int, needed: int) -> int:
    """The next power-of-two multiple of ``current`` that holds ``needed``."""
    size = max(current, 1)
    while size < needed:
        size *= 2
    return size
