"""``kgrag import``: read a source into a plan, decide on its vectors, commit it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kgrag.errors import ConfigError
from kgrag.maintenance.importing.commit import ReusingEmbed, commit
from kgrag.maintenance.importing.model import ImportFormatError, ImportPlan, ImportReport
from kgrag.types import Document

if TYPE_CHECKING:
    from kgrag.indexing.indexer import Indexer
    from kgrag.llm.tokenizer import Tokenizer
    from kgrag.storage.base import Storage

SOURCES = ("kg", "kgrag", "lightrag")
VECTOR_MODES = ("auto", "reuse", "recompute")
SAME_EMBEDDER = 0.999  # cosine of a re-embedded probe text with the source's vector


def read_json(path: Path) -> object:
    """A JSON file, its problems as :class:`ImportFormatError`."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise ImportFormatError(f"{path}: not a JSON file ({exc})") from exc


def read_plan(
    source: str,
    given: str | Path | Mapping[str, object],
    tokenizer: Tokenizer,
    *,
    name: str | None = None,
    root: str | Path | None = None,
) -> ImportPlan:
    """Read ``given`` (a path, or for ``kg`` also the graph itself) as ``source``."""
    if source not in SOURCES:
        raise ConfigError(f"unknown import source {source!r}; known: {', '.join(SOURCES)}")
    if source == "kg":
        from kgrag.maintenance.importing.custom_kg import read_custom_kg

        if not isinstance(given, str | Path):  # the graph itself
            return read_custom_kg(given, name or "custom_kg", tokenizer)
        path = Path(given)
        return read_custom_kg(read_json(path), name or str(path.resolve()), tokenizer)
    if not isinstance(given, str | Path):
        raise ConfigError(f"import from {source} takes a path")
    if source == "kgrag":
        from kgrag.maintenance.importing.roundtrip import read_export

        return read_export(read_json(Path(given)))
    from kgrag.maintenance.importing.lightrag import read_workdir

    return read_workdir(Path(given), tokenizer, root=Path(root) if root else None)


def plan_documents(plan: ImportPlan) -> list[Document]:
    """The plan's documents as the settings check sees them (language detection)."""
    return [Document(d.id, d.text(), d.file_path, d.source) for d in plan.docs]


async def _vectors_usable(plan: ImportPlan, embed: ReusingEmbed, mode: str) -> bool:
    """Whether the source's vectors are what this index's embedder makes (one probe call)."""
    if mode == "recompute" or not plan.text_vectors:
        return False
    text, vector = next(iter(sorted(plan.text_vectors.items())))
    fresh = np.asarray((await embed._embed([text]))[0], dtype=np.float32)
    if fresh.shape != vector.shape:
        if mode == "reuse":
            raise ConfigError(
                f"the source's vectors have {vector.shape[0]} dimensions, "
                f"this index's embedder makes {fresh.shape[0]}"
            )
        return False
    embed.embedded += 1
    if mode == "reuse":
        return True
    denom = float(np.linalg.norm(fresh) * np.linalg.norm(vector)) or 1.0
    return float(fresh @ vector) / denom >= SAME_EMBEDDER


async def run_plan(
    storage: Storage, indexer: Indexer, plan: ImportPlan, path: str, vectors: str = "auto"
) -> ImportReport:
    """Commit ``plan`` (through :meth:`IndexingService.write <kgrag.indexing.service.IndexingService.write>`:
    under the writer lease, after the settings are settled)."""
    if vectors not in VECTOR_MODES:
        raise ConfigError(f"vectors must be one of {', '.join(VECTOR_MODES)}, got {vectors!r}")
    embed = ReusingEmbed(indexer._embed, {})
    if await _vectors_usable(plan, embed, vectors):
        embed.known.update(plan.text_vectors)
    elif plan.text_vectors:
        plan.warnings.append("the source's vectors were made by another embedder: recomputed")
    await commit(storage, indexer.applier, plan, embed)
    return ImportReport(
        plan.source,
        path,
        documents=[d.id for d in plan.docs],
        chunks=len({c.id for d in plan.docs for c in d.chunks}),
        entities=await storage.graph.node_count(),
        relations=await storage.graph.edge_count(),
        vectors_reused=embed.reused,
        vectors_embedded=embed.embedded,
        warnings=list(plan.warnings),
    )
