"""Parsing and repairing model output."""

from __future__ import annotations

import pytest

from kgrag.extract.parser import parse_delimited, parse_extraction, parse_json

TYPES = ["Person", "Artifact", "Location"]
GOOD = (
    "entity<|#|>Alex<|#|>Person<|#|>Alex is a scout.\n"
    "entity<|#|>The Device<|#|>Artifact<|#|>A strange device.\n"
    "relation<|#|>Alex<|#|>The Device<|#|>study, curiosity<|#|>Alex studies the device.\n"
    "<|COMPLETE|>"
)


def _names(ex):
    return [e.name for e in ex.entities], [(r.source, r.target) for r in ex.relations]


def test_clean_output_with_ids():
    ex = parse_delimited(GOOD, "chunk-1", "a.txt", TYPES)
    assert _names(ex) == (["Alex", "The Device"], [("Alex", "The Device")])
    assert ex.warnings == []
    assert all(
        r.chunk_id == "chunk-1" and r.file_path == "a.txt" for r in [*ex.entities, *ex.relations]
    )
    assert ex.relations[0].keywords == "study, curiosity" and ex.relations[0].weight == 1.0


@pytest.mark.parametrize(
    "bad", ["<|#>", "<#|>", "<||>", "|#|", "<|>", "<| # |>", "＜｜#｜＞", "<#>"]
)
def test_corrupted_delimiters(bad):
    ex = parse_delimited(GOOD.replace("<|#|>", bad), entity_types=TYPES)
    assert _names(ex) == (["Alex", "The Device"], [("Alex", "The Device")])


@pytest.mark.parametrize(
    "marker", ["<|complete|>", "<|Complete|>", "|COMPLETE|", "<COMPLETE>", "<|COMPLETE>"]
)
def test_completion_marker_variants(marker):
    ex = parse_delimited(GOOD.replace("<|COMPLETE|>", marker), entity_types=TYPES)
    assert len(ex.entities) == 2 and ex.warnings == []


def test_missing_marker_warns_and_text_after_marker_ignored():
    ex = parse_delimited(GOOD.replace("<|COMPLETE|>", ""))
    assert len(ex.entities) == 2 and any("completion marker" in w for w in ex.warnings)
    ex = parse_delimited(GOOD + "\nentity<|#|>Late<|#|>Person<|#|>After the end.")
    assert "Late" not in _names(ex)[0]


def test_records_run_together_on_one_line():
    line = GOOD.replace("\nentity", "<|#|>entity").replace("\nrelation", "<|#|>relation")
    assert _names(parse_delimited(line, entity_types=TYPES))[0] == ["Alex", "The Device"]
    old = (
        '("entity"<|>"Alex"<|>"person"<|>"Alex is a scout.")##("entity"<|>"Bo"<|>"person"'
        '<|>"Bo leads.")##\n("relationship"<|>"Alex"<|>"Bo"<|>"Bo leads Alex."<|>"lead"<|>7)'
        "<|COMPLETE|>"
    )
    ex = parse_delimited(old, entity_types=TYPES)
    assert _names(ex) == (["Alex", "Bo"], [("Alex", "Bo")])
    assert ex.relations[0].weight == 7.0


def test_wrapped_rows_and_misprefixed_relation():
    text = (
        "Here is what I found:\n```\n"
        "- entity<|#|>Alex<|#|>person<|#|>Alex is a scout.\n"
        "2. `entity<|#|>Bo<|#|>PERSON<|#|>Bo leads.`\n"
        "(entity<|#|>Cy<|#|>place, region<|#|>A valley.)\n"
        "entity<|#|>Alex<|#|>Bo<|#|>team<|#|>They work together.\n"
        "relation<|#|>Bo<|#|>Cy<|#|>Bo lives in Cy.\n"
        "```\n<|COMPLETE|>"
    )
    ex = parse_delimited(text, entity_types=TYPES)
    assert [(e.name, e.type) for e in ex.entities] == [
        ("Alex", "Person"),
        ("Bo", "Person"),
        ("Cy", "Other"),
    ]
    # a relation row without its keywords is a field short: rejected, never completed
    assert [(r.source, r.target, r.keywords) for r in ex.relations] == [("Alex", "Bo", "team")]
    assert ex.rejected == 1 and any("relation row with 3 fields" in w for w in ex.warnings)


def test_bad_rows_are_dropped_with_reasons():
    text = (
        "entity<|#|>Alex<|#|>Person<|#|>\n"  # no description
        "entity<|#|>2024<|#|>Event<|#|>A year.\n"  # numeric name
        "relation<|#|>Alex<|#|>Alex<|#|>self<|#|>Loop.\n"
        "relation<|#|>Alex<|#|>Bo\n"  # too few fields
        "relation<|#|>Alex<|#|>Bo<|#|>team, trust\n"  # keywords but no description
        "relation<|#|>A<|#|>B<|#|>k<|#|>d<|#|>x<|#|>y<|#|>z\n"
        "widget<|#|>A<|#|>B\n"
        "<|COMPLETE|>"
    )
    ex = parse_delimited(text)
    assert ex.entities == [] and ex.relations == []
    assert len(ex.warnings) == 7


def test_bare_pipe_delimiter():
    ex = parse_delimited(GOOD.replace("<|#|>", " | "), entity_types=TYPES)
    assert _names(ex) == (["Alex", "The Device"], [("Alex", "The Device")])


def test_weight_sixth_field():
    ex = parse_delimited("relation<|#|>A<|#|>B<|#|>k<|#|>d<|#|>0.5\n<|COMPLETE|>")
    assert ex.relations[0].weight == 0.5
    ex = parse_delimited("relation<|#|>A<|#|>B<|#|>k<|#|>d<|#|>strong\n<|COMPLETE|>")
    assert ex.relations[0].weight == 1.0 and ex.relations[0].description == "d"
    assert "sixth field" in ex.warnings[0]


def test_json_variants():
    ok = (
        '{"entities": [{"name": "Alex", "type": "person", "description": "A scout."}],'
        ' "relationships": [{"source": "Alex", "target": "Bo", "keywords": ["a", "b"],'
        ' "description": "Friends.", "weight": 3}]}'
    )
    ex = parse_json(ok, "c", "f", TYPES)
    assert _names(ex) == (["Alex"], [("Alex", "Bo")]) and ex.warnings == []
    assert ex.relations[0].keywords == "a, b" and ex.relations[0].weight == 3.0
    broken = (
        "Sure! Here it is:\n```json\n{'entities': [{'name': 'Alex', 'type': 'Person', "
        "'description': 'A scout.',},], 'relationships': [{'source': 'Alex', 'target': "
        "'Bo', 'keywords': 'x', 'description': 'Frie"
    )
    ex = parse_json(broken, entity_types=TYPES)
    # the relation the reply stops in ("Frie") may be cut off: rejected, not kept
    assert _names(ex) == (["Alex"], []) and ex.rejected == 1
    assert any("repaired" in w for w in ex.warnings)
    assert any("'relation Alex - Bo': the JSON stops in it" in w for w in ex.warnings)
    assert parse_json('```json\n{"entities": [], "relationships": []}\n```').warnings == []
    bad_items = parse_json(
        '{"entities": ["Alex", {"name": 5}, {"name": "Bo"}], "relationships": {}}'
    )
    assert bad_items.entities == [] and len(bad_items.warnings) == 3


def test_latex_backslashes_survive_json():
    ex = parse_json(
        r'{"entities": [{"name": "Euler", "type": "Person", '
        r'"description": "Wrote $e^{i\pi}+1=0$ and \frac{a}{b}."}]}'
    )
    assert "\\frac" in ex.entities[0].description


def test_parse_extraction_falls_back_to_other_format():
    json_text = '{"entities": [{"name": "Alex", "type": "Person", "description": "A scout."}]}'
    ex = parse_extraction(json_text, "delimited")
    assert _names(ex)[0] == ["Alex"] and "json format" in ex.warnings[0]
    ex = parse_extraction(GOOD, "json")
    assert len(ex.entities) == 2 and "delimited format" in ex.warnings[0]
    ex = parse_extraction("I could not find anything.", "json")
    assert ex.entities == [] and ex.warnings


def test_warnings_are_capped():
    ex = parse_delimited("entity<|#|>1<|#|>x<|#|>y\n" * 500)
    assert len(ex.warnings) <= 32 and "more warnings" in ex.warnings[-1]
