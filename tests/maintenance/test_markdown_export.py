"""Markdown: headings, counts, anchors and links, read back with markdown-it-py."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from kgrag.maintenance.exports import render

from .conftest import AWKWARD, export_files

ANCHOR = re.compile(r'<a id="([^"]+)"></a>')


def plain(inline: Token) -> str:
    """The text a reader sees in an inline token (escapes resolved)."""
    return "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))


def headings(tokens: list[Token]) -> list[tuple[str, str]]:
    return [
        (tok.tag, plain(tokens[i + 1]))
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open"
    ]


def section(tokens: list[Token], title: str) -> list[Token]:
    """The tokens after the ``## title`` heading, up to the next ``##`` one."""
    start = next(
        i for i, t in enumerate(tokens) if t.type == "inline" and t.content == title and i > 0
    )
    end = next(
        (i for i in range(start, len(tokens)) if tokens[i].type == "heading_open"), len(tokens)
    )
    return tokens[start + 2 : end]


def assert_report(data: dict[str, Any], text: str) -> None:
    tokens = MarkdownIt().parse(text)
    names = [" ".join(e["name"].split()) for e in data["entities"]]
    expected = [("h1", "Knowledge graph"), ("h2", "Entities")]
    expected += [("h3", n) for n in names] + [("h2", "Relations")]
    assert headings(tokens) == expected  # no description ever opens a heading
    counts = [t.content for t in tokens[: tokens.index(next(t for t in tokens if t.tag == "h2"))]]
    for label in ("entities", "relations", "chunks", "documents"):
        assert f"{label.capitalize()}: {len(data[label])}" in counts
    anchors = ANCHOR.findall(text)
    assert len(anchors) == len(set(anchors)) == len(names)
    links = [t.attrGet("href") for t in tokens_flat(tokens) if t.type == "link_open"]
    assert links and {unquote(str(h))[1:] for h in links} <= set(anchors)
    items = [t for t in section(tokens, "Relations") if t.type == "list_item_open"]
    assert len([t for t in items if t.level == 1]) == len(data["relations"])


def tokens_flat(tokens: list[Token]) -> list[Token]:
    return [c for t in tokens for c in [t, *(t.children or [])]]


def test_the_index_report_has_a_section_per_entity(index, exported, tmp_path):
    [path] = export_files(index, tmp_path / "graph.md", "md")
    assert_report(exported, path.read_text(encoding="utf-8"))


def test_awkward_text_stays_text():
    text = render(AWKWARD, "md")
    assert_report(AWKWARD, text)
    tokens = MarkdownIt().parse(text)
    flat = tokens_flat(tokens)
    assert not [t for t in flat if t.type == "code_inline"]
    assert not [t for t in tokens if t.type in ("blockquote_open", "ordered_list_open", "hr")]
    html = [t.content for t in flat if t.type in ("html_inline", "html_block")]
    assert len(html) == 2 * len(AWKWARD["entities"])  # the anchors, nothing else
    assert sorted(set(html)) == ["</a>", *sorted(f'<a id="{a}">' for a in ANCHOR.findall(text))]


def test_relations_of_an_entity_are_listed_under_it():
    tokens = MarkdownIt().parse(render(AWKWARD, "md"))
    start = next(i for i, t in enumerate(tokens) if t.type == "inline" and t.content == "刘备")
    end = next(i for i in range(start, len(tokens)) if tokens[i].type == "heading_open")
    linked = [plain(t) for t in tokens[start:end] if t.type == "inline" and "](#" in t.content]
    assert len(linked) == 2 and linked[1].startswith("玄德 (weight 1.5; keywords: alias)")
