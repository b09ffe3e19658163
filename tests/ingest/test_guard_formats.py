"""Zip bombs in the new zip-based formats are refused fast, and the batch goes on.

The bombs are built here: an .xlsx whose sheet inflates to 1 GiB of zeros
(about 4.5 MB on disk), an .epub whose central directory claims 4 GiB
for a chapter of a few bytes, and 64 MiB ratio bombs for .pptx and .odt.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
import zipfile

import pytest

from kgrag.errors import LoaderError
from kgrag.ingest.loaders import FORMATS, load_file
from tests.ingest.test_formats_more import epub_file, odt_file, pptx_file, xlsx_file
from tests.ingest.zip_fixture import GiB, MiB, zeros_entry

_zeros_entry = zeros_entry


@pytest.fixture(scope="module")
def xlsx_bomb(tmp_path_factory):
    """An .xlsx whose first sheet inflates to 1 GiB of zeros."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.xlsx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    _zeros_entry(path, "xl/worksheets/sheet1.xml", GiB, mode="a")
    return path


def epub_liar(path) -> None:
    """A real-looking .epub whose central directory says its chapter is 4 GiB."""
    epub_file(path)
    data = bytearray(path.read_bytes())
    name = b"OEBPS/text/ch1.xhtml"
    at = data.find(b"PK\x01\x02")
    while data[at + 46 : at + 46 + len(name)] != name:  # the chapter's directory record
        at = data.find(b"PK\x01\x02", at + 4)
    struct.pack_into("<L", data, at + 24, 0xFFFFFFF0)  # uncompressed size
    path.write_bytes(bytes(data))


_MEASURE = """
import json, resource, sys, time
from kgrag.ingest.loaders import load_file, load_paths
import openpyxl, pptx  # what loading these formats imports anyway
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
report = load_paths(sys.argv[1:])
elapsed = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
refusals = {}
for name in sys.argv[1:]:
    if "bomb" in name or "liar" in name:
        t = time.perf_counter()
        try:
            load_file(name)
        except Exception:
            pass
        refusals[name] = time.perf_counter() - t
print(json.dumps({"elapsed": elapsed, "rss_kib": after - before, "refusals": refusals,
                  "docs": [d.file_path for d in report.documents],
                  "errors": {e.path: e.reason for e in report.errors}}))
"""


def test_xlsx_and_epub_bombs_are_refused_fast_and_the_batch_goes_on(tmp_path, xlsx_bomb):
    assert xlsx_bomb.stat().st_size < 10 * MiB
    liar = tmp_path / "liar.epub"
    epub_liar(liar)
    assert liar.stat().st_size < 10_000
    good = {"a.xlsx": xlsx_file, "b.epub": epub_file, "c.pptx": pptx_file, "d.odt": odt_file}
    for name, make in good.items():
        make(tmp_path / name)
    (tmp_path / "e.csv").write_text("Name,Team\nAlice,Ops\n")
    paths = [
        tmp_path / "a.xlsx",
        xlsx_bomb,
        tmp_path / "b.epub",
        liar,
        tmp_path / "c.pptx",
        tmp_path / "d.odt",
        tmp_path / "e.csv",
    ]
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert all(seconds < 1.0 for seconds in result["refusals"].values()), result["refusals"]
    assert result["elapsed"] < 5.0  # the whole batch, five real files included
    assert result["rss_kib"] < 300 * 1024  # ru_maxrss is KiB on Linux
    assert [os.path.basename(p) for p in result["docs"]] == [
        "a.xlsx",
        "b.epub",
        "c.pptx",
        "d.odt",
        "e.csv",
    ]
    xlsx_reason = result["errors"][str(xlsx_bomb)]
    assert ".xlsx" in xlsx_reason and "1.0 GiB" in xlsx_reason
    assert "zip_max_total_bytes" in xlsx_reason
    epub_reason = result["errors"][str(liar)]
    assert ".epub" in epub_reason and "would inflate to 4.0 GiB" in epub_reason


@pytest.mark.parametrize(
    "suffix, entry",
    [
        (".pptx", "ppt/slides/slide1.xml"),
        (".odt", "content.xml"),
        (".epub", "OEBPS/ch1.xhtml"),
        (".xlsx", "xl/worksheets/sheet1.xml"),
    ],
)
def test_ratio_bombs_under_the_size_budget_are_refused(tmp_path, suffix, entry):
    path = tmp_path / f"ratio{suffix}"
    _zeros_entry(path, entry, 64 * MiB)  # ~1000:1, under 256 MiB
    started = time.perf_counter()
    with pytest.raises(LoaderError, match=r"zip bomb.*over the 100:1 limit \(zip_max_ratio\)"):
        load_file(path)
    assert time.perf_counter() - started < 1.0


def test_every_zip_based_format_is_registered_as_such():
    assert {s for s, f in FORMATS.items() if f.zip_based} >= {
        ".docx",
        ".pptx",
        ".xlsx",
        ".epub",
        ".odt",
    }
    assert not FORMATS[".csv"].zip_based and not FORMATS[".xml"].zip_based


def test_xml_entity_bomb_is_refused_fast_and_small_entities_stay_unexpanded(tmp_path):
    """A "billion laughs" file is one clear line in milliseconds; nothing is expanded."""
    lol = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
    path = tmp_path / "laughs.xml"
    path.write_text(
        f'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">{lol}]>'
        "<lolz><a>&lol9;</a><b>plain text</b></lolz>"
    )
    started = time.perf_counter()
    with pytest.raises(LoaderError, match=r"malformed XML: .*entity amplification"):
        load_file(path)
    assert time.perf_counter() - started < 1.0
    small = tmp_path / "small.xml"
    small.write_text(
        '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r><a>&x;</a><b>plain text</b></r>'
    )
    doc = load_file(small)
    assert doc.content == "/r\n\nb: plain text" and "root:" not in doc.content
