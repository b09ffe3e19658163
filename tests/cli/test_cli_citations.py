"""``kgrag query --references`` and ``--json``: the answer's references, run as a real process."""

from __future__ import annotations

import json
import re

from tests.cli.test_cli import kgrag

GUIDE = """# Licensing guide

## 3 Terms

### 3.2 Licensing

Alice Moreau grants Bruno Keller a personal licence for the Zephyr software.
Bruno Keller pays the licence fee to Northwind Labs every March.

### 3.3 Fees

Late fees double after thirty days, and Chiara Rossi of Quartz Systems collects them.
"""
QUESTION = "Who pays the licence fee to Northwind Labs?"


def test_query_references_prints_them_and_json_carries_them(tmp_path):
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    work = str(tmp_path / "idx")
    env = {"KGRAG_CHUNK_SIZE": "40", "KGRAG_CHUNK_OVERLAP": "0"}
    out = kgrag("index", "--workdir", work, str(tmp_path / "guide.md"), env_extra=env)
    assert out.returncode == 0, out.stderr

    shown = kgrag("query", "--workdir", work, "--mode", "naive", "--references", QUESTION)
    assert shown.returncode == 0, shown.stderr
    answer, _, listing = shown.stdout.partition("\nReferences:")
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer)}
    blocks = re.findall(r"^\[(\d+)\] cited  chunk  (\S+guide\.md)(.*)$", listing, re.M)
    assert cited and {int(n) for n, _, _ in blocks} == cited
    assert any("§3.2 Licensing" in where for _, _, where in blocks)
    assert "section Licensing guide / 3 Terms / 3.2 Licensing" in listing
    assert re.search(r"chars \d+-\d+", listing) and '"' in listing  # span and excerpt
    assert "kgrag: [answer] note: removed citation(s) [" in shown.stderr

    data = json.loads(
        kgrag("query", "--workdir", work, "--mode", "naive", "--json", QUESTION).stdout
    )
    assert data["invalid_citations"] and data["references"]
    by_number = {int(r["reference_id"]): r for r in data["references"]}
    assert {n for n, r in by_number.items() if r["cited"]} == cited
    for r in by_number.values():
        assert r["doc_id"] and r["file_path"].endswith("guide.md") and r["section"]
        assert r["text"] and r["end"] - r["start"] == len(r["text"])
