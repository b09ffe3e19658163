"""Every source path and module the docs name exists.

Checked in README.md and docs/*.md:

- a ``.py`` path with a folder (``ingest/loaders.py``, ``src/kgrag/errors.py``,
  ``tests/support/fake_openai.py``; ``*`` globs allowed), from the checkout's
  root, from ``src/``, from ``src/kgrag/``, or as the tail of a path under
  ``src/kgrag`` (``formats/pdf.py`` in the page about ingestion);
- a folder (``retrieval/modes/``) whose first part is a package of kgrag or a
  folder of the checkout (``tests/``, ``scripts/``...), found the same ways;
- a dotted name ``kgrag.a.b``: a module, or a name in the module before it.

Paths of other projects and of a user's files do not start like ours and are
not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "src" / "kgrag"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PATH = re.compile(r"(?<![\w./:-])((?:[\w*-]+/)+(?:[\w*.-]+\.py)?)(?![\w/*])")
DOTTED = re.compile(r"(?<![\w./])kgrag(?:\.[a-z_][a-z_0-9]*)+")
# first folders a path of ours starts with: today's packages, the old ones, the checkout's
OURS = {p.name for p in PKG.rglob("*") if p.is_dir() and p.name != "__pycache__"} | {
    *("pipeline", "lifecycle", "query", "graph", "resolve", "routes"),
    *("src", "tests", "scripts", "kgrag"),
}
TREE = [p.relative_to(PKG).as_posix() for p in PKG.rglob("*") if "__pycache__" not in p.parts]


def exists(path: str) -> bool:
    """Whether ``path`` names a file or folder of the checkout (see the module doc)."""
    bare = path.rstrip("/")
    for base in (ROOT, ROOT / "src", PKG):
        if any(base.glob(bare)):
            return True
    tail = re.compile("(^|/)" + re.escape(bare).replace(r"\*", "[^/]*") + "$")
    return any(tail.search(p) for p in TREE)


def module_exists(dotted: str) -> bool:
    """``kgrag.a.b``: module ``kgrag.a.b``, or ``b`` defined in module ``kgrag.a``."""
    parts = dotted.split(".")
    for n in (len(parts), len(parts) - 1):
        base = ROOT / "src" / Path(*parts[:n])
        if base.with_suffix(".py").exists() or (base / "__init__.py").exists():
            return True
    return False


def named_paths(text: str) -> list[str]:
    out = []
    for m in PATH.finditer(text):
        path = m.group(1)
        if path.split("/")[0] in OURS and path.endswith((".py", "/")):
            out.append(path)
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_named_paths_exist(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    missing = sorted({p for p in named_paths(text) if not exists(p)})
    missing += sorted({d for d in DOTTED.findall(text) if not module_exists(d)})
    assert not missing, f"{doc.name} names what does not exist: {missing}"
