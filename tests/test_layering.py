"""The layers of docs/architecture.md, as a test: which package may import which.

A package is ``kgrag.<name>`` (a sub-package, or one of the top-level
modules ``errors`` and ``types``, which every package may import; ``kgrag``
itself is the public ``__init__``, which may import anything). Every import
statement counts, at module level or inside a function; imports under
``if TYPE_CHECKING:`` do not (they never run). The imports are read with
``scripts/structure_report.py``, the tool that reports the structure figures,
so the test and the report see the same graph.

``KNOWN`` lists the imports against the rules that exist today, each with
the change that removes it. It can only shrink: a new import against the
rules fails, and so does an entry nothing needs any more.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

# package -> the packages it may import (errors and types: every package; they import
# nothing of kgrag but types). Within a layer the order is the data's: a file is ingested,
# then extracted, then merged into knowledge; llm sits on storage (its answer cache and
# cost ledger are stored rows named in storage/layout.py).
BASE = {"errors", "types"}
STORES = {"config", "storage", "llm"}
DOMAIN = STORES | {"ingest", "extract", "knowledge"}
MAY_IMPORT: dict[str, set[str]] = {
    "types": set(),
    "errors": set(),
    "config": set(),
    "storage": {"config"},
    "llm": {"config", "storage"},
    "ingest": STORES,
    "extract": STORES | {"ingest"},
    "knowledge": STORES | {"ingest", "extract"},
    "indexing": DOMAIN,
    "retrieval": DOMAIN,
    "curation": DOMAIN | {"indexing"},
    "evaluation": DOMAIN | {"retrieval"},
    "maintenance": DOMAIN | {"indexing", "retrieval"},
    "api": DOMAIN | {"indexing", "retrieval", "curation", "maintenance", "evaluation"},
    "server": DOMAIN | {"indexing", "retrieval", "curation", "maintenance", "evaluation", "api"},
    "cli": DOMAIN
    | {"indexing", "retrieval", "curation", "maintenance", "evaluation", "api", "server"},
}

# (importer, imported) -> the change that removes it. This list only shrinks.
KNOWN: dict[tuple[str, str], str] = {}


def report_tool() -> ModuleType:
    """``scripts/structure_report.py``, loaded as a module."""
    if "structure_report" in sys.modules:
        return sys.modules["structure_report"]
    spec = importlib.util.spec_from_file_location(
        "structure_report", ROOT / "scripts" / "structure_report.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["structure_report"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@functools.cache
def edges() -> list[Any]:
    """Every runtime import between two modules of src/kgrag (read once)."""
    tool = report_tool()
    return list(tool.import_edges(tool.load_tree(SRC)))


def allowed(importer: str, imported: str) -> bool:
    """Whether package ``importer`` may import package ``imported``."""
    if importer == "kgrag":
        return True
    if imported in BASE and importer not in BASE:
        return True
    if importer == "errors":
        return imported == "types"
    return imported in MAY_IMPORT[importer]


def crossings() -> dict[tuple[str, str], list[str]]:
    """(importer, imported) package pairs -> the module imports that make them."""
    tool = report_tool()
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for e in edges():
        a, b = tool.package_of(e.source), tool.package_of(e.target)
        if a != b:
            out[(a, b)].append(f"{e.source}:{e.line} imports {e.target}")
    return out


def test_every_package_has_a_layer() -> None:
    tool = report_tool()
    packages = {m.package for m in tool.load_tree(SRC).values()} - {"kgrag"}
    assert packages == set(MAY_IMPORT), "place a new package in MAY_IMPORT (and the doc)"


def test_the_rules_read_as_the_doc_says() -> None:
    assert not allowed("indexing", "retrieval") and not allowed("retrieval", "indexing")
    assert not allowed("indexing", "curation") and allowed("curation", "indexing")
    assert not allowed("config", "ingest") and not allowed("errors", "ingest")
    assert not allowed("knowledge", "retrieval") and not allowed("storage", "llm")
    assert allowed("server", "api") and not allowed("api", "server")
    assert allowed("ingest", "errors") and allowed("kgrag", "api")


def test_the_layers_have_no_cycle() -> None:
    tool = report_tool()
    graph = {a: {b for b in MAY_IMPORT if allowed(a, b)} for a in MAY_IMPORT}
    assert tool.strongly_connected(graph) == []


def test_imports_follow_the_layers() -> None:
    wrong = {
        pair: sites
        for pair, sites in crossings().items()
        if not allowed(*pair) and pair not in KNOWN
    }
    lines = [f"{a} -> {b}: {site}" for (a, b), sites in sorted(wrong.items()) for site in sites]
    assert not lines, "imports against the layers (docs/architecture.md):\n" + "\n".join(lines)


def test_known_exceptions_are_still_needed() -> None:
    found = crossings()
    stale = [f"{a} -> {b}" for (a, b) in KNOWN if (a, b) not in found or allowed(a, b)]
    assert not stale, "remove from KNOWN (the import is gone): " + ", ".join(stale)


def test_no_import_cycle_between_packages() -> None:
    """No cycle, apart from those a known exception closes (which its change removes)."""
    tool = report_tool()
    kept = [
        e for e in edges() if (tool.package_of(e.source), tool.package_of(e.target)) not in KNOWN
    ]
    cycles = tool.package_cycles(kept)
    assert cycles == [], cycles
