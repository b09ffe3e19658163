"""Operations on indexed documents and the index as a whole.

Each module does one job: ``documents`` (find, delete, disable, list),
``export`` (the canonical JSON export), ``check`` (integrity check and
repair of the derived stores), ``rebuild`` (recompute the canonical graph
from the stored extractions). Indexing itself lives in ``kgrag.indexing``.
"""
