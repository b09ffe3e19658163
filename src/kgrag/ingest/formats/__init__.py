"""Format parsers: bytes or text of one file format in, :class:`~kgrag.ingest.blocks.Parsed` out.

Each module wraps one real library and translates its errors into
:class:`~kgrag.errors.LoaderError`:

* :mod:`.markdown` - markdown-it-py (CommonMark + tables)
* :mod:`.html` - readability-lxml for the main content, lxml for its blocks
* :mod:`.pdf` - pypdf, text per page, repeated headers / footers dropped
* :mod:`.docx` - python-docx's element classes over a streamed ``document.xml``
  (:mod:`.docx_parts`), headings by style, lists, tables, page breaks
* :mod:`.text` - plain text, paragraphs between blank lines
* :mod:`.pptx` - python-pptx, a section per slide, tables, speaker notes
* :mod:`.xlsx` - openpyxl (read-only), a section per sheet of labelled rows
* :mod:`.csv_table` - the standard library's csv, sniffed dialect, labelled rows
* :mod:`.tabular` - rows as ``Header: value; ...`` lines (.xlsx, .csv)
* :mod:`.json_records` - JSON / JSON Lines records as flattened key paths
* :mod:`.epub` - lxml over parts read through :mod:`kgrag.ingest.archive`,
  chapters in spine order (:mod:`.epub_toc` titles, :mod:`.epub_chapter`
  through the HTML block walker)
* :mod:`.odt` - lxml pull parser over a streamed ``content.xml``
* :mod:`.rtf` - striprtf, paragraphs and tables
* :mod:`.xml_doc` - lxml, element paths as sections
* :mod:`.code` - source and configuration files as code blocks
* :mod:`.safe_xml` - lxml parsing without DTDs, entities or network

See docs/ingestion-formats.md.
"""
