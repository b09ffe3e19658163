"""Hypothesis: replies with one known defect parse to the records of the clean reply.

Each property draws well-formed records, renders them as a reply with the
defect, and checks the parser recovers exactly what the clean rendering
gives (names, types, descriptions, keywords and relation endpoints).
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgrag.extract.formats import (
    COMPLETION_MARKER,
    TUPLE_DELIMITER,
    render_delimited,
    render_json,
)
from kgrag.extract.normalize import (
    clean_description,
    normalize_keywords,
    normalize_name,
)
from kgrag.extract.parser import (
    parse_delimited,
    parse_extraction,
    parse_json,
)
from kgrag.llm.reasoning import strip_reasoning
from kgrag.types import ExtractedEntity, ExtractedRelation

D = TUPLE_DELIMITER
TYPES = ["Person", "Organization", "Location", "NaturalObject"]
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))

names = st.text(alphabet="abcdefgXYZ 中文éß-.'", min_size=1, max_size=30).filter(
    lambda s: normalize_name(s) == s
)
descs = st.text(alphabet="abcdefgXYZ 中文éß-.,'()", min_size=1, max_size=60).filter(
    lambda s: clean_description(s) == s and "complete" not in s
)
# keywords are a required field: a relation always has some
keywords = st.text(alphabet="abcXYZ 中文, ", max_size=30).map(normalize_keywords).filter(bool)


def _records(description=descs, min_entities=0):
    """Entity and relation lists whose descriptions come from ``description``."""
    ents = st.lists(
        st.builds(ExtractedEntity, names, st.sampled_from(TYPES), description),
        min_size=min_entities,
        max_size=5,
    )
    rels = st.lists(
        st.builds(ExtractedRelation, names, names, keywords, description).filter(
            lambda r: r.source != r.target
        ),
        max_size=5,
    )
    return ents, rels


def _clean(ents, rels):
    """What the parser makes of the clean JSON rendering."""
    return parse_json(render_json(ents, rels), entity_types=TYPES)


def _same(parsed, clean):
    assert parsed.entities == clean.entities
    assert parsed.relations == clean.relations


def _joined(pieces: list[str], seps: list[str]) -> str:
    out = pieces[0]
    for sep, piece in zip(seps, pieces[1:], strict=False):
        out += sep + piece
    return out


def _with_delimiters(seps: list[str]):
    """Descriptions that quote a delimiter once to three times."""
    return (
        st.integers(1, 3)
        .flatmap(
            lambda k: st.builds(
                _joined,
                st.lists(descs, min_size=k + 1, max_size=k + 1),
                st.lists(st.sampled_from(seps), min_size=k, max_size=k),
            )
        )
        .filter(lambda s: clean_description(s) == s)
    )


# -- 1. a delimiter written inside a description --------------------------------------


def _render_layout(layout: str, ents, rels) -> str:
    """The records with field delimiters of one layout (canonical, spaced or older tuple)."""
    if layout == "canonical":
        return render_delimited(ents, rels)
    if layout == "spaced":
        return render_delimited(ents, rels).replace(D, " <|#|> ")
    rows = [f'("entity"<|>"{e.name}"<|>"{e.type}"<|>"{e.description}")' for e in ents]
    rows += [
        f'("relation"<|>"{r.source}"<|>"{r.target}"<|>"{r.keywords}"<|>"{r.description}")'
        for r in rels
    ]
    return "##\n".join(rows) + "\n" + COMPLETION_MARKER


LAYOUT_SEPS = {
    "canonical": [" <|> ", "<|>", " <|#|> "],
    "spaced": [" <|> ", "<|>"],
    "older": [" <|> ", " <|#|> "],
}


@PROPERTY
@given(layout=st.sampled_from(sorted(LAYOUT_SEPS)), data=st.data())
def test_delimiter_inside_a_description_stays_text(layout, data):
    ents, rels = _records(_with_delimiters(LAYOUT_SEPS[layout]))
    ents, rels = data.draw(ents), data.draw(rels)
    text = _render_layout(layout, ents, rels)
    _same(parse_delimited(text, entity_types=TYPES), _clean(ents, rels))
    _same(parse_extraction(text, "delimited", entity_types=TYPES), _clean(ents, rels))


@PROPERTY
@given(data=st.data())
def test_field_delimiter_inside_an_entity_description_is_rejoined(data):
    # the very delimiter the rows use: only the field count tells; entity rows only
    ents = data.draw(_records(_with_delimiters([D, f" {D} "]), min_entities=1)[0])
    rels = data.draw(_records()[1])
    parsed = parse_delimited(render_delimited(ents, rels), entity_types=TYPES)
    _same(parsed, _clean(ents, rels))


def test_delimiter_shapes_still_decide_relations():
    # an entity row shaped like a relation stays a relation; a stray delimiter
    # in the name or type field, or one a row needs, still splits fields
    rows = (
        "entity<|#|>Alex<|#|>Bo<|#|>team<|#|>They work together.\n"
        "entity<|#|>Cy<|#|>Person <|> Cy is tall.\n"
        "relation<|#|>Alex<|#|>Cy<|#|>kin <|> Alex and Cy are kin.\n"
        "relation<|#|>Bo<|#|>Cy<|#|>ties<|#|>Bo <|> Cy.<|#|>0.5\n"
        "relation<|#|>A<|#|>B<|#|>k<|#|>d<|#|>strong\n<|COMPLETE|>"
    )
    ex = parse_delimited(rows, entity_types=TYPES)
    assert [(e.name, e.type, e.description) for e in ex.entities] == [
        ("Cy", "Person", "Cy is tall.")
    ]
    assert [(r.source, r.target, r.keywords, r.description, r.weight) for r in ex.relations] == [
        ("Alex", "Bo", "team", "They work together.", 1.0),
        ("Alex", "Cy", "kin", "Alex and Cy are kin.", 1.0),
        ("Bo", "Cy", "ties", "Bo <|> Cy.", 0.5),
        ("A", "B", "k", "d", 1.0),
    ]


# -- 2. JSON followed by prose with braces ---------------------------------------------

prose_words = st.sampled_from(
    [
        "Note:",
        "I",
        "skipped",
        "minor",
        "items.",
        "see",
        "{minor}",
        "{",
        "}",
        "[2]",
        "[",
        "]",
        '"',
        ":",
        "{x: 1}",
        "{a, b}",
        "etc.",
    ]
)
prose = st.lists(prose_words, min_size=1, max_size=12).map(" ".join)
balanced_prose = st.sampled_from(
    [
        "",
        "Here is the result:\n",
        "Found {3} entities:\n",
        "Sure! [done]\n",
        "Extraction {as asked}:\n\n",
    ]
)


@PROPERTY
@given(
    data=st.data(),
    indent=st.sampled_from([None, 2]),
    fenced=st.booleans(),
    before=balanced_prose,
    after=prose,
)
def test_json_followed_by_prose_with_braces(data, indent, fenced, before, after):
    ents, rels = _records(min_entities=1)
    ents, rels = data.draw(ents), data.draw(rels)
    body = render_json(ents, rels, indent=indent)
    body = f"```json\n{body}\n```" if fenced else body
    text = f"{before}{body}\n\n{after}"
    _same(parse_json(text, entity_types=TYPES), _clean(ents, rels))
    _same(parse_extraction(text, "json", entity_types=TYPES), _clean(ents, rels))


def test_json_repair_list_yields_its_extraction_objects():
    # single quotes and a brace inside a string: the span scan is fooled, json_repair
    # returns [object, [...]] and the object is taken
    text = (
        "{'entities': [{'name': 'A', 'type': 'Person', 'description': 'uses } here'}]}"
        "\n\nNote: I skipped {minor} items."
    )
    assert [e.name for e in parse_json(text, entity_types=TYPES).entities] == ["A"]
    two = (
        '{"entities": [{"name": "A", "type": "Person", "description": "x"}]}\n'
        '{"relationships": [{"source": "A", "target": "B", "keywords": "k", '
        '"description": "d"}]}'
    )
    assert [e.name for e in parse_json(two).entities] == ["A"]
    assert parse_json("Found nothing {at all}.").entities == []


# -- 3. LaTeX with single backslashes inside JSON strings ------------------------------

LATEX = [
    r"\frac{a}{b}",
    r"\tau",
    r"\times",
    r"\theta",
    r"\text{x}",
    r"\textbf{y}",
    r"\beta",
    r"\bar{x}",
    r"\nabla",
    r"\nu",
    r"\neq",
    r"\rho",
    r"\rightarrow",
    r"\alpha",
    r"\pi",
    r"\sum",
    r"\mathbb{R}",
    r"\underline{u}",
    r"\forall",
    r"\to",
    r"\in",
]
safe_words = st.text(alphabet="ghklmsXYZ", min_size=1, max_size=6)  # no LaTeX after \n or \t
latex_piece = (
    st.sampled_from(LATEX)
    | descs
    | safe_words.map(lambda w: "\n" + w)
    | safe_words.map(lambda w: "\t" + w)
)
latex_descs = (
    st.lists(latex_piece, min_size=1, max_size=6)
    .map(" ".join)
    .filter(lambda s: clean_description(s) != "")
)


@PROPERTY
@given(data=st.data(), indent=st.sampled_from([None, 2]))
def test_latex_backslashes_in_json_strings(data, indent):
    ents, rels = _records(latex_descs, min_entities=1)
    ents, rels = data.draw(ents), data.draw(rels)
    clean = render_json(ents, rels, indent=indent)
    single = clean.replace("\\\\", "\\")  # what a model writes: LaTeX as it is
    _same(parse_json(single, entity_types=TYPES), _clean(ents, rels))
    _same(parse_json(clean, entity_types=TYPES), _clean(ents, rels))


def test_genuine_escapes_stay():
    text = json.dumps(
        {
            "entities": [
                {"name": "A", "type": "Person", "description": 'line one\nline two\tnu "q" \\frac'}
            ]
        }
    )
    text = text.replace("\\\\frac", "\\\\frac \\u00e9 \\/")
    assert parse_json(text).entities[0].description == 'line one line two nu "q" \\frac é /'
    latex = '{"entities": [{"name": "A", "type": "Person", "description": "$\\nu\\neq\\tau$"}]}'
    assert parse_json(latex).entities[0].description == "$\\nu\\neq\\tau$"


# -- 4. escaped delimiters -------------------------------------------------------------

ESCAPED = ["<|\\#|>", "<|\\\\#|>", "<\\|\\#\\|>", "<| \\# |>", "\\<|#|\\>", "<|#|>"]


@PROPERTY
@given(data=st.data())
def test_escaped_delimiters_are_repaired(data):
    ents, rels = _records(min_entities=1)
    ents, rels = data.draw(ents), data.draw(rels)
    pieces = render_delimited(ents, rels).split(D)
    seps = data.draw(
        st.lists(st.sampled_from(ESCAPED), min_size=len(pieces) - 1, max_size=len(pieces) - 1)
    )
    text = _joined(pieces, seps)
    _same(parse_delimited(text, entity_types=TYPES), _clean(ents, rels))
    _same(parse_extraction(text, "json", entity_types=TYPES), _clean(ents, rels))


# -- 5. reasoning blocks ---------------------------------------------------------------

OPEN, CLOSE = st.sampled_from(["<think>", "<THINK>", "<thinking>"]), st.just("</think>")


def _render(fmt, ents, rels, complete=True):
    if fmt == "json":
        return render_json(ents, rels, indent=2)
    return render_delimited(ents, rels, complete=complete)


def _reasoning(data, fmt) -> str:
    """Reasoning text with draft records in the reply's own format."""
    ents, rels = data.draw(_records(min_entities=1)[0]), data.draw(_records()[1])
    draft = _render(fmt, ents, rels, complete=data.draw(st.booleans()))
    return f"Let me think. Drafting:\n{draft}\nNow the answer."


def _with_reasoning(data, fmt, layout, reply) -> str:
    """The reply with reasoning laid out one of four ways."""
    if layout == "orphan_close":
        return f"{_reasoning(data, fmt)}\n</think>\n{reply}"
    if layout == "unclosed_end":
        return f"{reply}\n{data.draw(OPEN)}\n{_reasoning(data, fmt)}"
    lines = reply.split("\n")
    count = 1 if layout == "mid_text" else data.draw(st.integers(2, 4))
    for _ in range(count):
        block = f"{data.draw(OPEN)}{_reasoning(data, fmt)}{data.draw(CLOSE)}"
        at = (
            data.draw(st.integers(0, len(lines)))
            if fmt == "delimited"
            else data.draw(st.sampled_from([0, len(lines)]))
        )  # not inside the JSON object
        lines.insert(at, block + data.draw(st.sampled_from(["", "\n"])))
    return "\n".join(lines)


@PROPERTY
@given(
    data=st.data(),
    fmt=st.sampled_from(["delimited", "json"]),
    layout=st.sampled_from(["orphan_close", "mid_text", "several", "unclosed_end"]),
)
def test_reasoning_blocks_are_dropped(data, fmt, layout):
    ents, rels = _records(min_entities=1)
    ents, rels = data.draw(ents), data.draw(rels)
    reply = _render(fmt, ents, rels, complete=layout != "unclosed_end")
    text = _with_reasoning(data, fmt, layout, reply)
    _same(parse_extraction(text, fmt, entity_types=TYPES), _clean(ents, rels))


def test_strip_reasoning_cases():
    assert strip_reasoning("<think>a</think>b") == "b"
    assert strip_reasoning("draft</think>answer") == "answer"
    assert strip_reasoning("x<think>a</think>y<THINK>b</think>z") == "xyz"
    assert strip_reasoning("answer<think>still going") == "answer"
    assert strip_reasoning("<think>a<think>b</think>c</think>d") == "d"
    assert strip_reasoning("no reasoning") == "no reasoning"
    assert strip_reasoning(None) == ""  # type: ignore[arg-type]
