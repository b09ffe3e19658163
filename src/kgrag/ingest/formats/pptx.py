"""PPTX through python-pptx: each slide a section.

* A slide opens with a level-1 heading: the text of its title placeholder,
  or ``Slide N`` (its 1-based position) when it has none.
* Every other shape in the slide's order (z-order, which is the order
  they were added): a text frame becomes one paragraph (its paragraphs
  on separate lines), a table a table block (a merged cell once), a group
  is read shape by shape. Pictures, charts and media carry no text here.
* Speaker notes follow as paragraphs in the slide's section.

python-pptx opens the zip itself, so it is handed the file only once
every member has inflated through the bounded archive reader
(:meth:`~kgrag.ingest.archive.Archive.verified_bytes`): the sizes it then
trusts are the true ones.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, cast

from kgrag.errors import LoaderError
from kgrag.ingest.archive import Archive
from kgrag.ingest.blocks import BlockBuilder, Parsed
from kgrag.ingest.formats.tabular import Check

if TYPE_CHECKING:
    from pptx.shapes.autoshape import Shape
    from pptx.shapes.base import BaseShape
    from pptx.shapes.graphfrm import GraphicFrame
    from pptx.shapes.group import GroupShape
    from pptx.slide import Slide
    from pptx.table import Table
    from pptx.text.text import TextFrame


def frame_text(frame: TextFrame) -> str:
    """A text frame's text, paragraphs on lines (python-pptx marks soft breaks ``\\v``)."""
    return frame.text.replace("\v", "\n")


def table_rows(table: Table) -> list[list[str]]:
    """Cells per row; cells covered by a merge are left out."""
    return [[cell.text for cell in row.cells if not cell.is_spanned] for row in table.rows]


def _shape(builder: BlockBuilder, shape: BaseShape) -> None:
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        for inner in cast("GroupShape", shape).shapes:
            _shape(builder, inner)
    elif shape.has_table:
        builder.table(table_rows(cast("GraphicFrame", shape).table))
    elif shape.has_text_frame:
        builder.paragraph(frame_text(cast("Shape", shape).text_frame))


def _title(slide: Slide, number: int) -> tuple[str, BaseShape | None]:
    """The slide's heading text and its title shape (``None`` when it has none)."""
    shape = slide.shapes.title
    text = " ".join(frame_text(shape.text_frame).split()) if shape is not None else ""
    return (text or f"Slide {number}"), shape


def _slide(builder: BlockBuilder, slide: Slide, number: int) -> None:
    heading, title_shape = _title(slide, number)
    builder.heading(heading, 1)
    for shape in slide.shapes:
        if title_shape is None or shape.shape_id != title_shape.shape_id:
            _shape(builder, shape)
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        for line in frame_text(slide.notes_slide.notes_text_frame).split("\n"):
            builder.paragraph(line)


def parse_pptx(source: Archive | Path, name: str = "<pptx>", check: Check | None = None) -> Parsed:
    """Blocks and flat text of a presentation, slide by slide.

    ``check(length)`` is called after every slide (a size limit that raises
    stops the reading early).
    """
    try:
        from pptx import Presentation
    except ImportError as exc:  # python-pptx is the "office" extra
        raise LoaderError(name, f"reading .pptx needs pip install 'kgrag[office]' ({exc})") from exc
    archive = Archive.of(source, name, ".pptx")
    try:
        presentation = Presentation(io.BytesIO(archive.verified_bytes()))
        builder = BlockBuilder()
        for number, slide in enumerate(presentation.slides, start=1):
            _slide(builder, slide, number)
            if check is not None:
                check(builder.length)
    except LoaderError:
        raise
    except Exception as exc:  # zipfile, lxml, KeyError for missing parts, PackageNotFoundError
        raise LoaderError(name, f"unreadable or corrupt .pptx: {exc}") from exc
    return builder.build()
