"""``kgrag config`` prints, byte for byte, what it printed before settings had sections.

The golden files were written by ``tests/config/config_output.py`` running
the code before the sections; each scenario runs again here and must match.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.config.config_output import SCENARIOS, scenario

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_config_prints_what_it_printed_before(name, tmp_path):
    assert scenario(name, tmp_path) == (GOLDEN / name).read_text()
