"""Parse model output into an :class:`~kgrag.types.Extraction`.

The parsers never raise on model output, whatever it is: unusable rows
are dropped with a warning in ``Extraction.warnings``.

Both formats first lose the model's reasoning with the filter every reply
goes through (:func:`kgrag.llm.reasoning.strip_reasoning`):
``<think>...</think>`` blocks anywhere, everything before a closing
``</think>`` that has no opening tag, and an unclosed ``<think>`` to the
end, so draft rows in the reasoning are never extracted.

Delimited output is repaired before it is read: mangled field delimiters
(``<|#>``, ``<#|>``, ``<||>``, ``|#|``, the older ``<|>``, full-width
forms, backslash-escaped forms such as ``<|\\#|>``, or a bare ``|``
throughout a row), completion markers in any case or bracket style,
records run together on one line (separated by the delimiter or ``##``),
and rows wrapped in quotes, parentheses, backticks or list bullets.

A delimiter unlike the first one of its line that is spaced on both
sides, or is the older ``<|>``, may be text (a description quoting
``<|>``): it stays text where it sits in the description and the row
has its fields without it, and is a field delimiter otherwise. An
``entity`` row with relation-shaped fields is read as a relation; one with
surplus fields whose type is an offered entity type, or whose surplus
cannot be a relation's (over five fields, or a fifth that is no weight),
is an entity whose description held delimiters, and they are rejoined.
A relation row may carry a numeric weight as a sixth field (default
1.0). A row short of a field is never completed: it is rejected as
malformed (:mod:`kgrag.extract.collect` lists the required fields), and so
are rows of an unknown kind and, in a reply that stops without its
completion marker and not at a line break, the last row (the model may not
have finished it). A JSON reply that does not close likewise loses its
last item.

JSON output is read from the first complete top-level object or array
(a bracket scan that respects strings, so prose with braces after the
answer does no harm), and failing that with ``json_repair``, which copes
with code fences, trailing commas, single quotes, truncation and prose
around the object; a list holding extraction objects yields those objects.
Before parsing, a backslash that JSON would misread is doubled: one that
starts no valid escape, and one whose escape runs into a LaTeX command
(``\\frac``, ``\\beta``, ``\\tau``, ``\\nabla``, ``\\rho``; for ``\\n``,
``\\r`` and ``\\t`` only listed command names, so ``one\\ntwo`` stays a
newline).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import json_repair

from kgrag.extract.collect import RecordCollector, snippet
from kgrag.extract.formats import FORMATS, TUPLE_DELIMITER
from kgrag.extract.normalize import clean_field, is_number, type_key
from kgrag.llm.reasoning import strip_reasoning
from kgrag.types import Extraction

D = TUPLE_DELIMITER
_BS = r"\\{0,2}"  # a backslash or two, escaping the next character
_L, _P, _H, _R = "[<\uff1c]", "[|\uff5c]", f"(?:{_BS}[#\uff03])+", "[>\uff1e]"
_DELIM_VARIANTS = re.compile(
    f"{_BS}{_L}[ \\t]*{_BS}{_P}[ \\t]*{_H}[ \\t]*{_BS}{_P}[ \\t]*{_BS}{_R}"  # <|#|>, spaced, escaped
    f"|{_L}?{_P}{_H}{_P}{_R}?"  # |#|, <|#|, |#|>
    f"|{_L}{_P}?{_H}{_P}?{_R}"  # <|#>, <#|>, <#>
    f"|{_L}{_P}{{1,2}}{_R}"  # <|>, <||>
)
_OLD_DELIM = re.compile(f"{_L}{_P}{_R}")
_NO_GAPS = str.maketrans("", "", " \t\\")
# a delimiter that may be text is kept between these, its "|" as _PIPE_MARK (so no D in it)
_TEXT_OPEN, _TEXT_CLOSE, _PIPE_MARK = "\ue000", "\ue001", "\ue002"
_MARKED = re.compile(f"{_TEXT_OPEN}([^{_TEXT_CLOSE}]*){_TEXT_CLOSE}")
_COMPLETE = re.compile(
    f"(?:{_L}[ \\t]*)?{_P}[ \\t]*complete[ \\t]*{_P}[ \\t]*{_R}?"
    f"|{_L}[ \\t]*{_P}?[ \\t]*complete[ \\t]*{_P}?[ \\t]*{_R}",
    re.IGNORECASE,
)
_TAG = r"""[\s("'`]*(?:entity|entities|relation|relationship|relations|relationships)["'`]?\s*"""
_RUN_ON = re.compile(f"{re.escape(D)}(?={_TAG}{re.escape(D)})", re.IGNORECASE)
_HASH_SEP = re.compile(
    f"##\\s*(?={_TAG}{re.escape(D)})|\\)\\s*(?=\\({_TAG}{re.escape(D)})", re.IGNORECASE
)
_PIPE_ROW = re.compile(
    r"""["'`(]*(?:entity|relation|relationship)["'`]?[ \t]*\|[^|]*\|""", re.IGNORECASE
)
_BULLET = re.compile(r"^(?:[-*\u2022+]|\d{1,3}[.)])\s+")
_BRACKETS = re.compile(r"[\[\]{}]")
MAX_JSON_DEPTH = 64
MAX_JSON_SPANS = 4
_FENCE_LINE = re.compile(r"^\s*`{3,}[\w-]*\s*$")
_ENTITY_TAGS = {"entity", "entities", "node"}
_RELATION_TAGS = {"relation", "relationship", "relations", "relationships", "edge"}
_IGNORED_TAGS = {"content_keywords", "keywords"}
_ENTITY_SECTIONS = ("entities", "entity", "nodes")
_RELATION_SECTIONS = ("relationships", "relations", "relationship", "relation", "edges")
_JSON_TOKEN = re.compile(r'["\\{}\[\]]')
_JSON_ESCAPE = re.compile(r"""\\(u[0-9a-fA-F]{4}|["\\/]|[bfnrt][A-Za-z]*|)""")
# LaTeX commands whose backslash JSON would read as a \n, \r or \t escape
_LATEX_NRT = frozenset(
    {
        "nabla",
        "natural",
        "ne",
        "nearrow",
        "neg",
        "neq",
        "newline",
        "nexists",
        "ngeq",
        "nleq",
        "nmid",
        "noindent",
        "nolimits",
        "nonumber",
        "not",
        "notin",
        "nparallel",
        "nsubseteq",
        "nu",
        "nwarrow",
        "raisebox",
        "rangle",
        "rbrace",
        "rbrack",
        "rceil",
        "ref",
        "rfloor",
        "rho",
        "right",
        "rightarrow",
        "rightharpoonup",
        "rightleftharpoons",
        "rlap",
        "rm",
        "rtimes",
        "rvert",
        "rVert",
        "tag",
        "tan",
        "tanh",
        "tau",
        "text",
        "textbf",
        "textcolor",
        "textit",
        "textnormal",
        "textrm",
        "textsc",
        "textsf",
        "textstyle",
        "texttt",
        "textwidth",
        "tfrac",
        "therefore",
        "theta",
        "thicksim",
        "tilde",
        "times",
        "tiny",
        "to",
        "top",
        "triangle",
        "triangleleft",
        "triangleright",
        "tt",
    }
)


def _kind(line: str, match: re.Match[str]) -> tuple[str, bool]:
    """A delimiter's spelling (without spaces and backslashes), and whether spaces surround it."""
    before, after = line[match.start() - 1 : match.start()], line[match.end() : match.end() + 1]
    return match.group().translate(_NO_GAPS), before.isspace() and after.isspace()


def _canonical_delimiters(line: str) -> str:
    """One line with canonical delimiters; those that may be text are marked instead.

    A delimiter unlike the line's first one that is spaced on both sides or
    is the older ``<|>`` may be text; :func:`_split_fields` decides.
    """
    matches = list(_DELIM_VARIANTS.finditer(line))
    if not matches:
        return line
    first = _kind(line, matches[0])
    pieces, end = [], 0
    for match in matches:
        kind = _kind(line, match)
        maybe_text = kind != first and (kind[1] or bool(_OLD_DELIM.fullmatch(kind[0])))
        pieces += [line[end : match.start()], _mark(match.group()) if maybe_text else D]
        end = match.end()
    return "".join(pieces) + line[end:]


def _repair(text: str) -> tuple[str, bool]:
    """Canonical delimiters; text cut at the completion marker (and whether one was seen)."""
    for char in (_TEXT_OPEN, _TEXT_CLOSE, _PIPE_MARK):
        text = text.replace(char, " ")
    text = "\n".join(_canonical_delimiters(line) for line in text.split("\n"))
    match = _COMPLETE.search(text)
    return (text[: match.start()], True) if match else (text, False)


def _split_records(body: str) -> list[str]:
    """One string per record: lines, further split where records run together."""
    records: list[str] = []
    for line in body.split("\n"):
        if _FENCE_LINE.match(line):
            continue
        for part in _HASH_SEP.split(line):
            records.extend(_RUN_ON.split(part))
    return records


def _unwrap(record: str) -> str:
    """Strip bullets, backticks, wrapping parentheses and trailing separators."""
    record = _BULLET.sub("", record.strip()).strip()
    record = record.strip("`").strip()
    if record.endswith("##"):
        record = record[:-2].rstrip()
    if record.startswith("("):  # tuple style: ("entity"<|#|>...)  or  (...),
        if record.endswith(("),", ");")):
            record = record[:-1]
        if record.endswith(")"):
            record = record[1:-1].strip()
    return record


def _field(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        value = value[1:-1]
    return value.strip()


def _tag(field: str) -> str:
    return field.strip("\"'`()[] ").casefold()


def _mark(delimiter: str) -> str:
    """A delimiter that may be text, marked so that no split sees it."""
    return f"{_TEXT_OPEN}{delimiter.replace('|', _PIPE_MARK)}{_TEXT_CLOSE}"


def _unmark(text: str) -> str:
    """Marked delimiters back to the text they were."""
    if _TEXT_OPEN not in text:
        return text
    return _MARKED.sub(lambda m: m.group(1).replace(_PIPE_MARK, "|"), text)


def _split_fields(record: str, sep: str = D) -> list[str]:
    """A row's raw fields; a marked delimiter is text where it sits in a description.

    It splits fields after all when it sits in the tag, name or type /
    target field, or when the row is short of fields without it.
    """
    fields = record.split(sep)
    if _TEXT_OPEN in record:
        need = 4 if _tag(_unmark(fields[0])) in _ENTITY_TAGS else 5
        if len(fields) < need or any(_TEXT_OPEN in f for f in fields[:3]):
            fields = [part for f in fields for part in _MARKED.split(f)[::2]]
    return [_unmark(f) for f in fields]


def _entity_with_delimiters(values: list[str], allowed: Sequence[str] | None) -> bool:
    """Whether an ``entity`` row's surplus fields are pieces of its description.

    They are when its type is one offered, or when they cannot be a
    relation's fields (over five, or a fifth that is not a weight).
    """
    if allowed and type_key(clean_field(values[1])) in {type_key(t) for t in allowed}:
        return True
    return len(values) > 5 or (len(values) == 5 and not is_number(values[4]))


def _add_row(raw: list[str], out: RecordCollector, row: str, sep: str = D) -> None:
    """Dispatch one split row (its raw fields) by its tag and field count."""
    fields = [_field(f) for f in raw]
    tag = _tag(fields[0])
    is_entity, is_relation = tag in _ENTITY_TAGS, tag in _RELATION_TAGS
    if is_entity and len(fields) > 4 and _entity_with_delimiters(fields[1:], out.entity_types):
        out.warn(f"rejoined the description of an entity row with {len(fields) - 1} fields")
        fields = [*fields[:3], _field(sep.join(raw[3:]))]  # the row's own spacing survives
    values = fields[1:]
    n = len(values)
    weighted = n == 5 and is_number(values[4])
    if is_entity and n == 3:
        out.add_entity(values[0], values[1], values[2], row=row)
    elif (is_entity or is_relation) and (n == 4 or weighted):
        # an "entity" row shaped like a relation is read as one
        src, tgt, keywords, description = values[:4]
        out.add_relation(
            src, tgt, keywords, description, weight=values[4] if weighted else None, row=row
        )
    elif is_relation and n == 5:
        out.warn(f"ignored a sixth field that is not a weight: {snippet(values[4], 40)}")
        out.add_relation(values[0], values[1], values[2], values[3], row=row)
    elif is_entity or is_relation:
        out.reject(f"rejected {tag} row with {n} fields: {snippet(row)}")
    elif tag not in _IGNORED_TAGS:
        out.reject(f"rejected row of unknown kind {snippet(fields[0], 30)!r}: {snippet(row)}")


def _read_record(record: str, out: RecordCollector) -> None:
    """One unwrapped record, if it is a row (with delimiters, or with plain ``|``)."""
    if D in record:
        _add_row(_split_fields(record), out, _unmark(record))
    elif _PIPE_ROW.match(_unmark(record)):  # plain "|" used as the delimiter
        _add_row(_split_fields(_unmark(record), "|"), out, _unmark(record), "|")


def parse_delimited(
    text: str, chunk_id: str = "", file_path: str = "", entity_types: Sequence[str] | None = None
) -> Extraction:
    """Parse the delimited record format; see the module docstring."""
    out = RecordCollector(chunk_id, file_path, entity_types)
    try:
        body, complete = _repair(strip_reasoning(text))
        if not complete:
            out.warn("no completion marker: the output may have been cut off")
        records = [r for r in map(_unwrap, _split_records(body)) if r]
        # a reply that stops without its marker, inside a line, may stop inside its last row
        cut = -1 if complete or body.rstrip(" \t").endswith("\n") else len(records) - 1
        for i, record in enumerate(records):
            mark = out.mark()
            _read_record(record, out)
            if i == cut:
                out.take_back(mark, "the reply stops in it, without its completion marker")
    except Exception as exc:  # a safety net: parsing model output must never raise
        out.warn(f"delimited parser failed: {exc!r}")
    return out.finish()


def _too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether brackets nest deeper than any real answer would (repair gets slow)."""
    depth = 0
    for match in _BRACKETS.finditer(text):
        depth += 1 if match.group() in "{[" else -1
        if depth > limit:
            return True
    return False


def _fix_escape(match: re.Match[str]) -> str:
    body = match.group(1)
    if not body:  # starts no JSON escape: a literal backslash
        return "\\\\"
    # \b or \f before letters is always LaTeX (no text holds those controls);
    # \n, \r and \t only before a listed command name, so "one\ntwo" stays a newline
    if len(body) > 1 and (body[0] in "bf" or body in _LATEX_NRT):
        return "\\\\" + body
    return match.group()


def _fix_backslashes(text: str) -> str:
    """Backslashes JSON would misread doubled: LaTeX commands and invalid escapes."""
    return _JSON_ESCAPE.sub(_fix_escape, text) if "\\" in text else text


def _json_spans(text: str, limit: int = MAX_JSON_SPANS) -> list[str]:
    """The first top-level bracketed spans of ``text``; an unclosed one runs to the end.

    Brackets inside double-quoted strings are not counted.
    """
    spans: list[str] = []
    depth, start, skip, in_string = 0, 0, -1, False
    for match in _JSON_TOKEN.finditer(text):
        c, i = match.group(), match.start()
        if i < skip:
            continue
        if in_string:
            skip = i + 2 if c == "\\" else skip
            in_string = c != '"'
        elif c == '"':
            in_string = depth > 0
        elif c in "{[":
            start = i if depth == 0 else start
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
                if len(spans) >= limit:
                    return spans
    if depth > 0:
        spans.append(text[start:])
    return spans


def _json_candidates(text: str) -> list[str]:
    """Texts to parse, in order: top-level spans, then everything from a first bracket on."""
    found = _json_spans(text)
    for opener in "{[":
        start = text.find(opener)
        if start < 0:
            continue
        candidate = text[start:].rstrip()
        found.append(candidate.rstrip("`") if candidate.endswith("```") else candidate)
    return list(dict.fromkeys(found))


def _is_extraction(value: object) -> bool:
    """Whether ``value`` is an object with a list of entities or relations."""
    return isinstance(value, dict) and any(
        isinstance(v, list)
        and isinstance(k, str)
        and k.strip().casefold() in _ENTITY_SECTIONS + _RELATION_SECTIONS
        for k, v in value.items()
    )


def _pick_extraction(value: object) -> object:
    """From a list holding extraction objects, those objects merged; else ``value``."""
    if not isinstance(value, list):
        return value
    found = [item for item in value if _is_extraction(item)]
    if len(found) <= 1:
        return found[0] if found else value
    entities: list[object] = []
    relations: list[object] = []
    for item in found:
        ents, rels = _json_items(item)
        entities += ents
        relations += rels
    return {"entities": entities, "relationships": relations}


def _load_json(text: str, out: RecordCollector) -> object:
    """The JSON value in ``text``, repaired if need be; ``None`` if there is none."""
    if _too_deep(text):
        out.warn("brackets nest too deeply to be an extraction answer")
        return None
    first: object = None
    for candidate in _json_candidates(_fix_backslashes(text)):
        found: object
        try:
            found, repaired = json.loads(candidate), False
        except ValueError:
            found, repaired = json_repair.loads(candidate), True
        found = _pick_extraction(found)
        if any(isinstance(item, dict) for items in _json_items(found) for item in items):
            if repaired:
                out.warn("repaired malformed JSON (extra text, bad syntax or truncation)")
            return found
        if first is None and isinstance(found, (dict, list)):
            first = found
    return first


def _section(data: dict[object, object], names: tuple[str, ...]) -> list[object]:
    for key, value in data.items():
        if isinstance(key, str) and key.strip().casefold() in names:
            if isinstance(value, list):
                return value
            return [value] if value else []
    return []


def _get(item: dict[object, object], *names: str) -> object:
    for name in names:
        if name in item:
            return item[name]
    return None


def _json_items(data: object) -> tuple[list[object], list[object]]:
    if isinstance(data, dict):
        return _section(data, _ENTITY_SECTIONS), _section(data, _RELATION_SECTIONS)
    if isinstance(data, list):  # a bare list: sort items by their keys
        rels: list[object] = [i for i in data if isinstance(i, dict) and "source" in i]
        return [i for i in data if not (isinstance(i, dict) and "source" in i)], rels
    return [], []


def _add_item(kind: str, item: object, out: RecordCollector) -> None:
    """One JSON entity or relation item."""
    if not isinstance(item, dict):
        return out.reject(f"rejected {kind} item that is not an object: {snippet(item)}")
    if kind == "entity":
        return out.add_entity(
            _get(item, "name", "entity_name", "entity"),
            _get(item, "type", "entity_type"),
            _get(item, "description", "entity_description"),
            row=item,
        )
    return out.add_relation(
        _get(item, "source", "src", "source_entity", "src_id"),
        _get(item, "target", "tgt", "target_entity", "tgt_id"),
        _get(item, "keywords", "relationship_keywords", "keyword"),
        _get(item, "description", "relationship_description"),
        weight=_get(item, "weight", "strength", "relationship_strength"),
        row=item,
    )


def _last_item(
    data: dict[object, object] | list[object], entities: list[object], relations: list[object]
) -> object:
    """The item written last (where a reply that does not close was cut), if any."""
    if isinstance(data, list):
        return data[-1] if data else None
    sections = [v for v in data.values() if v is entities or v is relations]
    for items in reversed(sections or [entities, relations]):
        if items:
            return items[-1]
    return None


def parse_json(
    text: str, chunk_id: str = "", file_path: str = "", entity_types: Sequence[str] | None = None
) -> Extraction:
    """Parse the JSON record format; see the module docstring."""
    out = RecordCollector(chunk_id, file_path, entity_types)
    try:
        body = strip_reasoning(text)
        data = _load_json(body, out)
        if not isinstance(data, (dict, list)):
            out.warn("no JSON object found in the output")
            return out.finish()
        entities, relations = _json_items(data)
        cut = _last_item(data, entities, relations) if json_closes(body) is False else None
        for kind, items in (("entity", entities), ("relation", relations)):
            for item in items:
                mark = out.mark()
                _add_item(kind, item, out)
                if cut is not None and item is cut:
                    out.take_back(mark, "the JSON stops in it")
    except Exception as exc:  # a safety net: parsing model output must never raise
        out.warn(f"JSON parser failed: {exc!r}")
    return out.finish()


def json_closes(text: str) -> bool | None:
    """Whether the first JSON value in ``text`` closes; None when there is none.

    Counts brackets outside double-quoted strings, so a cut-off object or
    array (truncation) reads as unclosed.
    """
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    depth, in_string, escaped = 0, False, False
    for ch in text[min(starts) :]:
        if escaped:
            escaped = False
        elif in_string:
            escaped, in_string = ch == "\\", ch != '"'
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return True
    return False


_PARSERS = {"delimited": parse_delimited, "json": parse_json}


def parse_extraction(
    text: str,
    fmt: str = "delimited",
    chunk_id: str = "",
    file_path: str = "",
    entity_types: Sequence[str] | None = None,
) -> Extraction:
    """Parse in the declared format; if that yields nothing, try the other one."""
    fmt = fmt if fmt in FORMATS else "delimited"
    first = _PARSERS[fmt](text, chunk_id, file_path, entity_types)
    if first.entities or first.relations:
        return first
    other = "json" if fmt == "delimited" else "delimited"
    second = _PARSERS[other](text, chunk_id, file_path, entity_types)
    if second.entities or second.relations:
        second.warnings.insert(0, f"output was in {other} format, not {fmt}")
        return second
    return first
