"""Field normalisation."""

from __future__ import annotations

import pytest

from kgrag.extract.normalize import (
    MAX_NAME_CHARS,
    OTHER_TYPE,
    clean_description,
    normalize_keywords,
    normalize_name,
    normalize_type,
    parse_weight,
)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("  Ebenezer   Scrooge ", "Ebenezer Scrooge"),
        ('"Jacob Marley"', "Jacob Marley"),
        ("“Jacob Marley”", "Jacob Marley"),
        ("Ａｐｐｌｅ（中国）", "Apple(中国)"),
        ("北京 大学", "北京大学"),
        ("东京 Tower", "东京 Tower"),
        ("《红楼梦》", "红楼梦"),
        ("【OpenAI】", "OpenAI"),
        ("((Nested))", "Nested"),
        ("(A) and (B)", "(A) and (B)"),
        ("<p>Alex</p>", "Alex"),
        ("Zero\u200bWidth\x07Name", "ZeroWidth Name"),
        ("Tokyo。", "Tokyo"),
        ("Apple Inc.", "Apple Inc."),
        ("scrooge", "scrooge"),  # names stay case-sensitive
        ("2024", ""),
        ("3.4%", ""),
        ("  ", ""),
        ("---", ""),
        ("100m Sprint", "100m Sprint"),
    ],
)
def test_normalize_name(raw, expected):
    assert normalize_name(raw) == expected


def test_name_is_truncated():
    assert len(normalize_name("x" * 1000)) == MAX_NAME_CHARS


@pytest.mark.parametrize(
    "raw, allowed, expected",
    [
        ("person", None, "Person"),
        ("PERSON", None, "Person"),
        ("natural object", None, "NaturalObject"),
        ("NaturalObject", None, "NaturalObject"),
        ("person, location", None, "Person"),
        ('"organization"', None, "Organization"),
        ("", None, OTHER_TYPE),
        ("person", ["Person", "Location"], "Person"),
        ("natural_object", ["NaturalObject"], "NaturalObject"),
        ("geo", ["Person", "Location"], OTHER_TYPE),
        ("other", ["Person"], OTHER_TYPE),
        ("人物", ["Person"], OTHER_TYPE),
    ],
)
def test_normalize_type(raw, allowed, expected):
    assert normalize_type(raw, allowed) == expected


def test_keywords_descriptions_and_weights():
    assert normalize_keywords("权力，冲突、 power; Power") == "权力, 冲突, power"
    assert normalize_keywords(["a", "b", None, 3]) == "a, b, 3"
    assert clean_description(' "Wrapped." ') == "Wrapped."
    assert clean_description('He said "hi"') == 'He said "hi"'
    assert clean_description("two\n lines") == "two lines"
    assert parse_weight("8") == 8.0 and parse_weight(2) == 2.0
    assert (
        parse_weight("nan") == parse_weight("-1") == parse_weight("") == parse_weight(None) == 1.0
    )
    assert parse_weight(1e12) == 100.0
