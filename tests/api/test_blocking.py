"""SyncKGRag offers every public name of KGRag, with the same signature, and nothing else.

The blocking methods are derived from the async ones (kgrag.api.blocking);
this is what fails when a new async method has no blocking counterpart, or
when a hand-written one drifts from the async signature.
"""

from __future__ import annotations

import inspect
import pydoc
from pathlib import Path
from typing import Any

from kgrag import KGRag, Settings, SyncKGRag
from kgrag.api.blocking import ASYNC_ONLY, SYNC_ONLY

# The one method whose result differs: an AnswerStream is offered as a SyncAnswerStream.
STREAMS = {"stream": ("AnswerStream", "SyncAnswerStream")}


def public_names(cls: type, instance: object) -> set[str]:
    """Public methods and properties of ``cls`` and attributes an instance sets itself."""
    names = set(dir(cls)) | set(vars(instance))
    return {n for n in names if not n.startswith("_")}


def async_surface(cls: type[KGRag], workdir: Path) -> set[str]:
    return public_names(cls, cls(Settings(workdir=workdir)))


def sync_surface(cls: type[SyncKGRag], workdir: Path) -> set[str]:
    rag = cls(Settings(workdir=workdir))
    rag._runner.close()
    return public_names(cls, rag)


def drift(real: Any, sync: Any, name: str) -> str:
    """How ``sync`` differs from ``real`` (its counterpart ``name``), or ""."""
    if inspect.iscoroutinefunction(sync):
        return f"{name}: the blocking one is a coroutine function"
    if not callable(real):
        return ""
    have, want = inspect.signature(sync), inspect.signature(real)
    if list(have.parameters.values()) != list(want.parameters.values()):
        return f"{name}: parameters {have} != {want}"
    returns = STREAMS.get(name, (want.return_annotation, want.return_annotation))
    if (want.return_annotation, have.return_annotation) != returns:
        return f"{name}: returns {have.return_annotation} != {returns[1]}"
    return ""


def mismatches(real: type[KGRag], sync: type[SyncKGRag], workdir: Path) -> list[str]:
    """Every way ``sync`` fails to mirror ``real``."""
    want = async_surface(real, workdir) - set(ASYNC_ONLY)
    have = sync_surface(sync, workdir) - SYNC_ONLY
    found = [f"{n}: no blocking counterpart" for n in sorted(want - have)]
    found += [f"{n}: not on KGRag" for n in sorted(have - want)]
    for name in sorted(want & have):
        found.append(drift(getattr(real, name, None), getattr(sync, name, None), name))
    return [m for m in found if m]


def test_every_public_name_is_on_both_with_one_signature(tmp_path):
    assert mismatches(KGRag, SyncKGRag, tmp_path) == []
    surface = async_surface(KGRag, tmp_path)
    assert set(ASYNC_ONLY) <= surface, "an exclusion names nothing KGRag has"
    assert {"insert", "query", "merge_entities", "cost_report", "settings"} <= surface


def test_a_new_async_method_without_a_blocking_one_fails(tmp_path):
    class Grown(KGRag):
        async def compact(self, *, aggressive: bool = False) -> None:
            """A method added to the async façade only."""

    assert mismatches(Grown, SyncKGRag, tmp_path) == ["compact: no blocking counterpart"]


def test_a_drifted_blocking_method_fails(tmp_path):
    class Drifted(SyncKGRag):
        def check(self, *, repair: bool = True) -> Any:  # another default
            return None

        def status(self) -> Any:  # typed differently
            return None

    assert [m.split(":")[0] for m in mismatches(KGRag, Drifted, tmp_path)] == [
        "check",
        "status",
    ]


def test_help_shows_the_async_docstring_and_parameters():
    page = pydoc.render_doc(SyncKGRag, renderer=pydoc.plaintext)
    first_line = KGRag.index_paths.__doc__.splitlines()[0]
    assert first_line in page and "index_paths(self, paths: 'Iterable[str | Path]'" in page
    assert SyncKGRag.merge_entities.__doc__ == KGRag.merge_entities.__doc__
    assert SyncKGRag.insert.__qualname__ == "SyncKGRag.insert"
    assert "plain iterator" in (SyncKGRag.stream.__doc__ or "")
