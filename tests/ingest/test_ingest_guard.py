"""Hostile and oversized files: refused by name and reason, fast, the batch goes on."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import time
import zipfile

import docx
import pytest

from kgrag.errors import LoaderError
from kgrag.ingest.loaders import FORMATS, Loaded, load_file, load_paths, register_format
from kgrag.ingest.options import LoadOptions
from tests.ingest.pdf_fixture import minimal_pdf
from tests.ingest.zip_fixture import GiB, MiB, zeros_entry

_zeros_entry = zeros_entry


def _real_docx(path, text: str = "A real document.") -> None:
    document = docx.Document()
    document.add_paragraph(text)
    document.save(path)


@pytest.fixture(scope="module")
def gigabyte_bomb(tmp_path_factory):
    """A .docx whose document.xml inflates to 1 GiB of zeros (about 4.5 MB on disk)."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
    _zeros_entry(path, "word/document.xml", GiB, mode="a")
    return path


_MEASURE = """
import json, resource, sys, time
from kgrag.ingest.loaders import load_paths
import docx  # what loading a .docx would import anyway
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
report = load_paths(sys.argv[1:])
elapsed = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"elapsed": elapsed, "rss_kib": after - before,
                  "docs": [d.file_path for d in report.documents],
                  "errors": {e.path: e.reason for e in report.errors}}))
"""


def test_gigabyte_zip_bomb_is_refused_fast_with_bounded_memory_and_batch_goes_on(
    tmp_path, gigabyte_bomb
):
    assert gigabyte_bomb.stat().st_size < 10 * MiB
    good_txt, good_docx = tmp_path / "a.txt", tmp_path / "b.docx"
    good_txt.write_text("Plain text survives the bomb.")
    _real_docx(good_docx, "So does a real document.")
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(good_txt), str(gigabyte_bomb), str(good_docx)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["elapsed"] < 1.0
    assert result["rss_kib"] < 300 * 1024  # ru_maxrss is KiB on Linux
    assert [os.path.basename(p) for p in result["docs"]] == ["a.txt", "b.docx"]
    reason = result["errors"][str(gigabyte_bomb)]
    assert "1.0 GiB" in reason and "zip_max_total_bytes" in reason


def test_ratio_bomb_under_the_size_budget_is_refused(tmp_path):
    path = tmp_path / "ratio.docx"
    _zeros_entry(path, "word/document.xml", 64 * MiB)  # ~1000:1, under 256 MiB
    started = time.perf_counter()
    with pytest.raises(LoaderError, match=r"zip bomb.*over the 100:1 limit \(zip_max_ratio\)"):
        load_file(path)
    assert time.perf_counter() - started < 1.0


def test_central_directory_claiming_a_huge_size_is_refused(tmp_path):
    path = tmp_path / "liar.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", "<w:document/>")
    data = bytearray(path.read_bytes())
    at = data.rfind(b"PK\x01\x02")  # central directory header: uncompressed size at +24
    struct.pack_into("<L", data, at + 24, 0xFFFFFFF0)
    path.write_bytes(bytes(data))
    with pytest.raises(LoaderError, match=re.escape("would inflate to 4.0 GiB")):
        load_file(path)


def test_too_many_entries_are_refused_from_the_end_record(tmp_path):
    path = tmp_path / "many.docx"
    with zipfile.ZipFile(path, "w") as archive:
        for i in range(11):
            archive.writestr(f"part{i}.xml", "")
    with pytest.raises(LoaderError, match=r"11 entries.*zip_max_entries"):
        load_file(path, LoadOptions(zip_max_entries=10))
    assert LoadOptions().zip_max_entries == 10_000


def test_ordinary_docx_passes_the_budgets(tmp_path):
    path = tmp_path / "ok.docx"
    _real_docx(path, "Nothing hostile here. " * 2000)
    assert load_file(path).content.startswith("Nothing hostile here.")


def test_corrupt_archive_is_one_clear_line(tmp_path):
    path = tmp_path / "bad.docx"
    path.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(LoaderError, match=re.escape("corrupt .docx")):
        load_file(path)


def test_a_registered_zip_based_format_gets_the_same_guard(tmp_path):
    calls = []

    def load_book(path, options):
        calls.append(path)
        return Loaded("never")

    before = FORMATS.get(".epub")
    register_format([".epub"], load_book, zip_based=True)
    try:
        path = tmp_path / "book.epub"
        _zeros_entry(path, "OEBPS/ch1.xhtml", 64 * MiB)
        with pytest.raises(LoaderError, match="zip bomb"):
            load_file(path)
        assert calls == []  # refused before the format's loader ran
    finally:
        if before is None:
            FORMATS.pop(".epub")
        else:
            FORMATS[".epub"] = before  # the real loader comes back for later tests


def test_file_over_max_file_bytes_is_refused_by_stat(tmp_path):
    path = tmp_path / "huge.txt"
    with path.open("wb") as f:
        f.truncate(200 * MiB)  # sparse: costs nothing, would be 200 MiB to read
    started = time.perf_counter()
    report = load_paths([path])
    assert time.perf_counter() - started < 0.5
    [error] = report.errors
    assert "200.0 MiB, over the 100.0 MiB limit (max_file_bytes)" in error.reason
    with pytest.raises(LoaderError, match="max_file_bytes"):
        load_file(path, LoadOptions(max_file_bytes=1))


def test_text_over_max_document_chars_is_refused_not_truncated(tmp_path):
    txt = tmp_path / "long.txt"
    txt.write_text("word " * 100)
    with pytest.raises(LoaderError, match=r"max_document_chars.*not truncated"):
        load_file(txt, LoadOptions(max_document_chars=100))
    pdf = tmp_path / "long.pdf"
    pdf.write_bytes(minimal_pdf(["First page of text.", "Second page of text."]))
    with pytest.raises(LoaderError, match="max_document_chars"):
        load_file(pdf, LoadOptions(max_document_chars=25))
    assert load_file(pdf, LoadOptions(max_document_chars=1000)).content


def test_fifo_in_a_folder_is_skipped_not_read(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")
    (tmp_path / "ok.txt").write_text("fine")
    report = load_paths([tmp_path])  # would block forever if the FIFO were opened
    assert [d.content for d in report.documents] == ["fine"]
    assert "not a regular file" in report.errors[0].reason


def test_encrypted_pdf_and_empty_file_stay_one_line(tmp_path):
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(72, 72)
    writer.encrypt("secret")
    locked = tmp_path / "locked.pdf"
    with locked.open("wb") as f:
        writer.write(f)
    empty = tmp_path / "empty.md"
    empty.write_bytes(b"")
    errors = {e.path: e.reason for e in load_paths([locked, empty]).errors}
    assert errors == {
        str(locked): "PDF is encrypted with a password",
        str(empty): "the file contains no text",
    }
