"""One small index built with the shipped fakes, and a hand-made graph of awkward values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kgrag.api.blocking import SyncKGRag
from kgrag.maintenance.export import dumps
from tests.indexing.lifecycle_corpus import document, lifecycle_settings, write

# Punctuation every format must carry through: XML, Markdown and CSV specials.
TRICKY = (
    'Alice Moreau wrote "R&D <notes>, 50% | #1" about *Zephyr Robotics* and Lyon.\n\n'
    "Bruno Keller met Alice Moreau in Zurich; [see] `code` _under_ ~tilde~."
)


def build(workdir: Path, docs: list[Path]) -> Path:
    """Index ``docs`` into ``workdir`` with the fake models; the workdir."""
    with SyncKGRag(lifecycle_settings(workdir)) as rag:
        assert rag.index_paths(docs).ok
    return workdir


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("export-docs")
    docs = [write(folder, f"d{i}.txt", document([i, i + 2, i + 5])) for i in range(3)]
    return [*docs, write(folder, "tricky.txt", TRICKY)]


@pytest.fixture(scope="session")
def index(tmp_path_factory: pytest.TempPathFactory, corpus: list[Path]) -> Path:
    """The workdir of an index of ``corpus``."""
    return build(tmp_path_factory.mktemp("export-idx") / "idx", corpus)


@pytest.fixture(scope="session")
def exported(index: Path) -> dict[str, Any]:
    """The index's canonical JSON export, without timestamps."""
    with SyncKGRag(lifecycle_settings(index)) as rag:
        data = rag.export(timestamps=False)
    assert data["entities"] and data["relations"]
    assert dumps(data)  # plain data
    return data


def export_files(index: Path, target: Path, fmt: str, timestamps: bool = False) -> list[Path]:
    """``SyncKGRag.export_to`` on the index."""
    with SyncKGRag(lifecycle_settings(index)) as rag:
        return rag.export_to(target, format=fmt, timestamps=timestamps)


def _entity(name: str, **fields: Any) -> dict[str, Any]:
    base = {"entity_type": "Person", "description": f"{name}.", "source_ids": ["chunk-a"]}
    return {"name": name, **base, "file_paths": ["a.txt"], **fields}


# Names and texts chosen to break naive writers: XML and Markdown specials,
# quotes, backslashes, CRLF, control characters, Chinese, emoji, whitespace.
AWKWARD_NAME = "R&D <Labs> \"Q\" 's' C:\\path #1 *x* [y](z) | ~w~"
AWKWARD_TEXT = (
    "# not a heading\n---\n- not a list\n+ nor this\n1. not numbered\n> not a quote\n"
    "=== \n[link](http://example.org) *stars* _under_ `code` | pipe &amp; entity\r\n"
    "CRLF line, bell\x07 form feed\x0c, tab\tend"
)
AWKWARD: dict[str, Any] = {
    "format": "kgrag-graph",
    "version": 1,
    "entities": [
        _entity("  spaced   name ", description=""),
        _entity(AWKWARD_NAME, entity_type="Organization", description=AWKWARD_TEXT, rank=3),
        _entity(
            "Ünïcödé — 🎄",
            source_ids=["chunk-a", "chunk-b"],
            file_paths=["a,b.txt", 'q"uote.txt'],
            manual=True,
            aliases=["U", "Unicode"],
            score="high",
        ),
        _entity("刘备", entity_type="人物", description="蜀汉昭烈帝。\n字玄德。", score=7),
        _entity("玄德", type_counts={"人物": 2, "Person": 1}),
    ],
    "relations": [
        {
            "src": AWKWARD_NAME,
            "tgt": "刘备",
            "weight": 2,
            "keywords": "founded, <led>",
            "description": AWKWARD_TEXT,
            "source_ids": ["chunk-a"],
            "file_paths": ["a.txt"],
            "directions": [["刘备", AWKWARD_NAME]],
        },
        {
            "src": "刘备",
            "tgt": "玄德",
            "weight": 1.5,
            "keywords": "alias",
            "description": "同一人",
            "source_ids": ["chunk-a", "chunk-b"],
            "file_paths": ["a.txt", "b.txt"],
        },
    ],
    "chunks": [
        {
            "id": "chunk-a",
            "doc_id": "doc-1",
            "doc_ids": ["doc-1"],
            "file_path": "a.txt",
            "location": {"start": 0, "end": 10, "pages": None, "section": ["1"]},
            "order": 0,
            "tokens": 12,
        },
        {
            "id": "chunk-b",
            "doc_id": "doc-1",
            "doc_ids": ["doc-1", "doc-2"],
            "file_path": "b.txt",
            "location": None,
            "order": 1,
            "tokens": 5,
        },
    ],
    "documents": [
        {
            "id": "doc-1",
            "source": "a.txt",
            "file_path": "a.txt",
            "content_hash": "h1",
            "status": "processed",
            "disabled": False,
            "metadata": {"lang": "zh", "tags": ["x"]},
        },
        {
            "id": "doc-2",
            "source": "b.txt",
            "file_path": "b.txt",
            "content_hash": "h2",
            "status": "processed",
            "disabled": True,
            "metadata": {},
        },
    ],
}
