"""Citations in answers: ``[n]`` markers, checked against the context's numbers.

A chat model's answer cites context items as ``[3]``, ``[2][4]`` or
``[2, 4]``. :class:`CitationFilter` removes every number that points at no
context item (``[2, 99]`` becomes ``[2]``, ``claim [99].`` becomes
``claim.``), and in the answer's closing ``### References`` list drops a
line whose numbers are all invalid. It works on text as it flows: a stream
and the whole answer come out the same, because it only holds back what
could still become a citation (an unclosed ``[12``, trailing spaces) and,
inside the references list, the current line.

The extractive answer cites with :func:`cite`; its quotes are never altered.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kgrag.retrieval.context.sections import reference_line
from kgrag.retrieval.param import QueryResult
from kgrag.retrieval.shapes import ReferenceData

CITATION = re.compile(r"[ \t]*\[(\d{1,4}(?:[ \t]*,[ \t]*\d{1,4})*)\]")
# The end of a partial line that may still grow into a citation (or precede one).
_OPEN_TAIL = re.compile(r"[ \t]*\[[\d, \t]*$|[ \t]+$")
# A heading line (Markdown, or a bold line naming the references).
_HEADING = re.compile(r"^\s{0,3}(?:#{1,6}(?!#)|\*\*\s*(?:references|sources)\b)", re.I)
_REFERENCES_HEADING = re.compile(r"^\s{0,3}(?:#{1,6}|\*\*)\s*(?:references|sources)\b", re.I)


def _numbers(group: str) -> list[int]:
    return [int(n) for n in group.split(",")]


def cited_numbers(text: str) -> list[int]:
    """The numbers ``text`` cites as ``[n]``, each once, first-seen order."""
    seen: dict[int, None] = {}
    for m in CITATION.finditer(text):
        seen.update(dict.fromkeys(_numbers(m.group(1))))
    return list(seen)


def cite(sentence: str, *numbers: int | str) -> str:
    """``sentence`` followed by its citations: ``cite("Fees are due.", 3, 5)`` -> ``... [3][5]``."""
    unique = list(dict.fromkeys(int(n) for n in numbers))
    return sentence + (" " + "".join(f"[{n}]" for n in unique) if unique else "")


@dataclass(slots=True)
class CitationFilter:
    """Strips invalid citations from text fed in pieces (:meth:`feed`, then :meth:`close`).

    ``valid`` holds the numbers the context has. ``cited`` and ``invalid``
    collect the valid and invalid numbers seen, first-seen order.
    """

    valid: frozenset[int]
    cited: list[int] = field(default_factory=list)
    invalid: list[int] = field(default_factory=list)
    _pending: str = ""  # held back: the rest of the current line
    _started: str = ""  # the part of the current line already given out
    _in_references: bool = False

    def feed(self, piece: str) -> str:
        """The text of ``piece`` (with what was held back) that is settled now."""
        self._pending += piece
        out: list[str] = []
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            kept = self._line(line)
            if kept is not None:
                out.append(kept + "\n")
        if not self._in_references:
            tail = _OPEN_TAIL.search(self._pending)
            cut = tail.start() if tail else len(self._pending)
            out.append(self._clean(self._pending[:cut]))
            self._started += self._pending[:cut]
            self._pending = self._pending[cut:]
        return "".join(out)

    def close(self) -> str:
        """Whatever was held back, settled."""
        rest, self._pending = self._pending, ""
        return (self._line(rest) or "") if rest else ""

    def _line(self, rest: str) -> str | None:
        """The settled text of the current line's ``rest`` (None: drop the line)."""
        line, self._started = self._started + rest, ""
        if _HEADING.match(line):
            self._in_references = bool(_REFERENCES_HEADING.match(line))
        elif self._in_references:  # held whole: ``rest`` is the line
            marks = cited_numbers(line)
            if marks and not any(n in self.valid for n in marks):
                self._note(marks)
                return None
        return self._clean(rest)

    def _note(self, numbers: Iterable[int]) -> None:
        for n in numbers:
            bucket = self.cited if n in self.valid else self.invalid
            if n not in bucket:
                bucket.append(n)

    def _clean(self, text: str) -> str:
        def keep(m: re.Match[str]) -> str:
            numbers = _numbers(m.group(1))
            self._note(numbers)
            if all(n in self.valid for n in numbers):
                return m.group(0)
            good = [n for n in dict.fromkeys(numbers) if n in self.valid]
            if not good:
                return ""
            lead = m.group(0)[: m.group(0).index("[")]
            return lead + "[" + ", ".join(str(n) for n in good) + "]"

        return CITATION.sub(keep, text)


def check_citations(text: str, valid: Iterable[int]) -> tuple[str, list[int], list[int]]:
    """``(text without invalid citations, valid numbers cited, invalid numbers removed)``."""
    f = CitationFilter(frozenset(valid))
    out = f.feed(text) + f.close()
    return out, f.cited, f.invalid


def mark_cited(references: Sequence[ReferenceData], cited: Iterable[int]) -> list[ReferenceData]:
    """Copies of ``references`` (``Reference.to_dict`` form) with ``cited`` set."""
    numbers = {str(n) for n in cited}
    return [{**r, "cited": r["reference_id"] in numbers} for r in references]


def record_citations(
    result: QueryResult, cited: Iterable[int], invalid: Iterable[int]
) -> QueryResult:
    """``result`` with its references' ``cited`` flags and ``invalid_citations`` set."""
    result.references = mark_cited(result.references, cited)
    result.invalid_citations = list(invalid)
    return result


def apply_citations(result: QueryResult, valid: Iterable[int], strip: bool = True) -> QueryResult:
    """A copy of ``result`` whose answer's citations are checked against ``valid``.

    With ``strip`` (a chat model's answer) invalid numbers are removed from
    the text; without (an extractive answer, quoted verbatim) only the
    valid ones are noted as cited.
    """
    numbers = frozenset(valid)
    if strip:
        text, cited, invalid = check_citations(result.answer, numbers)
    else:
        text, invalid = result.answer, []
        cited = [n for n in cited_numbers(result.answer) if n in numbers]
    return record_citations(dataclasses.replace(result, answer=text), cited, invalid)


async def filtered(
    first: str, rest: AsyncIterator[str], check: CitationFilter | None
) -> AsyncIterator[str]:
    """``first`` and ``rest`` through ``check`` (None: as they are), then what it held back.

    Pieces that come out empty are left out.
    """
    if check is None:
        yield first
        async for piece in rest:
            yield piece
        return
    if text := check.feed(first):
        yield text
    async for piece in rest:
        if text := check.feed(piece):
            yield text
    if text := check.close():
        yield text


def invalid_note(invalid: Sequence[int]) -> str:
    """The note saying which citations were removed from an answer."""
    marks = ", ".join(f"[{n}]" for n in invalid)
    return f"removed citation(s) {marks} from the answer: no context item has that number"


def reference_list(
    references: Sequence[Mapping[str, object]], numbers: Iterable[int] | None = None
) -> str:
    """A ``### References`` block: ``[n] file p. x, §section`` per reference (``numbers`` only)."""
    wanted = None if numbers is None else {str(n) for n in numbers}
    lines = []
    for r in references:
        if wanted is not None and str(r["reference_id"]) not in wanted:
            continue
        number, where = str(r["reference_id"]), str(r.get("location", ""))
        line = reference_line(number, str(r.get("file_path", "")), where)
        if r.get("kind") in ("entity", "relation"):
            line += f" ({r['kind']}: {r.get('name', '')})"
        lines.append(line)
    return "### References\n" + "\n".join(lines) if lines else ""
