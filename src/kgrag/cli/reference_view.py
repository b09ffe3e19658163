"""``kgrag query --references``: the references of an answer, one block each."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kgrag.ingest.names import display_name
from kgrag.retrieval.reference import Reference

EXCERPT_CHARS = 160


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def reference_block(ref: Reference) -> list[str]:
    """``[3] cited  chunk  docs/guide.md p. 2, §3.2 Licensing`` and its document, span and excerpt."""
    mark = "cited" if ref.cited else "     "
    what = ref.kind if ref.kind == "chunk" else f"{ref.kind} {ref.name}"
    head = f"[{ref.number}] {mark}  {what}  {ref.file_path}" + (
        f" {ref.location}" if ref.location else ""
    )
    lines = [display_name(head)]  # a file name or section title on one line, escaped
    where = f"    document {ref.doc_id or '?'}"
    if ref.section:
        where += ", section " + display_name(" / ".join(ref.section))
    if ref.start is not None and ref.end is not None:
        where += f", chars {ref.start}-{ref.end}"
    lines.append(where)
    if ref.text:
        lines.append(f'    "{excerpt(ref.text)}"')
    if ref.chunks:
        lines.append("    from chunks " + ", ".join(f"[{n}]" for n in ref.chunks))
    return lines


def render_references(references: Sequence[Mapping[str, object]]) -> str:
    """The cited references as text blocks (all of them when none is cited), by number."""
    refs = [Reference.from_dict(r) for r in references]
    cited = [r for r in refs if r.cited]
    shown = cited or refs
    if not shown:
        return "References: none"
    lines = ["References:" if cited else "References (none cited):"]
    lines += [line for r in shown for line in reference_block(r)]
    if len(shown) < len(refs):
        lines.append(f"({len(refs) - len(shown)} more uncited in the context; --json lists all)")
    return "\n".join(lines)
