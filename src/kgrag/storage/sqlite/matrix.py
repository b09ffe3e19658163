"""An in-memory matrix of unit vectors for exact cosine search.

Rows live in fixed-size float32 blocks (:data:`BLOCK` rows each; the first
block starts small and doubles until it reaches that size), so growing
never copies more than one block and a million 384-dim vectors never need
a second 1.5 GB buffer. An id -> row map makes updates O(1); deleting
moves the last row into the hole (swap-with-last), so rows stay dense.

A search is one row-wise dot product per block (numpy's SIMD loop, 2.5x
faster than BLAS here), a threshold mask, and a sampled partition for the
top k (see :mod:`~kgrag.storage.sqlite.kernels`). With
``screen_rows`` set, a matrix of at least that many rows first narrows the
search with a :class:`~kgrag.storage.sqlite.screen.Screen` (approximate,
opt-in; built on the first such search and refitted when the matrix has
doubled since) and scores only the screened rows exactly.

The class is not thread-safe; the SQLite backend only touches it from its
single worker thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from kgrag.storage.sqlite import screen as _screen
from kgrag.storage.sqlite.kernels import rowdot, top_positions

BLOCK = 131072  # rows; 192 MiB at 384 dims
_FIRST = 1024


class MatrixIndex:
    """Dense rows of unit float32 vectors, addressed by string id."""

    def __init__(self, dim: int, screen_rows: int = 0):
        self.dim = dim
        self.screen_rows = screen_rows  # 0: always exact
        self._blocks: list[np.ndarray] = []
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._screen: _screen.Screen | None = None

    @classmethod
    def from_batches(
        cls,
        dim: int,
        batches: Iterable[tuple[list[str], np.ndarray]],
        expected: int = 0,
        screen_rows: int = 0,
    ) -> MatrixIndex:
        """Build from ``(ids, rows)`` batches of distinct ids (rows unit-norm).

        ``expected`` (the row count, if known) sizes the blocks up front.
        """
        index = cls(dim, screen_rows)
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
        """Bytes held by the row blocks (and the screen's, if built)."""
        screen = self._screen.nbytes if self._screen is not None else 0
        return sum(block.nbytes for block in self._blocks) + screen

    # -- changes -------------------------------------------------------------

    def upsert(self, ids: list[str], rows: np.ndarray) -> None:
        """Set the rows of ``ids`` (distinct) to ``rows``."""
        fresh_ids, fresh_rows, updated, updated_rows = [], [], [], []
        for i, id_ in enumerate(ids):
            row = self._pos.get(id_)
            if row is None:
                fresh_ids.append(id_)
                fresh_rows.append(i)
            else:
                block, offset = divmod(row, BLOCK)
                self._blocks[block][offset] = rows[i]
                updated.append(row)
                updated_rows.append(i)
        if self._screen is not None:
            self._screen.write(np.array(updated, np.int64), rows[updated_rows])
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
                if self._screen is not None:
                    self._screen.move(row, last)

    def _append(self, ids: list[str], rows: np.ndarray) -> None:
        start = len(self._ids)
        self._reserve(start + len(ids))
        for block, lo, hi, src in self._spans(start, start + len(ids)):
            self._blocks[block][lo:hi] = rows[src : src + hi - lo]
        self._pos.update(zip(ids, range(start, start + len(ids)), strict=False))
        self._ids.extend(ids)
        if self._screen is not None:
            self._screen.write(np.arange(start, start + len(ids)), rows)

    def _reserve(self, total: int) -> None:
        if total <= 0:
            return
        if not self._blocks:
            self._blocks.append(np.empty((min(BLOCK, _grow(_FIRST, total)), self.dim), np.float32))
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
        found: np.ndarray = self._blocks[block][offset]
        return found

    def _set(self, row: int, value: np.ndarray) -> None:
        block, offset = divmod(row, BLOCK)
        self._blocks[block][offset] = value

    # -- search ----------------------------------------------------------------

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine similarity of the unit ``query`` with every row."""
        n = len(self._ids)
        query = np.asarray(query, np.float32)
        out = np.empty(n, np.float32)
        for block, lo, hi, src in self._spans(0, n):
            rowdot(self._blocks[block][lo:hi], query, out=out[src : src + hi - lo])
        return out

    def search(
        self, query: np.ndarray, top_k: int, threshold: float | None = None
    ) -> list[tuple[str, float]]:
        """The ``top_k`` best (id, score) pairs, best first, above ``threshold``."""
        if top_k <= 0 or not self._ids:
            return []
        rows, scores = self._scored(np.asarray(query, np.float32), top_k)
        keep = None if threshold is None else np.flatnonzero(scores >= threshold)
        cand = scores if keep is None else scores[keep]
        k = min(top_k, len(cand))
        if k == 0:
            return []
        top = top_positions(cand, k)
        top = top[np.argsort(-cand[top], kind="stable")]
        picked = top if keep is None else keep[top]
        best = np.clip(scores[picked], -1.0, 1.0)  # rounding can overshoot 1
        if rows is not None:
            picked = rows[picked]
        return [(self._ids[r], float(s)) for r, s in zip(picked, best, strict=False)]

    def _scored(self, query: np.ndarray, top_k: int) -> tuple[np.ndarray | None, np.ndarray]:
        """(row numbers, exact scores): every row (``None``) or the screened ones."""
        n = len(self._ids)
        count = _screen.candidates(top_k)
        if not self.screen_rows or n < self.screen_rows or count >= n:
            return None, self.scores(query)
        rows = self._fitted_screen().best(query, n, count)
        blocks = rows // BLOCK
        out = np.empty(len(rows), np.float32)
        for block in np.unique(blocks):
            sel = np.flatnonzero(blocks == block)
            out[sel] = rowdot(self._blocks[block][rows[sel] - block * BLOCK], query)
        return rows, out

    def _fitted_screen(self) -> _screen.Screen:
        n = len(self._ids)
        if self._screen is None or n > 2 * self._screen.fitted_rows:
            picks = np.sort(
                np.random.default_rng(0).choice(n, min(n, _screen.SAMPLE), replace=False)
            )
            sample = np.stack([self._get(int(r)) for r in picks])
            self._screen = _screen.Screen.fit(sample, BLOCK, n)
            for block, lo, hi, src in self._spans(0, n):
                self._screen.write(np.arange(src, src + hi - lo), self._blocks[block][lo:hi])
        return self._screen


def _grow(current: int, needed: int) -> int:
    """The next power-of-two multiple of ``current`` that holds ``needed``."""
    size = max(current, 1)
    while size < needed:
        size *= 2
    return size
