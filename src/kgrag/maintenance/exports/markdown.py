"""The graph as a Markdown report a person reads: one section per entity.

Layout: a title and the counts; ``## Entities`` with one ``###`` section
per entity (type, sources, its relations as links to the other entity's
section, then its description); ``## Relations`` with one list item per
relation. Entities come sorted by name and relations by pair, as in the
JSON export, so equal graphs give equal reports. Every text taken from
the graph is escaped, so a name or a description can never open a
heading, a list, a link or HTML. Each entity section starts with an HTML
anchor (``<a id="e-…">``) derived from its name, so links work in any
renderer, GitHub's included.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TextIO

from kgrag.maintenance.export_records import ExportData, ExportEntity, ExportRelation, tables

_INLINE = re.compile(r"([\\`*_\[\]<>#|~&])")
_NUMBERED = re.compile(r"^(\d+)([.)])")
_NOT_WORD = re.compile(r"[^\w]+")
_LINE_END = re.compile(r"\r\n|\r|\n")  # not str.splitlines: it also splits at \f, \v, U+2028
_MAX_FILES = 5

Adjacency = dict[str, list[tuple[str, ExportRelation]]]


def _escape_line(line: str) -> str:
    line = _INLINE.sub(r"\\\1", line.strip())
    if line[:1] in ("-", "+", "="):
        return "\\" + line
    return _NUMBERED.sub(r"\1\\\2", line)


def md_escape(text: str) -> str:
    """``text`` as literal Markdown, line by line: meaningful punctuation backslashed."""
    return "\n".join(_escape_line(line) for line in _LINE_END.split(text))


def md_inline(text: str) -> str:
    """``text`` escaped on one line (headings, list items): whitespace runs become one space."""
    return _escape_line(" ".join(text.split()))


def anchors(names: list[str]) -> dict[str, str]:
    """A unique HTML id per entity name: ``e-`` + its words, numbered on collision."""
    taken: set[str] = set()
    out = {}
    for name in names:
        base = "e-" + (_NOT_WORD.sub("-", name.casefold()).strip("-") or "entity")
        slug, n = base, 1
        while slug in taken:
            n += 1
            slug = f"{base}-{n}"
        taken.add(slug)
        out[name] = slug
    return out


def _adjacency(relations: list[ExportRelation]) -> Adjacency:
    adj: Adjacency = defaultdict(list)
    for rel in relations:
        adj[rel["src"]].append((rel["tgt"], rel))
        if rel["tgt"] != rel["src"]:
            adj[rel["tgt"]].append((rel["src"], rel))
    return adj


def _link(name: str, ids: dict[str, str]) -> str:
    return f"[{md_inline(name)}](#{ids[name]})" if name in ids else md_inline(name)


def _detail(rel: ExportRelation) -> str:
    parts = [f"weight {rel.get('weight', 0):g}"]
    if rel.get("keywords"):
        parts.append(f"keywords: {md_inline(str(rel['keywords']))}")
    return "; ".join(parts)


def _sources(entity: ExportEntity) -> str:
    chunks, files = len(entity.get("source_ids") or []), entity.get("file_paths") or []
    shown = ", ".join(md_inline(f) for f in files[:_MAX_FILES])
    more = f" and {len(files) - _MAX_FILES} more" if len(files) > _MAX_FILES else ""
    return f"{chunks} chunk(s)" + (f" from {shown}{more}" if files else "")


def _entity(entity: ExportEntity, adj: Adjacency, ids: dict[str, str]) -> str:
    name = entity["name"]
    lines = [f'<a id="{ids[name]}"></a>', "", f"### {md_inline(name)}", ""]
    lines.append(f"- Type: {md_inline(str(entity.get('entity_type') or 'unknown'))}")
    lines.append(f"- Sources: {_sources(entity)}")
    links = sorted(adj.get(name, []), key=lambda pair: pair[0])
    lines.append(f"- Relations: {len(links)}")
    lines += [f"  - {_link(other, ids)} ({_detail(rel)})" for other, rel in links]
    if entity.get("description"):
        lines += ["", md_escape(str(entity["description"]))]
    return "\n".join(lines) + "\n\n"


def _relation(rel: ExportRelation, ids: dict[str, str]) -> str:
    head = f"- {_link(rel['src'], ids)} — {_link(rel['tgt'], ids)} ({_detail(rel)})"
    text = md_escape(str(rel.get("description") or ""))
    lines = text.split("\n") if text else []
    body = "".join(f"\n  {line}" if line else "\n" for line in lines)
    return head + (":" if body else "") + body + "\n"


def write_markdown(data: ExportData, out: TextIO) -> None:
    """The report of the export ``data`` on ``out``."""
    entities, relations = data["entities"], data["relations"]
    ids = anchors([e["name"] for e in entities])
    adj = _adjacency(relations)
    out.write("# Knowledge graph\n\n")
    for label, rows in tables(data).items():
        out.write(f"- {label.capitalize()}: {len(rows)}\n")
    out.write("\n## Entities\n\n")
    for entity in entities:
        out.write(_entity(entity, adj, ids))
    out.write("## Relations\n\n")
    for rel in relations:
        out.write(_relation(rel, ids))
