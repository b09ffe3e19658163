"""Hypothesis: the parsers never raise and always return clean records."""

from __future__ import annotations

import json
import math
import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgrag.extract.formats import render_delimited, render_json
from kgrag.extract.normalize import (
    MAX_NAME_CHARS,
    OTHER_TYPE,
    clean_description,
    normalize_keywords,
    normalize_name,
)
from kgrag.extract.parser import parse_delimited, parse_extraction, parse_json
from kgrag.types import ExtractedEntity, ExtractedRelation

TYPES = ["Person", "Organization", "Location", "NaturalObject"]
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))

FRAGMENTS = [
    "<|#|>",
    "<|",
    "|>",
    "#",
    "|",
    "<",
    ">",
    "entity",
    "relation",
    "relationship",
    "\n",
    "\r\n",
    "<|COMPLETE|>",
    "<|complete",
    '"',
    "'",
    "`",
    "```",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "##",
    "<|>",
    "Alex",
    "中文",
    "名字",
    "\u200b",
    "\u202e",
    "\x00",
    " ",
    "\t",
    "1",
    "-",
    "\\",
    '"entities"',
    '"relationships"',
    '"name"',
    '"source"',
    "null",
    "true",
    "3.5",
    "1e999",
    "NaN",
]
soups = st.lists(st.sampled_from(FRAGMENTS), max_size=80).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "entities",
                    "relationships",
                    "name",
                    "type",
                    "description",
                    "source",
                    "target",
                    "keywords",
                    "weight",
                    "x",
                ]
            )
            | st.text(max_size=5),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


def _json_texts(value, cut):
    text = json.dumps(value, ensure_ascii=False)
    return text[: max(0, len(text) - cut)]


json_like = st.builds(_json_texts, json_values, st.integers(0, 10))
any_output = st.text(max_size=400) | soups | json_like


def _check(ex, allowed=TYPES):
    for e in ex.entities:
        assert e.name and len(e.name) <= MAX_NAME_CHARS and e.description
        assert not any(unicodedata.category(c) in ("Cc", "Cf") for c in e.name)
        assert e.type in [*allowed, OTHER_TYPE]
    for r in ex.relations:
        assert r.source and r.target and r.source != r.target and r.description
        assert math.isfinite(r.weight) and 0 < r.weight <= 100
    assert all(isinstance(w, str) for w in ex.warnings)


@FUZZ
@given(text=any_output, fmt=st.sampled_from(["delimited", "json", "bogus"]))
def test_never_raises_on_arbitrary_output(text, fmt):
    _check(parse_extraction(text, fmt, "c", "f", TYPES))
    _check(parse_delimited(text, entity_types=TYPES))
    _check(parse_json(text, entity_types=TYPES))


names = st.text(alphabet="abcdefgXYZ 中文éß-.'", min_size=1, max_size=30).filter(
    lambda s: normalize_name(s) == s
)
descs = st.text(alphabet="abcdefgXYZ 中文éß-.,'()", min_size=1, max_size=60).filter(
    lambda s: clean_description(s) == s and "complete" not in s
)
# keywords are a required field: a relation always has some
keywords = st.text(alphabet="abcXYZ 中文, ", max_size=30).map(normalize_keywords).filter(bool)
entities = st.builds(ExtractedEntity, names, st.sampled_from(TYPES), descs)
relations = st.builds(ExtractedRelation, names, names, keywords, descs).filter(
    lambda r: r.source != r.target
)


@FUZZ
@given(ents=st.lists(entities, max_size=6), rels=st.lists(relations, max_size=6))
def test_render_then_parse_is_identity(ents, rels):
    for parsed in (
        parse_delimited(render_delimited(ents, rels), entity_types=TYPES),
        parse_json(render_json(ents, rels), entity_types=TYPES),
    ):
        assert parsed.entities == ents and parsed.relations == rels
        assert parsed.warnings == []


@FUZZ
@given(
    ents=st.lists(entities, min_size=1, max_size=5),
    rels=st.lists(relations, max_size=5),
    fmt=st.sampled_from(["delimited", "json"]),
    data=st.data(),
)
def test_mutated_valid_output_never_raises(ents, rels, fmt, data):
    text = render_delimited(ents, rels) if fmt == "delimited" else render_json(ents, rels)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(text)))
        j = data.draw(st.integers(i, min(len(text), i + 20)))
        text = text[:i] + data.draw(soups | st.text(max_size=5)) + text[j:]
    _check(parse_extraction(text, fmt, entity_types=TYPES))


def test_huge_and_deep_inputs_are_quick():
    for text in [
        " " * 1_000_000,
        "{" * 200_000,
        "entity<|#|>" * 50_000,
        "<" * 200_000,
        "a" * 1_000_000,
        "\u202e\u200b" * 100_000,
    ]:
        for fmt in ("delimited", "json"):
            _check(parse_extraction(text, fmt, entity_types=TYPES))
