"""Loaders: real files of every supported type, and the failure modes."""

from __future__ import annotations

import docx
import pytest

from kgrag.errors import LoaderError
from kgrag.ingest.ids import doc_id, source_doc_id
from kgrag.ingest.loaders import decode_text, load_file, load_paths, supported_suffixes
from tests.ingest.pdf_fixture import minimal_pdf


def _docx(path, paragraphs, table=None):
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        t = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                t.cell(r, c).text = value
    document.add_paragraph("After the table.")
    document.save(path)


def test_text_file_is_known_by_its_canonical_path(tmp_path, monkeypatch):
    p = tmp_path / "a.txt"
    p.write_text("Hello world.\r\nSecond line.\rThird.", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    doc = load_file("./a.txt")
    assert doc.content == "Hello world.\nSecond line.\nThird."
    assert doc.source == doc.file_path == str(p.resolve())
    assert doc.id == source_doc_id(doc.source) != doc_id(doc.content)


@pytest.mark.parametrize(
    "data, expected",
    [
        ("café 中文".encode(), "café 中文"),
        (b"\xef\xbb\xbf" + "café".encode(), "café"),
        ("café 中文".encode("utf-16"), "café 中文"),
        ("naïve – “quote”".encode("cp1252"), "naïve – “quote”"),
    ],
)
def test_decode_text_detects_encodings(data, expected):
    assert decode_text(data) == expected


def test_markdown_and_rst_are_text(tmp_path):
    for name in ("n.rst", "n.text"):
        (tmp_path / name).write_text("# Title\n\nBody", encoding="utf-8")
        assert load_file(tmp_path / name).content == "# Title\n\nBody"
    for name in (
        "n.md",
        "n.markdown",
    ):  # parsed: markup dropped, a heading block (formats.markdown)
        (tmp_path / name).write_text("# Title\n\nBody", encoding="utf-8")
        doc = load_file(tmp_path / name)
        assert doc.content == "Title\n\nBody" and doc.blocks[0].kind == "heading"


def test_pdf_text_is_extracted(tmp_path):
    p = tmp_path / "doc.pdf"
    p.write_bytes(minimal_pdf(["Ebenezer Scrooge keeps a counting-house.", "Marley was dead."]))
    content = load_file(p).content
    assert "Ebenezer Scrooge keeps a counting-house." in content
    assert "Marley was dead." in content


def test_docx_paragraphs_and_tables_in_order(tmp_path):
    p = tmp_path / "doc.docx"
    _docx(p, ["First paragraph.", "Second paragraph."], [["Name", "Role"], ["Scrooge", "Miser"]])
    content = load_file(p).content
    assert content.splitlines() == [
        "First paragraph.",
        "Second paragraph.",
        "Name | Role",
        "Scrooge | Miser",
        "After the table.",
    ]


def test_html_drops_script_and_keeps_blocks(tmp_path):
    p = tmp_path / "page.html"
    p.write_text(
        "<html><head><style>p{}</style><script>alert(1)</script></head>"
        "<body><h1>Title</h1><p>One &amp; two</p><p>Three<br>four</p></body></html>"
    )
    assert load_file(p).content == "Title\n\nOne & two\n\nThree\nfour"


def test_folder_is_walked_sorted_and_hidden_skipped(tmp_path):
    (tmp_path / "b.txt").write_text("bee")
    (tmp_path / "a.md").write_text("ay")
    (tmp_path / ".hidden.txt").write_text("secret")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.txt").write_text("git")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.txt").write_text("see")
    report = load_paths([tmp_path])
    assert [d.content for d in report.documents] == ["ay", "bee", "see"]
    assert report.errors == []


def test_bad_files_become_errors_and_the_batch_goes_on(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("fine")
    corrupt = tmp_path / "broken.pdf"
    corrupt.write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)))
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n\n ")
    bad_docx = tmp_path / "bad.docx"
    bad_docx.write_bytes(b"PK\x03\x04 not a zip")
    missing = tmp_path / "missing.txt"
    report = load_paths([corrupt, binary, good, empty, bad_docx, missing])
    assert [d.content for d in report.documents] == ["fine"]
    by_path = {e.path: e for e in report.errors}
    assert set(by_path) == {str(corrupt), str(binary), str(empty), str(bad_docx), str(missing)}
    assert all(isinstance(e, LoaderError) for e in report.errors)
    assert "corrupt" in by_path[str(corrupt)].reason
    assert ".pdf" in by_path[str(binary)].reason and ".docx" in by_path[str(binary)].reason
    assert "no text" in by_path[str(empty)].reason
    assert str(binary) in str(by_path[str(binary)])


def test_binary_content_with_text_suffix_is_rejected(tmp_path):
    p = tmp_path / "fake.txt"
    p.write_bytes(b"abc\x00\x01\x02def")
    with pytest.raises(LoaderError, match="binary"):
        load_file(p)


def test_supported_suffixes_listed():
    assert {".txt", ".md", ".pdf", ".docx", ".html", ".htm"} <= set(supported_suffixes())
