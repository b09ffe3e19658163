"""Blocks: offsets by construction, section paths, the stored form and its checks."""

from __future__ import annotations

from kgrag.ingest.blocks import (
    Block,
    BlockBuilder,
    decode_blocks,
    encode_blocks,
    fill_gaps,
    text_blocks,
    usable_blocks,
)


def _doc():
    b = BlockBuilder()
    b.heading("Guide", 1)
    b.paragraph("  Intro text.  ")
    b.list_item("first")
    b.list_item("nested", 2)
    b.heading("3 Terms", 2)
    b.heading("3.2 Licensing", 3)
    b.table([["Plan", "Price"], ["Basic", "10"], ["", " "]])
    b.page_break(2)
    b.code("    indented = 1\n", "python")
    b.heading("4 Fees", 2)
    b.quote("A quote.")
    return b.build()


def test_every_block_span_is_its_text():
    parsed = _doc()
    texts = [(b.kind, parsed.content[b.start : b.end]) for b in parsed.blocks]
    assert texts == [
        ("heading", "Guide"),
        ("paragraph", "Intro text."),
        ("list_item", "first"),
        ("list_item", "nested"),
        ("heading", "3 Terms"),
        ("heading", "3.2 Licensing"),
        ("table", "Plan | Price\nBasic | 10"),
        ("page_break", ""),
        ("code", "    indented = 1"),
        ("heading", "4 Fees"),
        ("quote", "A quote."),
    ]
    assert "first\nnested" in parsed.content  # list items share a paragraph


def test_section_paths_follow_heading_levels():
    by_text = {_doc().content[b.start : b.end]: b for b in _doc().blocks}
    assert by_text["Intro text."].section == ("Guide",)
    assert by_text["3.2 Licensing"].section == ("Guide", "3 Terms", "3.2 Licensing")
    assert by_text["Plan | Price\nBasic | 10"].rows == (("Plan", "Price"), ("Basic", "10"))
    assert by_text["4 Fees"].section == ("Guide", "4 Fees")
    assert by_text["A quote."].section == ("Guide", "4 Fees") and by_text["A quote."].page == 2
    assert by_text["Intro text."].page is None


def test_encoded_blocks_round_trip_and_lists_sections_once():
    parsed = _doc()
    data = encode_blocks(parsed.blocks)
    assert len(data["sections"]) == len({b.section for b in parsed.blocks})
    assert decode_blocks(data, parsed.content) == parsed.blocks
    assert encode_blocks(None) is None and encode_blocks([]) is None


def test_decoding_drops_what_does_not_fit_the_text():
    parsed = _doc()
    data = encode_blocks(parsed.blocks)
    data["blocks"].append(["p", 5, 10_000, 0, 0, None])  # past the end
    data["blocks"].append(["?", 0, 1, 0, 0, None])  # unknown kind
    assert decode_blocks(data, parsed.content) == parsed.blocks
    assert decode_blocks({"v": 99}, parsed.content) is None
    assert decode_blocks(None, parsed.content) is None
    assert decode_blocks({"v": 1, "blocks": [["p", "x"]]}, parsed.content) is None


def test_text_paragraphs_are_runs_between_blank_lines():
    content = "One line.\nSame paragraph.\n  \n\nTwo.  \n\n\n  Three\n"
    assert [content[b.start : b.end] for b in text_blocks(content)] == [
        "One line.\nSame paragraph.",
        "Two.",
        "Three",
    ]


def test_text_no_block_covers_becomes_paragraphs():
    content = "Head\n\nbody text\n\ntail"
    blocks = [Block("heading", 0, 4, 1, ("Head",))]
    filled = fill_gaps(content, blocks)
    assert [content[b.start : b.end] for b in filled] == ["Head", "body text\n\ntail"]
    assert filled[1].section == ("Head",)
    overlapping = [Block("paragraph", 0, 10), Block("paragraph", 5, 12), Block("paragraph", 3, 99)]
    assert [(b.start, b.end) for b in usable_blocks(content, overlapping)] == [(0, 10), (11, 21)]
