"""Markdown and HTML to plain prose for the LLM-free extractor.

NER reads markup as text: ``*Tomas Becker*`` becomes a name with a star,
``| Product | Year |`` a name with pipes, and an emphasis marker can even
end a sentence ("founded by *Tomas Becker* and **Ana Lima**" loses its
second founder). :func:`strip_markup` turns raw Markdown (or a little
HTML) into prose lines before any analyzer sees it:

* fenced code blocks, lines that read as code, table separators and
  horizontal rules become blank lines (non-prose, and block breaks);
* a table row becomes one sentence of its cells (``Falcon, 2016, Drone
  inspection.``), so a row's names co-occur; a header row (column labels)
  goes;
* ``#`` headings lose their hashes and stand alone as blocks (sections);
* emphasis (``*x*``, ``**x**``, ``_x_``, ``__x__``, ``~~x~~``) keeps its
  text, links and images keep their text, HTML tags go (block tags such
  as ``<p>`` and ``<br>`` become block breaks) and entities are decoded;
* block-quote and list markers are dropped.

:func:`has_markup` tells a name that still carries such syntax (or code):
those names are dropped. Text without markup passes through unchanged
but for emphasis markers (Project Gutenberg's ``_italics_`` included).
"""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^\s{0,3}(?:```|~~~)")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_RULE = re.compile(r"^\s*(?:(?:[-*_]\s*){3,}|=+)\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
_QUOTE_OR_BULLET = re.compile(r"^\s*(?:>\s?)+|^\s*(?:[-*+]|\d{1,3}[.)])\s+(?=\S)")
_CODE_LINE = re.compile(
    r"""^\s*(?:
        (?:def|class|elif|except|lambda|function|var|let|const|public|private|static|void)\s+\S.*[(){}:=;]
      | (?:import\s+[\w.]+(?:\s+as\s+\w+)?|from\s+[\w.]+\s+import\s+.*)\s*$
      | (?:return|raise|yield|await)\b.*[()\[\]{}=;]\s*$
      | (?:\#include|\#!|>>>|\$\s|//|/\*)
      | [A-Za-z_][\w.\[\]]*\s*[-+*/]?=\s*\S
      | [\w.]+\(.*\)\s*[:;]?\s*$
      | .*(?:[{}]\s*$|\);\s*$|==|!=|=>|->|::|&&|\|\|)
    )""",
    re.VERBOSE,
)
_CODE_CHARS = re.compile(r"[{}\[\]()<>=;$\\|]")
_TAG = re.compile(r"<\s*/?\s*([A-Za-z][\w-]*)(?:\s[^<>]*)?/?\s*>")
_DROP_ELEMENT = re.compile(
    r"<\s*(script|style)\b[^>]*>.*?<\s*/\s*\1\s*>", re.DOTALL | re.IGNORECASE
)
_BLOCK_TAGS = frozenset(
    {
        "p",
        "br",
        "div",
        "li",
        "ul",
        "ol",
        "tr",
        "td",
        "th",
        "table",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "blockquote",
        "pre",
        "section",
        "article",
        "header",
        "footer",
        "hr",
        "dt",
        "dd",
    }
)
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]\n]*)\](?:\([^)\n]*\)|\[[^\]\n]*\])")
_DECORATION = re.compile(r"(?<![\w*_~])[*_~]{3,}(?![\w*_~])")
_PARAGRAPH = r"(?:(?!\n[ \t]*\n)[\s\S])"  # any character, a blank line excepted
_EMPHASIS = (
    re.compile(rf"(\*\*|__|~~)(?=\S)({_PARAGRAPH}+?)(?<=\S)\1"),
    re.compile(rf"(?<![\w*\\])(\*)(?=[^\s*])({_PARAGRAPH}+?)(?<=[^\s*])\*(?![\w*])"),
    re.compile(rf"(?<![\w\\])(_)(?=[^\s_])({_PARAGRAPH}+?)(?<=[^\s_])_(?!\w)"),
)
_NAME_MARKUP = re.compile(r"[#|*`<>{}=\\~^$@]|_\w|\w_|://|www\.|\(\)")


def has_markup(name: str) -> bool:
    """True when ``name`` holds Markdown/HTML syntax, code or a URL, or an unpaired bracket."""
    if _NAME_MARKUP.search(name):
        return True
    return name.count("[") != name.count("]") or name.count("(") != name.count(")")


def is_code_line(line: str) -> bool:
    """A line that reads as source code or a shell/REPL line rather than prose."""
    stripped = line.strip()
    if not stripped or not stripped.isascii():
        return False
    if _CODE_LINE.match(stripped):
        return True
    symbols = len(_CODE_CHARS.findall(stripped))
    return symbols >= 3 and symbols >= 0.15 * len(stripped.replace(" ", ""))


def table_row(line: str) -> str | None:
    """A Markdown table row as one sentence of its non-empty cells, or None."""
    stripped = line.strip()
    framed = stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1
    if not framed and stripped.count(" | ") < 2:
        return None
    cells = [c.strip() for c in stripped.strip("|").split("|")]
    cells = [c for c in cells if c and not set(c) <= set("-: ")]
    return ", ".join(cells) + "." if cells else ""


def _html_to_lines(text: str) -> str:
    """Drop HTML tags (block tags become block breaks: "A<br>B" is two names) and decode entities."""
    if "<" not in text and "&" not in text:
        return text
    text = _DROP_ELEMENT.sub("\n", text)
    text = _TAG.sub(lambda m: "\n\n" if m.group(1).lower() in _BLOCK_TAGS else "", text)
    return html.unescape(text) if "&" in text else text


def _prose_line(line: str) -> str:
    """One line as prose: a heading stands alone, a table row is a sentence, code goes."""
    if _TABLE_SEPARATOR.match(line) or _RULE.match(line):
        return ""
    heading = _HEADING.match(line)
    if heading:
        return f"\n{heading.group(1)}\n"
    row = table_row(line)
    if row is not None:
        return row
    if is_code_line(line):
        return ""
    return _QUOTE_OR_BULLET.sub("", line)


def _prose_lines(text: str) -> list[str]:
    """The lines of ``text`` as prose: fenced code and table header rows blanked, the rest cleaned."""
    lines = text.split("\n")
    out: list[str] = []
    fenced = False
    for i, line in enumerate(lines):
        header = i + 1 < len(lines) and "|" in line and bool(_TABLE_SEPARATOR.match(lines[i + 1]))
        if _FENCE.match(line):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced or header else _prose_line(line))
    return out


def strip_emphasis(text: str) -> str:
    """Emphasis markers removed, their text kept (across a line break, not a blank line)."""
    if not any(c in text for c in "*_~"):
        return text
    text = _DECORATION.sub(" ", text)
    for pattern in _EMPHASIS:
        previous = None
        while previous != text:  # nested emphasis: **a *b* c**
            previous, text = text, pattern.sub(r"\2", text)
    return text


def strip_markup(text: str) -> str:
    """``text`` with Markdown and HTML syntax removed, as described in the module docstring."""
    text = _html_to_lines(text)
    text = "\n".join(_prose_lines(text))
    if "[" in text:
        text = _IMAGE_OR_LINK.sub(r"\1", text)
    return strip_emphasis(text)
