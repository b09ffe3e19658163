"""One small SQLite index for every migration test (migrations only read their source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import build_index


@pytest.fixture(scope="session")
def source_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workdir of a small index built with the fake models."""
    root = tmp_path_factory.mktemp("migrate-src")
    return build_index(root / "source", root / "docs")
