"""Format parsers: bytes or text of one file format in, :class:`~kgrag.ingest.blocks.Parsed` out.

Each module wraps one real library and translates its errors into
:class:`~kgrag.errors.LoaderError`:

* :mod:`.markdown` - markdown-it-py (CommonMark + tables)
* :mod:`.html` - readability-lxml for the main content, lxml for its blocks
* :mod:`.pdf` - pypdf, text per page, repeated headers / footers dropped
* :mod:`.docx` - python-docx, headings by style, lists, tables, page breaks
* :mod:`.text` - plain text, paragraphs between blank lines
"""
