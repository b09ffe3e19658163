"""Model output is accepted only when well-formed: the rules that reject a record.

Required: an entity's name, type and description; a relation's source,
target, keywords and description. A record missing one (a row a field
short, an empty field, a key left out) is rejected and counted, never
completed with a default; the reply holding it is unhealthy.
"""

from __future__ import annotations

import pytest

from kgrag.extract.llm_extractor import LLMExtractor, reply_problem
from kgrag.extract.parser import parse_delimited, parse_extraction, parse_json
from kgrag.llm.tokenizer import get_tokenizer
from kgrag.types import Chunk
from tests.support.chat import ScriptedChat

TEXT = "Scrooge was the partner of Marley."
CHUNK = Chunk(id="chunk-1", doc_id="doc-1", content=TEXT, tokens=8, order=0)
FIRST = (
    "entity<|#|>Scrooge<|#|>Person<|#|>A partner.\n"
    "entity<|#|>Marley<|#|>Person<|#|>Scrooge's late partner.\n"
    "relation<|#|>Scrooge<|#|>Marley<|#|>partnership<|#|>They were partners.\n<|COMPLETE|>"
)


def rows(*lines: str) -> str:
    return "\n".join([*lines, "<|COMPLETE|>"])


TYPES = ["Person", "Location"]
GOOD_ENTITY = "entity<|#|>Bo<|#|>Person<|#|>Bo leads the team."
GOOD_RELATION = "relation<|#|>Bo<|#|>Cy<|#|>leadership<|#|>Bo leads Cy."


@pytest.mark.parametrize(
    "row",
    [
        "entity<|#|>Kelzandor Province<|#|>Location",  # a field short: no description
        "entity<|#|>Kelzandor Province<|#|><|#|>A province.",  # empty type
        "entity<|#|>Kelzandor Province<|#|>Location<|#|>  ",  # empty description
        "entity<|#|> <|#|>Location<|#|>A province.",  # empty name
        "relation<|#|>Kelzandor Province<|#|>Bo<|#|>collaboration",  # a field short
        "relation<|#|>Kelzandor Province<|#|>Bo<|#|><|#|>They work together.",  # no keywords
        "relation<|#|>Kelzandor Province<|#|>Bo<|#|>collaboration<|#|>",  # no description
        "relation<|#|><|#|>Bo<|#|>collaboration<|#|>They work together.",  # no source
        "entity<|#|>Bo",  # two fields short
        "person<|#|>Bo<|#|>Person<|#|>Bo leads.",  # not a record kind
    ],
)
def test_a_delimited_record_missing_a_required_field_is_rejected(row):
    ex = parse_delimited(rows(GOOD_ENTITY, row, GOOD_RELATION), entity_types=TYPES)
    assert [e.name for e in ex.entities] == ["Bo"]
    assert [(r.source, r.target) for r in ex.relations] == [("Bo", "Cy")]
    assert ex.rejected == 1 and any(w.startswith("rejected") for w in ex.warnings)
    # the reply is malformed, though most of it is fine
    assert reply_problem(rows(GOOD_ENTITY, row, GOOD_RELATION)) == "1 malformed record rejected"


@pytest.mark.parametrize(
    "item",
    [
        '{"name": "Kelzandor Province", "description": "A province."}',  # no type
        '{"name": "Kelzandor Province", "type": "", "description": "A province."}',
        '{"name": "Kelzandor Province", "type": "Location"}',  # no description
        '"Kelzandor Province"',  # not an object
    ],
)
def test_a_json_entity_missing_a_required_field_is_rejected(item):
    text = (
        f'{{"entities": [{{"name": "Bo", "type": "Person", "description": "Bo leads."}}, {item}],'
        ' "relationships": []}'
    )
    ex = parse_json(text, entity_types=TYPES)
    assert [e.name for e in ex.entities] == ["Bo"] and ex.rejected == 1
    assert reply_problem(text, "json") == "1 malformed record rejected"


@pytest.mark.parametrize(
    "item",
    [
        '{"source": "Bo", "target": "Cy", "description": "Bo leads Cy."}',  # no keywords
        '{"source": "Bo", "target": "Cy", "keywords": [], "description": "Bo leads Cy."}',
        '{"source": "Bo", "target": "Cy", "keywords": "leadership"}',  # no description
        '{"target": "Cy", "keywords": "leadership", "description": "Bo leads Cy."}',
    ],
)
def test_a_json_relation_missing_a_required_field_is_rejected(item):
    ex = parse_json(f'{{"entities": [], "relationships": [{item}]}}', entity_types=TYPES)
    assert ex.relations == [] and ex.rejected == 1


def test_well_formed_noise_and_genuine_repairs_are_not_rejections():
    text = rows(
        "entity<|#|>2024<|#|>Event<|#|>A year.",  # no letter: noise, dropped
        "relation<|#|>Bo<|#|>Bo<|#|>self<|#|>Bo and Bo.",  # self-relation: dropped
        "entity<|#|>Cy<|#|>villain<|#|>A rival.",  # a type not offered: repaired to Other
        "relation<|#|>Bo<|#|>Cy<|#|>rivalry<|#|>They compete.<|#|>2",  # a weight
        'entity<|#|>"Dee"<|#|>PERSON<|#|>Dee helps.',  # quoted, odd case: cleaned
    )
    ex = parse_delimited(text, entity_types=TYPES)
    assert [(e.name, e.type) for e in ex.entities] == [("Cy", "Other"), ("Dee", "Person")]
    assert [(r.source, r.keywords, r.weight) for r in ex.relations] == [("Bo", "rivalry", 2.0)]
    assert ex.rejected == 0 and reply_problem(text) is None


def test_a_reply_cut_inside_its_last_row_loses_that_row():
    cut = f"{GOOD_ENTITY}\nentity<|#|>Cy<|#|>Location<|#|>A vall"
    ex = parse_delimited(cut, entity_types=TYPES)
    assert [e.name for e in ex.entities] == ["Bo"] and ex.rejected == 1
    assert any("'entity Cy': the reply stops in it" in w for w in ex.warnings)
    # cut at a line break, every row is whole; the reply is still unhealthy (no marker)
    whole = parse_delimited(f"{GOOD_ENTITY}\n{GOOD_RELATION}\n", entity_types=TYPES)
    assert len(whole.entities) + len(whole.relations) == 2 and whole.rejected == 0
    assert reply_problem(f"{GOOD_ENTITY}\n{GOOD_RELATION}\n") == "no completion marker"


def test_a_json_reply_that_does_not_close_loses_its_last_item():
    text = (
        '{"entities": [{"name": "Bo", "type": "Person", "description": "Bo leads."}, '
        '{"name": "Cy", "type": "Location", "description": "A vall'
    )
    ex = parse_extraction(text, "json", entity_types=TYPES)
    assert [e.name for e in ex.entities] == ["Bo"] and ex.rejected == 1


# The glean reply measured with the fake server's --garbage-rate: every line a field short
# (the relation was read as one without keywords, its endpoint became an UNKNOWN entity).
SHORT_GLEAN = rows(
    "entity<|#|>Kelzandor Province<|#|>Location",
    "relation<|#|>Kelzandor Province<|#|>Scrooge<|#|>collaboration",
)
# Mostly well-formed: one row a field short among two good ones.
MOSTLY_GOOD_GLEAN = rows(
    "entity<|#|>Kelzandor Province<|#|>Location<|#|>A province Scrooge trades with.",
    "entity<|#|>Fezziwig<|#|>Person",
    "relation<|#|>Kelzandor Province<|#|>Scrooge<|#|>collaboration<|#|>They trade.",
)
GOOD_GLEAN = rows(
    "entity<|#|>Kelzandor Province<|#|>Location<|#|>A province Scrooge trades with.",
    "entity<|#|>Fezziwig<|#|>Person<|#|>Scrooge's old master.",
    "relation<|#|>Kelzandor Province<|#|>Scrooge<|#|>collaboration<|#|>They trade.",
)


def _extractor(chat: ScriptedChat, **kw) -> LLMExtractor:
    return LLMExtractor(chat, get_tokenizer(), entity_types=["Person", "Location"], **kw)


def test_the_measured_glean_reply_is_malformed():
    assert reply_problem(SHORT_GLEAN) == "no usable records"
    assert parse_delimited(SHORT_GLEAN).rejected == 2
    assert reply_problem(MOSTLY_GOOD_GLEAN) == "1 malformed record rejected"


async def test_a_glean_with_a_rejected_record_is_reasked_and_recovered():
    chat = ScriptedChat(FIRST, MOSTLY_GOOD_GLEAN, GOOD_GLEAN, rows(), then=None)
    ex = await _extractor(chat, max_gleaning=2).extract(CHUNK)
    assert [c.role for c in chat.calls] == ["extract", "glean", "glean", "glean"]
    assert "1 malformed record rejected" in chat.calls[2].messages[-1]["content"]
    assert ("Fezziwig", "Person") in {(e.name, e.type) for e in ex.entities}
    assert ex.rejected == 1
    assert (
        "glean 1: reply malformed (1 malformed record rejected), recovered on re-ask 1"
        in ex.warnings
    )


async def test_a_glean_that_stays_malformed_keeps_only_well_formed_records_and_is_marked():
    chat = ScriptedChat(FIRST, SHORT_GLEAN, *[MOSTLY_GOOD_GLEAN] * 3, then=None)
    ex = await _extractor(chat, max_gleaning=1).extract(CHUNK)
    assert len(chat.calls) == 5 and ex.error is None
    assert "Fezziwig" not in {e.name for e in ex.entities}  # the row a field short
    assert all(e.type != "UNKNOWN" and e.description for e in ex.entities)
    assert all(r.keywords and r.description for r in ex.relations)
    assert ex.rejected == 2 + 3
    assert ex.warnings[-1] == (
        "glean 1: reply malformed in 4 attempts (no usable records; "
        "1 malformed record rejected); kept the 2 records of the best"
    )
