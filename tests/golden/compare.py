"""Comparing a freshly written section with its committed golden files."""

from __future__ import annotations

import difflib
from pathlib import Path

MAX_DIFF_LINES = 120
REGENERATE = (
    "If, and only if, this change of behaviour is intended, regenerate the goldens with\n"
    "    .venv/bin/python scripts/golden.py --write tests/golden/data --only {section}\n"
    "and say why in the commit message (docs/golden.md). A refactor must not change them."
)


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}


def _diff(name: str, golden: bytes, actual: bytes) -> list[str]:
    try:
        old, new = golden.decode("utf-8"), actual.decode("utf-8")
    except UnicodeDecodeError:
        return [f"{name}: binary files differ ({len(golden)} vs {len(actual)} bytes)"]
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), f"golden/{name}", f"now/{name}", lineterm=""
    )
    return list(lines)


def differences(section: str, golden: Path, actual: Path) -> str:
    """An empty string when ``actual`` equals ``golden`` file for file, byte for byte; else a report."""
    want, got = _files(golden), _files(actual)
    out: list[str] = []
    for name in sorted(set(want) - set(got)):
        out.append(f"missing now: {name}")
    for name in sorted(set(got) - set(want)):
        out.append(f"new now (not in the goldens): {name}")
    for name in sorted(set(want) & set(got)):
        old, new = want[name].read_bytes(), got[name].read_bytes()
        if old != new:
            out.extend(_diff(name, old, new))
    if not out:
        return ""
    if len(out) > MAX_DIFF_LINES:
        out = [*out[:MAX_DIFF_LINES], f"... ({len(out) - MAX_DIFF_LINES} more lines)"]
    return "\n".join(
        [f"golden section {section!r} differs:", *out, "", REGENERATE.format(section=section)]
    )
