"""Archives that lie about their sizes, and a large legal .docx, cost bounded memory and time.

Each file is loaded by ``load_file`` in a fresh subprocess (address space
capped at 3 GiB so a regression fails instead of swapping) that reports
its own peak RSS (``VmHWM``; ``ru_maxrss`` would carry the parent's peak
across ``exec``) and the load time. The bounds asserted, generous for a
2-core CI machine: **peak RSS under 300 MiB** (imports included; about
110 MiB of it is python-pptx, openpyxl and lxml) and **under 10 s**.

* Forged bombs (:func:`forged_zip.forge`): a real .docx, .odt, .xlsx,
  .epub and .pptx whose main XML member inflates 1 GiB past the size and
  CRC its directory declares. Before the bounded reader, the .docx took
  about 9 s and 2.2 GB RSS (zipfile inflates the whole member in one call
  and then truncates it to the declared size, which then even parses).
* A legal .docx with 64 MiB of XML (ratio 2.7, within every zip budget)
  and ``max_document_chars`` of 1,000,000: refused midway (0.4 s, 112 MiB),
  because the text budget is checked as the XML streams. Before, python-docx
  built the whole tree first (15 s, 410 MiB at 64 MiB of XML).
* The same kind of file (32 MiB of XML) under the default budgets is read
  whole: 30 million characters in 3 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ingest.forged_zip import MiB, forge, large_docx
from tests.ingest.test_formats import docx_file
from tests.ingest.test_formats_more import epub_file, odt_file, pptx_file, xlsx_file

RSS_BOUND_MIB = 300
SECONDS_BOUND = 10.0
_ADDRESS_SPACE = 3 * 1024 * MiB

_CHILD = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
import openpyxl, pptx  # imported by the loaders anyway; part of the figure
from kgrag.errors import LoaderError
from kgrag.ingest.loaders import load_file
from kgrag.ingest.options import LoadOptions
options = LoadOptions(**json.loads(sys.argv[2]))
started = time.perf_counter()
try:
    outcome = {{"read": len(load_file(sys.argv[1], options).content)}}
except LoaderError as exc:
    outcome = {{"refused": exc.reason}}
outcome["seconds"] = time.perf_counter() - started
status = open("/proc/self/status").read()  # VmHWM: this process's own peak since exec
outcome["rss_mib"] = int(status.split("VmHWM:")[1].split()[0]) / 1024
print(json.dumps(outcome))
"""


def load_in_child(path: Path, **options: int) -> dict:
    """Load ``path`` in a fresh interpreter: its outcome, load time and peak RSS."""
    child = subprocess.run(
        [sys.executable, "-c", _CHILD.format(limit=_ADDRESS_SPACE), str(path), json.dumps(options)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    return json.loads(child.stdout)


FORGED = {
    ".docx": (docx_file, "word/document.xml"),
    ".odt": (odt_file, "content.xml"),
    ".xlsx": (xlsx_file, "xl/worksheets/sheet1.xml"),
    ".epub": (epub_file, "OEBPS/text/ch1.xhtml"),
    ".pptx": (pptx_file, "ppt/slides/slide1.xml"),
}


@pytest.mark.parametrize("suffix", sorted(FORGED))
def test_forged_size_bomb_is_refused_in_bounded_memory_and_time(tmp_path, suffix):
    make, member = FORGED[suffix]
    real, bomb = tmp_path / f"real{suffix}", tmp_path / f"bomb{suffix}"
    make(real)
    forge(real, bomb, member, 1024 * MiB)
    assert bomb.stat().st_size < 5 * MiB  # a few MB on disk, 1 GiB past its claim

    outcome = load_in_child(bomb)

    assert "forged" in outcome.get("refused", ""), outcome
    assert repr(member) in outcome["refused"]
    assert outcome["rss_mib"] < RSS_BOUND_MIB, outcome
    assert outcome["seconds"] < SECONDS_BOUND, outcome


def test_large_legal_docx_is_refused_midway_by_the_text_budget(tmp_path):
    path = tmp_path / "legal.docx"
    large_docx(path, 64 * MiB)  # 25 MB on disk, ratio 2.7

    outcome = load_in_child(path, max_document_chars=1_000_000)

    assert "max_document_chars" in outcome.get("refused", ""), outcome
    assert outcome["rss_mib"] < RSS_BOUND_MIB, outcome
    assert outcome["seconds"] < SECONDS_BOUND, outcome


def test_large_legal_docx_within_the_budget_is_read(tmp_path):
    """The same file under the default budgets is read whole, in bounded time."""
    path = tmp_path / "legal.docx"
    large_docx(path, 32 * MiB)

    outcome = load_in_child(path)

    assert outcome.get("read", 0) > 10_000_000, outcome
    assert outcome["seconds"] < 4 * SECONDS_BOUND, outcome
