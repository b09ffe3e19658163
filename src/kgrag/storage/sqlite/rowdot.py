"""Row-wise dot products without BLAS.

``rows @ query`` for a float32 matrix is a memory-bound sgemv. numpy's
own dot-product loop (``np.vecdot``, numpy >= 2.0; ``einsum`` before)
streams the rows 2.5x faster than OpenBLAS's sgemv on this project's
machines (9.5 vs 24 ms for 200k x 384 rows) with the same float32
accuracy, and never starts BLAS threads, which spin and double the CPU
time when the machine is busy.
"""

from __future__ import annotations

import numpy as np

_VECDOT = getattr(np, "vecdot", None)


def rowdot(rows: np.ndarray, query: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``rows @ query`` for float32 ``rows`` (n x d) and ``query`` (d)."""
    if _VECDOT is not None:
        return _VECDOT(rows, query, out=out)
    return np.einsum("ij,j->i", rows, query, out=out)
