"""An optional pre-screen for large vector namespaces: projected rows, exact re-scoring.

An exact search reads every row (1.5 KB at 384 dims): ~60 ms of CPU per
million rows here. The screen keeps each row projected on the top
:data:`DIMS` right singular vectors of a sample of the namespace (a
quarter of the bytes at 384 dims), scores those, and the matrix re-scores
the best :func:`candidates` rows exactly (~25 ms per million rows).
Returned scores are exact; the set can miss a row whose projection ranks
it below the candidates.

How much it misses depends on the embeddings. Recall@40 against the exact
search, all-MiniLM-L6-v2 on 10.8k HotpotQA and MuSiQue sentences with 200
real questions: 0.997 (64 dims) and 1.000 (96 dims) with only 800
candidates. Hash-like vectors, whose energy is spread over every axis,
fare worse: 0.85-0.92 on average and 0.28 for the worst query on
``scripts/bench_query_scale.py``'s synthetic index. Hence opt-in
(``vector_screen_rows``). Fitting, on the first search of a large
namespace, costs one Gram matrix of a 20k-row sample and one projection
of every row: ~0.6 s CPU per 200k rows with one BLAS thread, several
times that when BLAS threads compete on a busy machine.

Projected rows live in blocks of the matrix's block size and follow its
row numbers: the matrix reports every write and every row move.
"""

from __future__ import annotations

import numpy as np

from kgrag.storage.sqlite.kernels import rowdot, top_positions

DIMS = 96
SAMPLE = 20000
MIN_CANDIDATES = 4096
CANDIDATES_PER_HIT = 64


def candidates(top_k: int) -> int:
    """Rows re-scored exactly for a ``top_k`` search."""
    return max(MIN_CANDIDATES, CANDIDATES_PER_HIT * top_k)


class Screen:
    """Rows projected on ``basis`` (dim x dims), addressed by matrix row number."""

    def __init__(self, basis: np.ndarray, block: int, fitted_rows: int):
        self.basis = np.ascontiguousarray(basis, dtype=np.float32)
        self.block = block
        self.fitted_rows = fitted_rows
        self._blocks: list[np.ndarray] = []

    @classmethod
    def fit(cls, sample: np.ndarray, block: int, rows: int) -> Screen:
        """A screen whose basis spans most of ``sample``'s energy (no centring: dot products)."""
        dims = max(1, min(DIMS, sample.shape[1] // 4))
        sample = np.asarray(sample, np.float32)
        # eigenvectors of the Gram matrix: the right singular vectors, far cheaper than an SVD
        _, vectors = np.linalg.eigh((sample.T @ sample).astype(np.float64))
        return cls(vectors[:, ::-1][:, :dims], block, rows)

    @property
    def nbytes(self) -> int:
        return sum(b.nbytes for b in self._blocks)

    def write(self, positions: np.ndarray, rows: np.ndarray) -> None:
        """Store the projections of ``rows`` at row numbers ``positions``."""
        if not len(positions):
            return
        projected = np.asarray(rows, np.float32) @ self.basis
        blocks, offsets = np.divmod(np.asarray(positions), self.block)
        self._reserve(int(blocks.max()) + 1)
        for b in np.unique(blocks):
            sel = blocks == b
            self._blocks[b][offsets[sel]] = projected[sel]

    def move(self, dst: int, src: int) -> None:
        """Row ``src`` now lives at ``dst`` (the matrix filled a hole)."""
        sb, so = divmod(src, self.block)
        db, do = divmod(dst, self.block)
        self._blocks[db][do] = self._blocks[sb][so]

    def best(self, query: np.ndarray, n: int, count: int) -> np.ndarray:
        """Row numbers (< ``n``) of the ``count`` best projected scores, ascending."""
        q = np.asarray(query, np.float32) @ self.basis
        scores = np.empty(n, np.float32)
        for b, lo in enumerate(range(0, n, self.block)):
            hi = min(n, lo + self.block)
            rowdot(self._blocks[b][: hi - lo], q, out=scores[lo:hi])
        if count >= n:
            return np.arange(n)
        return np.sort(top_positions(scores, count))

    def _reserve(self, blocks: int) -> None:
        while len(self._blocks) < blocks:
            self._blocks.append(np.zeros((self.block, self.basis.shape[1]), np.float32))
