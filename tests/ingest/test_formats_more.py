"""More formats on files generated here: text, section paths and table rows come out right.

.pptx (python-pptx), .xlsx (openpyxl), .csv / .tsv, .json / .jsonl,
.epub (EPUB 3 nav and EPUB 2 NCX), .rtf (striprtf), .odt, .xml and source
code; each through ``load_file`` as ``kgrag index`` would read it.
"""

from __future__ import annotations

import json
import re
import time
import zipfile

import openpyxl
import pytest
from pptx import Presentation
from pptx.util import Inches

from kgrag.errors import LoaderError
from kgrag.ingest.block_chunker import chunk_blocks
from kgrag.ingest.loaders import load_file, supported_suffixes
from kgrag.ingest.options import LoadOptions
from kgrag.llm.tokenizer import get_tokenizer

TOK = get_tokenizer()


def _by_text(doc):
    return {doc.content[b.start : b.end]: b for b in doc.blocks}


# --- generated files ---------------------------------------------------------------------


def pptx_file(path) -> None:
    """Two slides: a titled one with bullets, a table and notes; an untitled text box."""
    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])  # title and content
    first.shapes.title.text = "Quarterly review"
    body = first.placeholders[1].text_frame
    body.text = "Revenue grew in every region."
    body.add_paragraph().text = "Churn fell to 2 percent."
    rows = [["Region", "Revenue"], ["North", "120"], ["South", "95"]]
    table = first.shapes.add_table(3, 2, Inches(1), Inches(4), Inches(4), Inches(1.5)).table
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    first.notes_slide.notes_text_frame.text = "Mention the new Leeds office."
    second = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title
    box = second.shapes.add_textbox(Inches(1), Inches(1), Inches(5), Inches(1))
    box.text_frame.text = "Questions welcome."
    deck.save(path)


def xlsx_file(path, rows: int = 3) -> None:
    """``People`` with a header row, ``Readings`` of numbers only, an empty sheet."""
    book = openpyxl.Workbook()
    people = book.active
    people.title = "People"
    people.append(["Name", "Team", "Started"])
    import datetime as dt

    names = ["Alice", "Bob", "Cara"]
    for i in range(rows):
        people.append(
            [
                names[i % 3] if i < 3 else f"Person {i}",
                "Ops" if i != 1 else None,
                dt.date(2020 + i % 5, 1, 15),
            ]
        )
    readings = book.create_sheet("Readings")
    readings.append([1.0, 2.5])
    readings.append([3, 4])
    book.create_sheet("Empty")
    book.save(path)


def _zip(path, parts: dict[str, str]) -> None:
    """An archive with ``mimetype`` stored first, as EPUB and ODF require."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        if "mimetype" in parts:
            archive.writestr("mimetype", parts["mimetype"], compress_type=zipfile.ZIP_STORED)
        for name, text in parts.items():
            if name != "mimetype":
                archive.writestr(name, text)


CONTAINER = """<?xml version="1.0"?><container version="1.0"
 xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>
 <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
 </rootfiles></container>"""


def _chapter(body: str, title: str = "The Book") -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?><!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>{title}</title></head><body>{body}</body></html>"""


CHAPTERS = {
    "OEBPS/text/cover.xhtml": _chapter('<img src="cover.jpg" alt=""/>'),
    "OEBPS/text/ch1.xhtml": _chapter(
        '<a id="top"/><h1>The Foundry</h1><p>Halden&nbsp;Works opened in 1891.</p>'
        "<h2>Workers</h2><p>Four hundred people cast frames.</p>"
        "<table><tr><th>Year</th><th>Staff</th></tr><tr><td>1891</td><td>400</td></tr></table>"
    ),
    "OEBPS/text/ch2.xhtml": _chapter(
        "<h1>Closure</h1><p>The foundry closed in 1962.</p><ul><li>Steel replaced iron.</li></ul>"
    ),
}


def epub_file(path, version: int = 3, extra: dict[str, str] | None = None) -> None:
    """A three-item spine (cover, two chapters) with a nav document (3) or an NCX (2)."""
    nav_item = (
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        if version == 3
        else '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
    )
    items = "".join(
        f'<item id="{n.split("/")[-1][:-6]}" href="text/{n.split("/")[-1]}" '
        'media-type="application/xhtml+xml"/>'
        for n in CHAPTERS
    )
    opf = f"""<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="{version}.0">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>The Book</dc:title></metadata>
<manifest>{nav_item}{items}</manifest>
<spine{' toc="ncx"' if version == 2 else ""}><itemref idref="cover"/><itemref idref="ch1"/>
<itemref idref="ch2"/></spine></package>"""
    nav = _chapter(
        '<nav epub:type="toc"><ol><li><a href="text/ch1.xhtml">1. The Foundry</a></li>'
        '<li><a href="text/ch1.xhtml#w">Workers</a></li>'
        '<li><a href="text/ch2.xhtml">2. Closure</a></li></ol></nav>'
    )
    ncx = """<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"><navMap>
<navPoint id="a"><navLabel><text>The Foundry</text></navLabel><content src="text/ch1.xhtml"/></navPoint>
<navPoint id="b"><navLabel><text>Closure</text></navLabel><content src="text/ch2.xhtml"/></navPoint>
</navMap></ncx>"""
    _zip(
        path,
        {
            "mimetype": "application/epub+zip",
            "META-INF/container.xml": CONTAINER,
            "OEBPS/content.opf": opf,
            **CHAPTERS,
            **({"OEBPS/nav.xhtml": nav} if version == 3 else {"OEBPS/toc.ncx": ncx}),
            **(extra or {}),
        },
    )


_ODT_NOTE = (
    "<text:note><text:note-citation>1</text:note-citation>"
    "<text:note-body><text:p>Printed yearly.</text:p></text:note-body></text:note>"
)
ODT_CONTENT = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" office:version="1.3">
<office:body><office:text>
<text:table-of-content><text:index-body><text:p>Introduction 1</text:p></text:index-body>
</text:table-of-content>
<text:h text:outline-level="1">Introduction</text:h>
<text:p>Welcome<text:s text:c="2"/>to the <text:span>handbook</text:span>.{_ODT_NOTE}</text:p>
<text:list><text:list-item><text:p>Bring your badge.</text:p>
<text:list><text:list-item><text:p>Sign in at the desk.</text:p></text:list-item></text:list>
</text:list-item></text:list>
<text:h text:outline-level="2">Rates</text:h>
<table:table><table:table-header-rows><table:table-row><table:table-cell><text:p>Plan</text:p></table:table-cell><table:table-cell><text:p>Price</text:p></table:table-cell></table:table-row></table:table-header-rows>
<table:table-row><table:table-cell><text:p>Basic</text:p></table:table-cell><table:table-cell><text:p>10</text:p></table:table-cell></table:table-row></table:table>
<text:soft-page-break/>
<text:h text:outline-level="1">Appendix</text:h><text:p>Contact the office.</text:p>
</office:text></office:body></office:document-content>"""


def odt_file(path) -> None:
    manifest = """<?xml version="1.0"?><manifest:manifest
 xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">
<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>
<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
</manifest:manifest>"""
    _zip(
        path,
        {
            "mimetype": "application/vnd.oasis.opendocument.text",
            "META-INF/manifest.xml": manifest,
            "content.xml": ODT_CONTENT,
        },
    )


RTF = r"""{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\froman Times;}}
{\pard\b Annual report\b0\par}
\pard Caf\'e9 sales rose by 5\u8364? per table.\par
\trowd\cellx2000\cellx4000
\intbl Item\cell Price\cell\row
\intbl Tea\cell 3\cell\row
\pard Thank you.\par
}"""

XML = """<?xml version="1.0" encoding="ISO-8859-1"?>
<!DOCTYPE catalog [<!ENTITY boom "kaboom">]>
<catalog xmlns="urn:example:books">
  <book id="bk101"><author>Gambardella, Matthew</author><title>XML Developer's Guide</title>
    <publisher><name>Wrox</name><address><city>Leeds</city></address></publisher></book>
  <book id="bk102"><author>Ralls, Kim</author><title>Midnight Rain &boom;</title></book>
  <note>A <b>mixed</b> note about caf\xe9s.</note>
</catalog>"""


# --- tests --------------------------------------------------------------------------------


def test_pptx_slides_are_sections_with_text_tables_and_notes(tmp_path):
    path = tmp_path / "review.pptx"
    pptx_file(path)
    doc = load_file(path)
    blocks = _by_text(doc)
    assert blocks["Quarterly review"].kind == "heading"
    frame = blocks["Revenue grew in every region.\nChurn fell to 2 percent."]
    assert frame.kind == "paragraph" and frame.section == ("Quarterly review",)
    table = blocks["Region | Revenue\nNorth | 120\nSouth | 95"]
    assert table.kind == "table" and table.rows[2] == ("South", "95")
    assert blocks["Mention the new Leeds office."].section == ("Quarterly review",)
    assert blocks["Slide 2"].kind == "heading"  # no title placeholder
    assert blocks["Questions welcome."].section == ("Slide 2",)
    assert doc.content.index("Quarterly review") < doc.content.index("Mention the new")


def test_xlsx_sheets_are_sections_of_labelled_rows(tmp_path):
    path = tmp_path / "staff.xlsx"
    xlsx_file(path)
    doc = load_file(path)
    blocks = _by_text(doc)
    people = next(b for b in doc.blocks if b.kind == "table" and b.section == ("People",))
    assert people.rows == (
        ("Name: Alice; Team: Ops; Started: 2020-01-15",),
        ("Name: Bob; Started: 2021-01-15",),  # empty cell left out
        ("Name: Cara; Team: Ops; Started: 2022-01-15",),
    )
    readings = blocks["A: 1; B: 2.5\nA: 3; B: 4"]  # no text header: columns by letter
    assert readings.kind == "table" and readings.section == ("Readings",)
    assert "Empty" not in doc.content
    assert [b.level for b in doc.blocks if b.kind == "heading"] == [1, 1]


def test_large_xlsx_streams_and_is_refused_by_the_text_limit(tmp_path):
    path = tmp_path / "big.xlsx"
    xlsx_file(path, rows=5000)
    assert len(load_file(path).content) > 150_000
    with pytest.raises(LoaderError, match="max_document_chars"):
        load_file(path, LoadOptions(max_document_chars=20_000))


def test_xlsx_declared_dimensions_are_not_trusted(tmp_path):
    """A sheet claiming A1:XFD1048576 costs only the cells it holds."""
    path, liar = tmp_path / "small.xlsx", tmp_path / "liar.xlsx"
    xlsx_file(path)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(liar, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                data = re.sub(rb'<dimension ref="[^"]+"', b'<dimension ref="A1:XFD1048576"', data)
            out.writestr(info, data)
    started = time.perf_counter()
    assert load_file(liar).content == load_file(path).content
    assert time.perf_counter() - started < 1.0


def test_csv_sniffs_dialect_detects_encoding_and_labels_rows(tmp_path):
    path = tmp_path / "clients.csv"
    path.write_bytes("Nom;Équipe;Ville\nAndré;Opérations;Besançon\nZoé;Ventes;\n".encode("cp1252"))
    doc = load_file(path)
    [table] = [b for b in doc.blocks if b.kind == "table"]
    assert table.section == ("clients",)
    assert table.rows == (
        ("Nom: André; Équipe: Opérations; Ville: Besançon",),
        ("Nom: Zoé; Équipe: Ventes",),
    )
    tsv = tmp_path / "plain.tsv"
    tsv.write_text("1\t2\n3\t4\n")
    assert load_file(tsv).content == "plain\n\ncolumn 1: 1; column 2: 2\ncolumn 1: 3; column 2: 4"


def test_json_records_are_flattened_key_paths(tmp_path):
    order = {
        "order": {
            "id": 7,
            "paid": True,
            "items": [{"sku": "A-1"}, {"sku": "B-2"}, {"sku": "A-17", "qty": 2}],
        },
        "customer": "Ann",
        "tags": [],
        "deep": json.loads("[" * 40 + "1" + "]" * 40),
    }
    path = tmp_path / "order.json"
    path.write_text(json.dumps(order))
    doc = load_file(path)
    tables = [b for b in doc.blocks if b.kind == "table"]
    assert len(tables) == 4  # one block per top-level record
    assert ("order.items[2].sku: A-17",) in tables[0].rows
    assert tables[1].rows == (("customer: Ann",),) and tables[2].rows == (("tags: []",),)
    [(deep,)] = tables[3].rows  # depth bounded: the rest as compact JSON
    assert deep == "deep" + "[0]" * 16 + ": " + "[" * 24 + "1" + "]" * 24


def test_jsonl_one_record_per_line_bad_lines_warned(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"user": "ann", "event": {"kind": "login"}}\nnot json\n\n{"user": "bo"}\n')
    doc = load_file(path)
    assert doc.content == "user: ann\nevent.kind: login\n\nuser: bo"
    assert doc.warnings == ["JSON Lines: skipped 1 line(s) that are not JSON (2)"]
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    with pytest.raises(LoaderError, match="invalid JSON"):
        load_file(bad)


@pytest.mark.parametrize("version", [3, 2])
def test_epub_chapters_are_sections_in_spine_order(tmp_path, version):
    path = tmp_path / f"book{version}.epub"
    epub_file(path, version)
    doc = load_file(path)
    blocks = _by_text(doc)
    first = "1. The Foundry" if version == 3 else "The Foundry"
    second = "2. Closure" if version == 3 else "Closure"
    assert [doc.content[b.start : b.end] for b in doc.blocks if b.kind == "heading"] == [
        first,
        "Workers",
        second,
    ]
    assert blocks[first].level == 1 and blocks["Workers"].level == 3  # h2 under the chapter
    assert blocks["Halden Works opened in 1891."].section == (first,)
    assert blocks["Year | Staff\n1891 | 400"].section == (first, "Workers")
    assert blocks["Steel replaced iron."].kind == "list_item"
    assert blocks["Steel replaced iron."].section == (second,)
    assert "The Book" not in doc.content and "Chapter" not in doc.content  # <title>, cover


def test_epub_without_a_table_of_contents_uses_first_headings(tmp_path):
    path = tmp_path / "bare.epub"
    epub_file(path, version=2)
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n).decode() for n in z.namelist() if n != "OEBPS/toc.ncx"}
    _zip(path, parts)
    doc = load_file(path)
    headings = [doc.content[b.start : b.end] for b in doc.blocks if b.kind == "heading"]
    assert headings == ["The Foundry", "Workers", "Closure"]


def test_rtf_paragraphs_code_page_and_table(tmp_path):
    path = tmp_path / "report.rtf"
    path.write_text(RTF)
    doc = load_file(path)
    blocks = _by_text(doc)
    assert blocks["Café sales rose by 5€ per table."].kind == "paragraph"
    assert blocks["Item | Price\nTea | 3"].rows == (("Item", "Price"), ("Tea", "3"))
    assert doc.content.startswith("Annual report") and doc.content.endswith("Thank you.")
    fake = tmp_path / "fake.rtf"
    fake.write_text("just text")
    with pytest.raises(LoaderError, match="not an RTF file"):
        load_file(fake)


def test_odt_headings_lists_tables_notes_and_pages(tmp_path):
    path = tmp_path / "handbook.odt"
    odt_file(path)
    doc = load_file(path)
    blocks = _by_text(doc)
    assert "Introduction 1" not in doc.content  # generated table of contents skipped
    assert blocks["Welcome  to the handbook."].section == ("Introduction",)
    assert blocks["Printed yearly."].kind == "paragraph"  # footnote after its paragraph
    assert (
        blocks["Bring your badge."].kind == "list_item" and blocks["Bring your badge."].level == 1
    )
    assert blocks["Sign in at the desk."].level == 2
    assert blocks["Plan | Price\nBasic | 10"].section == ("Introduction", "Rates")
    assert blocks["Plan | Price\nBasic | 10"].page == 1
    assert blocks["Contact the office."].section == ("Appendix",)
    assert blocks["Contact the office."].page == 2


def test_xml_element_paths_are_sections_and_entities_stay_unexpanded(tmp_path):
    path = tmp_path / "catalog.xml"
    path.write_bytes(XML.encode("latin-1"))
    doc = load_file(path)
    blocks = _by_text(doc)
    headings = [doc.content[b.start : b.end] for b in doc.blocks if b.kind == "heading"]
    assert headings == ["/catalog", "/catalog/book[1]", "/catalog/book[2]"]
    book = blocks["/catalog/book[1]"]
    assert book.level == 2 and book.section == ("/catalog", "/catalog/book[1]")
    rows = next(b for b in doc.blocks if b.kind == "table" and b.section[-1] == "/catalog/book[1]")
    assert rows.rows == (
        ("@id: bk101",),
        ("author: Gambardella, Matthew",),
        ("title: XML Developer's Guide",),
        ("publisher/name: Wrox",),
        ("publisher/address/city: Leeds",),
    )
    assert "kaboom" not in doc.content  # the DTD's entity is never expanded
    assert blocks["A mixed note about cafés."].section == ("/catalog",)


def test_source_code_is_one_code_block_that_extraction_skips(tmp_path):
    source = "import os\n\n\ndef home():\n    return os.environ['HOME']\n"
    path = tmp_path / "paths.py"
    path.write_text(source)
    doc = load_file(path)
    [block] = doc.blocks
    assert block.kind == "code" and block.lang == "python"
    assert doc.content == source.rstrip("\n")
    [chunk] = chunk_blocks(doc.content, doc.blocks, TOK)
    assert chunk.location["kind"] == "code"
    for suffix in (
        ".js",
        ".ts",
        ".java",
        ".c",
        ".cpp",
        ".go",
        ".rs",
        ".rb",
        ".sh",
        ".sql",
        ".yaml",
        ".yml",
        ".toml",
    ):
        assert suffix in supported_suffixes()
    config = tmp_path / "settings.yaml"
    config.write_text("name: kgrag\nlimits:\n  max: 3\n")
    assert load_file(config).blocks[0].lang == "yaml"


@pytest.mark.parametrize("suffix", [".pptx", ".xlsx", ".epub", ".odt"])
def test_damaged_archives_are_one_clear_line(tmp_path, suffix):
    path = tmp_path / f"bad{suffix}"
    _zip(path, {"hello.txt": "not the parts this format needs"})
    with pytest.raises(LoaderError, match=f"corrupt \\{suffix}"):
        load_file(path)
