"""Format parsers on generated files: text, section paths, pages, dropped page furniture."""

from __future__ import annotations

import io

import docx
import pytest
from pypdf import PdfReader, PdfWriter

from kgrag.errors import LoaderError
from kgrag.ingest.block_chunker import chunk_blocks
from kgrag.ingest.formats.docx import parse_docx
from kgrag.ingest.formats.html import parse_html
from kgrag.ingest.formats.markdown import parse_markdown
from kgrag.ingest.formats.pdf import join_lines, parse_pdf
from kgrag.ingest.formats.text import parse_text
from kgrag.ingest.loaders import load_file
from kgrag.llm.tokenizer import get_tokenizer
from tests.ingest.pdf_fixture import minimal_pdf

TOK = get_tokenizer()

MARKDOWN = """---
title: Guide
---
# Licensing guide

Read *this* **carefully**, see [the terms](http://example.com/terms).

## 3 Terms

### 3.2 Licensing

- A licence is **personal**.
  - It cannot be sold.
- Fees are due yearly.

| Plan | Price |
|------|-------|
| Basic | *10* |
| Pro | 25 |

```python
def fee(plan):
    return PRICES[plan]
```

> Quoted _advice_.
"""

NAV = ["Home", "Mills and Factories", "Notable People", "Archive Search"]
FOOTER = ["Copyright 2024 Leeds Industrial History Society", "Terms of use", "Privacy policy"]
COOKIE = "We use cookies to improve your experience"
PARAS = [
    (
        "The Halden Works opened its new foundry in Leeds in 1891, employing more than four hundred "
        "workers who cast iron frames for looms and printing presses sold across the north of England."
    ),
    (
        "Its owner, Margaret Halden, insisted that every apprentice spend a year in the drawing office "
        "before touching a furnace, a rule that made the works famous for the precision of its castings."
    ),
    (
        "By 1905 the foundry supplied frames to mills in Bradford, Huddersfield and Halifax, and its "
        "catalogue listed more than sixty standard patterns, each with a drawing number and a price."
    ),
]


def html_page() -> str:
    """A realistic page: cookie banner, header with navigation, article, sidebar, footer."""
    nav = "".join(f'<li><a href="/{i}">{n}</a></li>' for i, n in enumerate(NAV))
    body = "".join(f"<p>{p}</p>" for p in PARAS)
    foot = "".join(f"<li><a href='/f'>{f}</a></li>" for f in FOOTER[1:])
    return f"""<!DOCTYPE html><html><head><title>The Halden Works | Leeds Industrial History</title>
<script>var tracking = 1;</script></head><body>
<div id="cookie-banner" class="cookie-consent">{COOKIE}. <button>Accept all</button></div>
<header class="site-header"><a href="/">Leeds Industrial History</a><nav><ul>{nav}</ul></nav></header>
<main><article><h1>The Halden Works foundry</h1>{body}
<h2>Products</h2><p>The works made three kinds of frames for its customers.</p>
<ul><li>Loom frames for cotton mills</li><li>Press frames for printers</li></ul>
<table><tr><th>Product</th><th>Customer</th></tr><tr><td>Loom frame</td><td>Salts Mill</td></tr></table>
<h2>Closure</h2><p>The foundry closed in 1962 when welded steel frames replaced cast iron.</p>
</article><aside><h3>Related articles</h3><a href="/t">The Leeds tramways</a></aside></main>
<footer><p>{FOOTER[0]}. All rights reserved.</p><ul>{foot}</ul></footer></body></html>"""


def three_page_pdf() -> bytes:
    """Three pages under one running header and a ``Page n of 3`` footer."""
    bodies = [
        [
            "The committee met in March to discuss the new licensing terms for all",
            "members of the associ-",
            "ation and agreed on them.",
        ],
        ["Fees were raised by ten percent after a long debate about the accounts."],
        [
            "The archive moved to Leeds in the spring of that year, and the old",
            "building was sold.",
        ],
    ]
    writer = PdfWriter()
    for n, body in enumerate(bodies, start=1):
        page = minimal_pdf(["ACME Annual Report 2024", *body, f"Page {n} of 3"])
        writer.append(PdfReader(io.BytesIO(page)))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_file(path) -> None:
    d = docx.Document()
    d.add_heading("Handbook", 0)
    d.add_heading("Introduction", 1)
    d.add_paragraph("Welcome to the handbook.")
    d.add_paragraph("Bring your badge.", style="List Bullet")
    d.add_paragraph("Sign in at the desk.", style="List Bullet 2")
    d.add_heading("Rates", 2)
    table = d.add_table(rows=2, cols=2)
    for r, row in enumerate([["Plan", "Price"], ["Basic", "10"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    d.add_page_break()
    d.add_heading("Appendix", 1)
    d.add_paragraph("Contact the office.")
    d.save(path)


def _by_text(parsed):
    return {parsed.content[b.start : b.end]: b for b in parsed.blocks}


def test_markdown_text_sections_tables_and_code():
    parsed = parse_markdown(MARKDOWN)
    blocks = _by_text(parsed)
    assert "Read this carefully, see the terms." in parsed.content
    assert "*" not in parsed.content.replace("PRICES", "") and "](" not in parsed.content
    assert blocks["Read this carefully, see the terms."].section == ("Licensing guide",)
    item = blocks["A licence is personal."]
    assert item.kind == "list_item" and item.level == 1
    assert blocks["It cannot be sold."].level == 2
    assert item.section == ("Licensing guide", "3 Terms", "3.2 Licensing")
    table = blocks["Plan | Price\nBasic | 10\nPro | 25"]
    assert table.kind == "table" and table.rows[1] == ("Basic", "10")
    code = blocks["def fee(plan):\n    return PRICES[plan]"]
    assert code.kind == "code" and code.lang == "python"
    assert blocks["Quoted advice."].kind == "quote"
    assert blocks["title: Guide"].kind == "code" and blocks["title: Guide"].lang == "yaml"


def test_html_keeps_the_article_and_drops_page_furniture():
    parsed = parse_html(html_page())
    for text in [*PARAS, "The foundry closed in 1962", "Loom frame | Salts Mill"]:
        assert text in parsed.content
    blocks = _by_text(parsed)
    assert blocks["The Halden Works foundry"].kind == "heading"
    assert blocks["Loom frames for cotton mills"].kind == "list_item"
    assert blocks["Loom frames for cotton mills"].section == (
        "The Halden Works foundry",
        "Products",
    )
    chunks = chunk_blocks(parsed.content, parsed.blocks, TOK, size=40, overlap=8)
    for furniture in [*NAV, *FOOTER, COOKIE, "Related articles", "tramways", "tracking"]:
        assert not any(furniture in c.content for c in chunks), furniture


def test_html_title_opens_a_page_without_h1():
    parsed = parse_html(
        "<html><head><title>Notes - My Site</title></head>"
        "<body><nav>Menu</nav><div>Just <b>some</b> text.</div></body></html>"
    )
    assert parsed.content == "Notes\n\nJust some text."
    assert parsed.blocks[1].section == ("Notes",)


def test_pdf_pages_without_running_header_and_footer():
    parsed = parse_pdf(three_page_pdf())
    assert "ACME" not in parsed.content and "of 3" not in parsed.content
    blocks = _by_text(parsed)
    first = (
        "The committee met in March to discuss the new licensing terms for all "
        "members of the association and agreed on them."
    )
    assert blocks[first].page == 1
    assert (
        blocks["Fees were raised by ten percent after a long debate about the accounts."].page == 2
    )
    assert (
        blocks[
            "The archive moved to Leeds in the spring of that year, and the old building was sold."
        ].page
        == 3
    )
    assert [b.page for b in parsed.blocks if b.kind == "page_break"] == [1, 2, 3]
    assert any("header/footer" in w for w in parsed.warnings)


def test_pdf_line_joining():
    assert join_lines(["a coun-", "ting house"]) == "a counting house"
    assert join_lines(["see page 12-", "13 of the"]) == "see page 12- 13 of the"
    assert join_lines(["Leeds-", "Bradford line"]) == "Leeds- Bradford line"


def test_pdf_damaged_file_is_a_loader_error():
    with pytest.raises(LoaderError, match="corrupt"):
        parse_pdf(b"%PDF-1.4\nnot really", "x.pdf")


def test_docx_headings_lists_tables_and_page_break(tmp_path):
    path = tmp_path / "h.docx"
    docx_file(path)
    parsed = parse_docx(path, str(path))
    assert parsed.content.splitlines() == [
        "Handbook",
        "Introduction",
        "Welcome to the handbook.",
        "Bring your badge.",
        "Sign in at the desk.",
        "Rates",
        "Plan | Price",
        "Basic | 10",
        "Appendix",
        "Contact the office.",
    ]
    blocks = _by_text(parsed)
    assert blocks["Handbook"].level == 0 and blocks["Introduction"].level == 1
    assert blocks["Welcome to the handbook."].section == ("Handbook", "Introduction")
    assert (
        blocks["Sign in at the desk."].kind == "list_item"
        and blocks["Sign in at the desk."].level == 2
    )
    assert blocks["Plan | Price\nBasic | 10"].section == ("Handbook", "Introduction", "Rates")
    breaks = [b for b in parsed.blocks if b.kind == "page_break"]
    assert len(breaks) == 1 and breaks[0].page is None  # no layout in the file: no number
    assert blocks["Contact the office."].section == ("Handbook", "Appendix")


def test_docx_damaged_file_is_a_loader_error():
    with pytest.raises(LoaderError, match="corrupt"):
        parse_docx(b"PK\x03\x04 not a zip", "bad.docx")


def test_text_is_kept_as_is_with_paragraph_blocks():
    parsed = parse_text("One.\nStill one.\n\nTwo.")
    assert parsed.content == "One.\nStill one.\n\nTwo."
    assert [parsed.content[b.start : b.end] for b in parsed.blocks] == ["One.\nStill one.", "Two."]


def test_loaders_give_documents_their_blocks(tmp_path):
    files = {"guide.md": MARKDOWN, "page.html": html_page(), "notes.txt": "One.\n\nTwo."}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "report.pdf").write_bytes(three_page_pdf())
    docx_file(tmp_path / "handbook.docx")
    for name in [*files, "report.pdf", "handbook.docx"]:
        doc = load_file(tmp_path / name)
        assert doc.blocks, name
        assert all(0 <= b.start <= b.end <= len(doc.content) for b in doc.blocks)
    pdf = load_file(tmp_path / "report.pdf")
    assert "ACME" not in pdf.content and any("header/footer" in w for w in pdf.warnings)
    assert "Accept all" not in load_file(tmp_path / "page.html").content
