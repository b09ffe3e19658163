"""Whole names, forms of address and role statements on one spaCy sentence.

Glue between spaCy's tokens and the pure rules of
:mod:`kgrag.extract.nlp_roles`: a sentence's mentions (already trimmed by
the analyzer) are widened to whole names ("Valdt" -> "Oren Valdt"), a form
of address right before a name is kept as its alias ("Mr. Scrooge"), and
copular and appositive role statements become :class:`RoleStatement`
records, their holder and object added as mentions when NER missed them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgrag.extract.nlp_names import corrected_type
from kgrag.extract.nlp_records import Mention, Sentence
from kgrag.extract.nlp_roles import (
    RoleStatement,
    Span,
    Tok,
    find_roles,
    is_person_role,
    is_title,
    name_spans,
)
from kgrag.extract.normalize import normalize_name

if TYPE_CHECKING:
    from spacy.tokens import Span as SpacySpan


_WIDENED = frozenset({"Person", "Organization"})


def whole_names(sent: SpacySpan, out: Sentence) -> None:
    """Widen ``out``'s mentions to whole names, add aliases and role statements."""
    base = sent.start_char
    toks = [Tok(t.text, t.pos_, t.idx - base, t.idx - base + len(t)) for t in sent]
    if not toks:
        return
    # Only people and organisations grow: a place widened is something else ("Houston Rockets").
    grows = [m for m in out.mentions if m.type in _WIDENED]
    ents = [_token_span(toks, m.start, m.end) for m in grows]
    fixed = [_token_span(toks, m.start, m.end) for m in out.mentions if m.type not in _WIDENED]
    others = fixed + [
        _token_span(toks, e.start_char - base, e.end_char - base)
        for e in sent.ents
        if not any(m.start <= e.start_char - base < m.end for m in out.mentions)
    ]
    spans = name_spans(toks, ents, others, [m.type == "Person" for m in grows])
    for m, ent, span in zip(grows, ents, spans, strict=False):
        _widen(out.text, toks, m, ent, span)
    spans += fixed
    for role in find_roles(toks, spans):
        person = is_person_role(role.role)
        holder = _mention_for(out, toks, role.holder, "Person" if person else "")
        of = _mention_for(out, toks, role.of, "")
        if holder is None or of is None or holder.name == of.name:
            continue
        if person:
            holder.type = corrected_type(holder.name, "Person")
        out.roles.append(RoleStatement(holder.name, role.role, of.name))


def _widen(text: str, toks: list[Tok], m: Mention, ent: Span, span: Span) -> None:
    """Widen ``m`` from its tokens ``ent`` to the whole name ``span``; keep a title before it as alias."""
    if span != ent:
        start, end = toks[span.lo].start, max(toks[span.hi - 1].end, m.end)
        name = normalize_name(f"{text[start : m.start]}{m.name}{text[m.end : end]}")
        if name:
            m.name, m.start, m.end = name, start, end
    before = toks[span.lo - 1] if span.lo > 0 else None
    if before is not None and is_title(before) and not m.name.startswith(before.text):
        m.alias = f"{before.text} {m.name}"


def _token_span(toks: list[Tok], start: int, end: int) -> Span:
    """The tokens covering characters ``start`` to ``end`` of the sentence."""
    lo = next((i for i, t in enumerate(toks) if t.end > start), len(toks) - 1)
    hi = next((i for i, t in enumerate(toks) if t.start >= end), len(toks))
    return Span(lo, max(hi, lo + 1))


def _mention_for(out: Sentence, toks: list[Tok], span: Span, kind: str) -> Mention | None:
    """The sentence's mention over ``span``; a new one (typed ``kind``, else Concept) when NER had none."""
    start, end = toks[span.lo].start, toks[span.hi - 1].end
    for m in out.mentions:
        if m.start == start and m.end == end:
            return m
    name = normalize_name(out.text[start:end])
    if not name:
        return None
    mention = Mention(name, corrected_type(name, kind or "Concept"), start, end)
    out.mentions.append(mention)
    return mention
