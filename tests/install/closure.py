"""The installed distributions a set of requirements needs, read from metadata.

A fresh virtual environment with exactly kgrag's base closure can be built
offline from the distributions already installed here: the closure is
followed through ``importlib.metadata`` (``requires()`` of each
distribution, markers evaluated, only the extras asked for).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def project_requirements(pyproject: Path, extra: str | None = None) -> list[Requirement]:
    """``[project].dependencies``, plus one optional-dependency group when ``extra`` is given."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    lines = list(project.get("dependencies", []))
    if extra is not None:
        lines += project.get("optional-dependencies", {})[extra]
    return [Requirement(line) for line in lines]


def _applies(req: Requirement, extras: Iterable[str]) -> bool:
    """Whether ``req``'s marker holds here for any of ``extras`` (or none)."""
    if req.marker is None:
        return True
    return any(req.marker.evaluate({"extra": extra}) for extra in ("", *extras))


def closure(requirements: Iterable[Requirement]) -> dict[str, metadata.Distribution]:
    """Installed distributions (by canonical name) that ``requirements`` pull in.

    Raises ``PackageNotFoundError`` when a needed distribution is not
    installed, so a missing dependency is never silently left out.
    """
    found: dict[str, metadata.Distribution] = {}
    todo = [(req, ()) for req in requirements]
    while todo:
        req, parent_extras = todo.pop()
        if not _applies(req, parent_extras):
            continue
        name = canonicalize_name(req.name)
        seen = found.get(name)
        dist = seen or metadata.distribution(req.name)
        found[name] = dist
        if seen is not None and not req.extras:
            continue
        extras = tuple(req.extras)
        todo += [(Requirement(line), extras) for line in dist.requires or []]
    return found
