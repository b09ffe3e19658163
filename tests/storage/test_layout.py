"""The stored layout (kgrag.storage.layout): its names are the stored ones, nothing else spells
them, and what an index writes has the shape of the declared rows."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import kgrag
from kgrag.api.facade import KGRag
from kgrag.storage import layout
from kgrag.storage.layout import rows
from kgrag.storage.layout.typed import KV_ROWS, VECTOR_METAS
from tests.support.settings import SMALL_CHUNKS, fake_settings

SRC = Path(kgrag.__file__).parent
LAYOUT = SRC / "storage" / "layout"

# What saved indexes hold: renaming one breaks every index written before.
STORED = {
    "FULL_DOCS": "full_docs",
    "CHUNKS": "text_chunks",
    "FACTS": "chunk_facts",
    "SUPPORT": "graph_support",
    "DOC_GRAPH": "doc_graph",
    "PENDING": "summary_pending",
    "LLM_CACHE": "llm_cache",
    "COST_LEDGER": "cost_ledger",
    "ALIASES": "entity_aliases",
    "MERGES": "entity_merges",
    "SPLITS": "entity_splits",
    "EDITS": "manual_edits",
    "WALK": "walk_graph",
    "WALK_LOG": "walk_log",
    "SERVER_JOBS": "server_jobs",
    "SERVER_REFUSED": "server_refused",
    "SERVER_TRACKS": "server_tracks",
    "LOGIN_FAILURES": "server_login_failures",
    "ENTITY_VECTORS": "entities",
    "RELATION_VECTORS": "relations",
    "CHUNK_VECTORS": "chunks",
    "SETTINGS_META": "settings",
    "EMBEDDING_IDENTITY_META": "embedding_identity",
    "EXTRACTORS_META": "extractors",
    "GRAPH_VERSION_META": "graph_version",
    "CURATION_VERSION_META": "curation_version",
    "LEDGER_META": "ledger",
    "REJECTED_META": "rejected_inputs",
    "MIGRATION_META": "migration",
    "SCHEMA_VERSION_META": "schema_version",
    "MAX_SEQ_META": "doc_status.max_seq",
    "WALK_SNAPSHOT_KEY": "snapshot",
    "WALK_HEAD_KEY": "head",
}


def test_every_namespace_declares_its_rows():
    assert set(KV_ROWS) == set(layout.KV_NAMESPACES) - {layout.PENDING, layout.WALK}
    assert set(VECTOR_METAS) == set(layout.VECTOR_NAMESPACES)


def test_every_name_is_the_stored_one():
    assert {name: getattr(layout, name) for name in STORED} == STORED
    declared = {*layout.KV_NAMESPACES, *layout.VECTOR_NAMESPACES, *layout.META_KEYS}
    assert declared == set(STORED.values()) - {"snapshot", "head"}
    assert len(layout.KV_NAMESPACES) == len(set(layout.KV_NAMESPACES))


def test_key_formats():
    assert layout.PAIR_SEP == "\x1f"
    assert layout.support_key("Ada") == "e:Ada"
    assert layout.support_key(("Ada", "Bob")) == "r:Ada\x1fBob"
    for key in ("Ada", ("Ada", "Bob"), "r:x", ("e:a", "b\x1fc")):
        assert layout.parse_support_key(layout.support_key(key)) == key
    assert layout.walk_log_key(42) == "000000000042"
    assert sorted(layout.walk_log_key(v) for v in (10, 9, 100)) == [
        layout.walk_log_key(v) for v in (9, 10, 100)
    ]
    key = layout.cost_row_key(["2025-01-02", "index", "doc-1", "m", "extract"])
    assert key == '["2025-01-02", "index", "doc-1", "m", "extract"]'


# -- nothing else spells a stored name ---------------------------------------------------

STORE_CALLS = {"kv", "vectors", "get_meta", "set_meta"}
# names that are only ever stored names (never a field, a mode or a status key), wherever they appear
DISTINCT = set(layout.KV_NAMESPACES) | {
    layout.EMBEDDING_IDENTITY_META,
    layout.GRAPH_VERSION_META,
    layout.CURATION_VERSION_META,
    layout.MAX_SEQ_META,
}
# LightRAG's own file names, which its importer reads (another program's layout)
FOREIGN = {
    ("maintenance/importing/lightrag.py", "text_chunks"),
    ("maintenance/importing/lightrag.py", "full_docs"),
}


def _spelled(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    rel = path.relative_to(SRC).as_posix()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in STORE_CALLS and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    out.append(f"{rel}:{node.lineno} {node.func.attr}({arg.value!r})")
        elif (
            isinstance(node, ast.Constant) and node.value in DISTINCT and id(node) not in docstrings
        ):
            if (rel, node.value) not in FOREIGN:
                out.append(f"{rel}:{node.lineno} {node.value!r}")
    return out


def test_no_stored_name_is_spelled_outside_the_layout():
    found = [
        hit
        for path in sorted(SRC.rglob("*.py"))
        if LAYOUT not in path.parents and "testing" not in path.relative_to(SRC).parts
        for hit in _spelled(path)
    ]
    assert found == []


# -- what an index writes has the declared shape ------------------------------------------

# the namespaces the scenario below writes (splits and the server's are written elsewhere)
WRITTEN = {
    *(layout.FULL_DOCS, layout.CHUNKS, layout.FACTS, layout.SUPPORT, layout.DOC_GRAPH),
    *(layout.LLM_CACHE, layout.COST_LEDGER, layout.ALIASES, layout.MERGES, layout.EDITS),
    layout.WALK_LOG,
}


def _shape_errors(where: str, row: dict[str, Any], declared: Any) -> list[str]:
    keys = set(row)
    missing = declared.__required_keys__ - keys
    unknown = keys - declared.__required_keys__ - declared.__optional_keys__
    return [f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}"] * bool(
        missing or unknown
    )


TEXTS = [
    "Ada Lovelace worked with Charles Babbage on the Analytical Engine in London. "
    "Babbage designed the engine; Lovelace wrote its first program.",
    "Charles Babbage lived in London. The Analytical Engine was never finished.",
]


async def test_an_index_writes_the_declared_rows(tmp_path):
    async with KGRag(fake_settings(tmp_path / "idx", **SMALL_CHUNKS)) as rag:
        await rag.insert(TEXTS, file_paths=["a.txt", "b.txt"])
        names = sorted(await rag.storage.graph.all_node_names())
        await rag.merge_entities(names[0], [names[1]])
        await rag.edit_entity(names[2], description="edited")
        await rag.create_entity("Hand Made", "CONCEPT", "made by hand")
        s = rag.storage
        errors: list[str] = []
        for ns in sorted(WRITTEN):
            kv, declared = s.kv(ns), KV_ROWS[ns]
            keys = await kv.keys()
            assert keys, f"{ns} holds nothing"
            for key, row in zip(keys, await kv.get_many(keys), strict=True):
                errors += _shape_errors(f"{ns}[{key}]", row or {}, declared)
        head = await s.kv(layout.WALK).get(layout.WALK_HEAD_KEY)
        errors += _shape_errors("walk head", head or {}, rows.WalkHeadRow)
        for ns, declared in VECTOR_METAS.items():
            vs = s.vectors(ns)
            for key, meta in (await vs.get_metas(await vs.ids())).items():
                errors += _shape_errors(f"{ns} vector {key}", meta, declared)
        graph = s.graph
        for name, node in (await graph.get_nodes(await graph.all_node_names())).items():
            errors += _shape_errors(f"node {name}", node, rows.NodeRow)
        edges = [(a, b) for a, b, _ in await graph.all_edges()]
        for pair, edge in (await graph.get_edges(edges)).items():
            errors += _shape_errors(f"edge {pair}", edge, rows.EdgeRow)
        assert errors == []
        assert set(await s.meta_keys()) <= set(layout.META_KEYS)
