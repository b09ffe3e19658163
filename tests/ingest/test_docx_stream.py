"""The streamed .docx reader: Word's rendered page breaks, and the text budget mid-block."""

from __future__ import annotations

import docx
import pytest
from docx.oxml.ns import nsdecls
from docx.oxml.parser import parse_xml

from kgrag.errors import LoaderError
from kgrag.ingest.archive import Archive
from kgrag.ingest.formats.docx import parse_docx
from kgrag.ingest.options import LoadOptions


def _mark():
    return parse_xml(f"<w:lastRenderedPageBreak {nsdecls('w')}/>")


def test_rendered_break_at_the_start_of_a_paragraph_numbers_the_page(tmp_path):
    """python-docx gives no preceding fragment for such a break; the file stays readable."""
    d = docx.Document()
    d.add_paragraph("page one")
    second = d.add_paragraph("page two")
    second._p.r_lst[0].insert(0, _mark())  # Word's mark before the run's text
    d.save(tmp_path / "r.docx")

    parsed = parse_docx(tmp_path / "r.docx")

    pages = [
        (b.page, parsed.content[b.start : b.end]) for b in parsed.blocks if b.kind != "page_break"
    ]
    assert pages == [(1, "page one"), (2, "page two")]


def test_text_budget_stops_a_single_huge_paragraph_midway(tmp_path):
    """One paragraph of 4,000 runs: refused while its runs arrive, not after."""
    d = docx.Document()
    p = d.add_paragraph()
    for _ in range(4000):
        p.add_run("x" * 100)
    d.save(tmp_path / "big.docx")
    seen: list[int] = []

    def check(length: int) -> None:
        seen.append(length)
        if length > 50_000:
            raise LoaderError("big.docx", "over budget")

    archive = Archive(tmp_path / "big.docx", LoadOptions(), ".docx")
    with pytest.raises(LoaderError, match="over budget"):
        parse_docx(archive, "big.docx", check)
    assert seen[-1] <= 50_100  # refused one run past the budget, not at 400,000
