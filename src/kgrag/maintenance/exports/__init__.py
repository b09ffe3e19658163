"""``kgrag export`` in every format, each a view of the canonical JSON export.

``json`` is :func:`kgrag.maintenance.export.export_graph` as it is; ``csv``
(a folder of tables), ``graphml``, ``md`` and ``parquet`` (a folder of
GraphRAG-shaped tables) are derived from that same data, so every format
holds the same entities and relations. Only Parquet adds the documents'
texts, which GraphRAG's tables carry; only JSON keeps the chunks' stored
extractions (``facts``), which ``kgrag import --from kgrag`` reads. Files
are written beside their target and renamed into place: an export that
fails leaves the old file whole. See docs/export.md.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import TYPE_CHECKING

from kgrag.errors import ConfigError
from kgrag.maintenance.export import dumps, export_graph
from kgrag.maintenance.export_records import ExportData
from kgrag.maintenance.exports.csv_tables import write_csv
from kgrag.maintenance.exports.graphml import write_graphml
from kgrag.maintenance.exports.markdown import write_markdown
from kgrag.maintenance.exports.parquet import Texts, require_pyarrow, write_parquet
from kgrag.maintenance.exports.tables import replacing
from kgrag.storage.layout import CHUNKS, FULL_DOCS

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

FORMATS = ("json", "csv", "graphml", "md", "parquet")
FOLDER_FORMATS = frozenset({"csv", "parquet"})  # written as a folder of tables
_WRITERS = {"graphml": write_graphml, "md": write_markdown}


def check_format(fmt: str) -> None:
    """A ConfigError unless ``fmt`` is a format this install can write."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; known formats: {', '.join(FORMATS)}")
    if fmt == "parquet":
        require_pyarrow()


def render(data: ExportData, fmt: str) -> str:
    """The export ``data`` as the text of a one-file format (json, graphml, md)."""
    if fmt in FOLDER_FORMATS or fmt not in FORMATS:
        raise ConfigError(f"export format {fmt!r} is not one text file")
    if fmt == "json":
        return dumps(data)
    out = io.StringIO()
    _WRITERS[fmt](data, out)
    return out.getvalue()


def write(data: ExportData, path: Path, fmt: str, texts: Texts | None = None) -> list[Path]:
    """Write ``data`` to ``path`` (a file, or a folder for csv and parquet); the files."""
    check_format(fmt)
    if fmt == "csv":
        return write_csv(data, path)
    if fmt == "parquet":
        return write_parquet(data, path, texts or Texts())
    with replacing(path) as out:
        if fmt == "json":
            out.write(dumps(data))
        else:
            _WRITERS[fmt](data, out)
    return [path]


async def texts_of(storage: Storage, data: ExportData) -> Texts:
    """The stored texts of the export's documents, and of any chunk it has without one."""
    chunk_ids = [c["id"] for c in data["chunks"] if c.get("content") is None]
    doc_ids = [d["id"] for d in data["documents"]]
    chunks = await storage.kv(CHUNKS).get_many(chunk_ids)
    docs = await storage.kv(FULL_DOCS).get_many(doc_ids)
    return Texts(
        chunks={i: str(r["content"]) for i, r in zip(chunk_ids, chunks, strict=True) if r},
        documents={i: str(r["content"]) for i, r in zip(doc_ids, docs, strict=True) if r},
    )


async def export_to(
    storage: Storage, path: str | Path, *, fmt: str = "json", timestamps: bool = True
) -> list[Path]:
    """Export the index to ``path`` in ``fmt``; the files written."""
    check_format(fmt)
    data = await export_graph(storage, timestamps=timestamps)
    texts = await texts_of(storage, data) if fmt == "parquet" else None
    return await asyncio.to_thread(write, data, Path(path), fmt, texts)
