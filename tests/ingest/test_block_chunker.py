"""Block chunker: examples plus Hypothesis properties (no text lost or doubled, sizes, offsets)."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgrag.config.settings import Settings
from kgrag.errors import ConfigError
from kgrag.ingest.block_chunker import chunk_blocks, locate_chunks, make_block_chunks
from kgrag.ingest.blocks import Block, BlockBuilder
from kgrag.ingest.chunking import make_chunks, make_chunks_for_settings
from kgrag.ingest.formats.markdown import parse_markdown
from kgrag.ingest.formats.text import parse_text
from kgrag.llm.tokenizer import get_tokenizer
from kgrag.types import Document

TOK = get_tokenizer()
PROPS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

words = st.text(
    alphabet=st.sampled_from([*list("abcdefxyz"), "中", "文", "é", "🙂", "1"]),
    min_size=1,
    max_size=12,
)
sentences = st.lists(words, min_size=1, max_size=12).map(lambda ws: " ".join(ws) + ".")
prose = st.lists(sentences, min_size=1, max_size=8).map(" ".join)
rows = st.lists(st.lists(words, min_size=1, max_size=4), min_size=1, max_size=6)
block_specs = st.lists(
    st.one_of(
        st.tuples(st.just("heading"), words, st.integers(1, 4)),
        st.tuples(st.just("paragraph"), prose, st.just(0)),
        st.tuples(st.just("list_item"), prose, st.integers(1, 3)),
        st.tuples(st.just("table"), rows, st.just(0)),
        st.tuples(
            st.just("code"), st.lists(words, min_size=1, max_size=10).map("\n".join), st.just(0)
        ),
        st.tuples(st.just("page_break"), st.integers(1, 9), st.just(0)),
    ),
    min_size=1,
    max_size=14,
)


def build(specs):
    b = BlockBuilder()
    for kind, value, level in specs:
        if kind == "heading":
            b.heading(value, level)
        elif kind == "list_item":
            b.list_item(value, level)
        elif kind == "table":
            b.table(value)
        elif kind == "page_break":
            b.page_break(value)
        else:
            getattr(b, kind)(value)
    return b.build()


def rebuild(content, pieces):
    """The text the chunks cover, each overlap taken once (gaps between chunks from ``content``)."""
    text, end = "", None
    for p in pieces:
        if end is None:
            text = p.content
        elif p.start < end:
            text += p.content[end - p.start :]
        else:
            text += content[end : p.start] + p.content
        end = p.end
    return text


@PROPS
@given(block_specs, st.integers(min_value=8, max_value=90), st.data())
def test_chunks_lose_nothing_double_nothing_and_fit(specs, size, data):
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    parsed = build(specs)
    pieces = chunk_blocks(parsed.content, parsed.blocks, TOK, size, overlap)
    content = parsed.content
    for p in pieces:
        assert (
            p.content
            == content[p.start : p.end]
            == content[p.location["start"] : p.location["end"]]
        )
        assert p.tokens == TOK.count(p.content) <= size
        assert p.content == p.content.strip() and p.content
    assert [p.order for p in pieces] == list(range(len(pieces)))
    assert all(a.start < b.start and a.end < b.end for a, b in itertools.pairwise(pieces))
    assert all(not content[a.end : b.start].strip() for a, b in itertools.pairwise(pieces))
    shared = [content[b.start : a.end] for a, b in itertools.pairwise(pieces) if b.start < a.end]
    assert all(TOK.count(text) <= overlap for text in shared)
    if pieces:
        assert rebuild(content, pieces) == content.strip()
    else:
        assert not content.strip()


def _edges_inside(pieces, start, end):
    return [x for p in pieces for x in (p.start, p.end) if start < x < end]


@PROPS
@given(block_specs, st.integers(min_value=24, max_value=90), st.data())
def test_cuts_fall_between_rows_and_sentences_that_fit(specs, size, data):
    overlap = data.draw(st.integers(min_value=0, max_value=size // 3))
    parsed = build(specs)
    content = parsed.content
    pieces = chunk_blocks(content, parsed.blocks, TOK, size, overlap)
    for block in parsed.blocks:
        text = content[block.start : block.end]
        if block.kind == "table" and all(TOK.count(r) <= size for r in text.split("\n")):
            for x in _edges_inside(pieces, block.start, block.end):
                assert content[x] == "\n" or content[x - 1] == "\n"
        if block.kind == "paragraph" and all(
            TOK.count(s) <= size for s in re.split(r"(?<=\.) ", text)
        ):
            for x in _edges_inside(pieces, block.start, block.end):
                assert content[x - 1] in ". " or content[x] == " "


def test_sections_pages_and_code_kind_in_locations():
    b = BlockBuilder()
    b.page_break(1)
    b.heading("3 Terms", 1)
    b.heading("3.2 Licensing", 2)
    b.paragraph(" ".join(f"Clause {i} binds the licensee." for i in range(30)))
    b.page_break(2)
    b.paragraph("The licence ends on notice.")
    b.heading("4 Code", 1)
    b.code("\n".join(f"x{i} = {i}" for i in range(40)))
    parsed = b.build()
    pieces = chunk_blocks(parsed.content, parsed.blocks, TOK, size=60, overlap=10)
    assert pieces[0].location["section"] == ["3 Terms", "3.2 Licensing"]  # not just "3 Terms"
    assert pieces[0].location["pages"] == [1, 1]
    spanning = [p for p in pieces if "The licence ends" in p.content]
    assert spanning[0].location["pages"] == [1, 2]
    code = [p for p in pieces if "x39 = 39" in p.content or "4 Code" in p.content]
    assert "4 Code" in code[0].content and "kind" not in code[0].location  # not code only
    assert code[-1].location["section"] == ["4 Code"] and code[-1].location["kind"] == "code"
    assert code[-1].location["pages"] == [2, 2]
    alone = chunk_blocks("x = 1\ny = 2", [Block("code", 0, 11)], TOK, 60, 0)
    assert alone[0].location["kind"] == "code"


def test_a_chunk_prefers_to_end_before_a_heading():
    b = BlockBuilder()
    b.heading("One", 1)
    b.paragraph(" ".join(["Alpha beta gamma delta."] * 8))  # about 40 tokens
    b.heading("Two", 1)
    b.paragraph(" ".join(["Epsilon zeta eta theta."] * 8))
    parsed = b.build()
    pieces = chunk_blocks(parsed.content, parsed.blocks, TOK, size=70, overlap=10)
    assert [p.location["section"] for p in pieces] == [["One"], ["Two"]]
    assert pieces[1].content.startswith("Two")  # no overlap carried into a new section


def test_an_oversize_sentence_is_cut_by_tokens():
    text = " ".join(f"word{i}" for i in range(400))  # one long sentence
    parsed = parse_text(text)
    pieces = chunk_blocks(parsed.content, parsed.blocks, TOK, size=50, overlap=0)
    assert len(pieces) > 5 and all(p.tokens <= 50 for p in pieces)
    assert " ".join(p.content for p in pieces) == text


def test_make_block_chunks_dedupes_and_keeps_location():
    parsed = parse_markdown("# A\n\nSame text.\n\n# B\n\nSame text.\n")
    doc = Document(id="d", content=parsed.content, blocks=parsed.blocks, file_path="/x.md")
    chunks = make_block_chunks(doc, TOK, size=3, overlap=0)
    assert [c.content for c in chunks] == ["A", "Same text.", "B"]  # the repeat is kept once
    assert [c.order for c in chunks] == [0, 1, 2]
    assert all(c.location["end"] - c.location["start"] == len(c.content) for c in chunks)


def test_settings_choose_the_chunker():
    parsed = parse_markdown("# Title\n\nFirst paragraph.\n\nSecond paragraph.\n")
    with_blocks = Document(id="d", content=parsed.content, blocks=parsed.blocks)
    raw = Document(id="d", content=parsed.content)
    plain = Settings(chunk_size=100, chunk_overlap=10)
    chunks = make_chunks_for_settings(with_blocks, plain, TOK)
    assert chunks[0].location["section"] == ["Title"]
    assert make_chunks_for_settings(raw, plain, TOK) == make_chunks(raw, TOK, size=100, overlap=10)
    split = Settings(
        chunk_size=100, chunk_overlap=10, split_by_character="\n\n", split_by_character_only=True
    )
    by_split = make_chunks_for_settings(with_blocks, split, TOK)
    assert [c.content for c in by_split] == ["Title", "First paragraph.", "Second paragraph."]
    assert [c.location["section"] for c in by_split] == [["Title"]] * 3
    assert by_split[2].location["start"] == parsed.content.index("Second")


def test_locate_chunks_finds_repeated_text_in_order():
    parsed = parse_text("x\n\ny\n\nx")
    chunks = make_chunks(
        Document(id="d", content=parsed.content), TOK, method="recursive", size=1, overlap=0
    )
    locate_chunks(chunks, parsed.content, parsed.blocks)
    assert [c.location["start"] for c in chunks] == [0, 3]  # the repeated "x" is one chunk


def test_bad_sizes_are_config_errors():
    with pytest.raises(ConfigError):
        chunk_blocks("x", [], TOK, size=10, overlap=10)
