"""The current tree's outputs equal the committed goldens, byte for byte (docs/golden.md).

Each section (an indexed corpus's exports and query outputs, the CLI help
texts, ...) is written into a temporary folder by the same code that wrote
``tests/golden/data`` and compared file for file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .compare import differences
from .sections import sections

DATA = Path(__file__).resolve().parent / "data"
SECTIONS = sections()


@pytest.mark.parametrize("section", list(SECTIONS))
def test_section_unchanged(section: str, tmp_path: Path) -> None:
    golden = DATA / section
    assert golden.is_dir(), f"no goldens for {section!r}: run scripts/golden.py --write {DATA}"
    SECTIONS[section](tmp_path / section)
    report = differences(section, golden, tmp_path / section)
    if report:
        pytest.fail(report, pytrace=False)
