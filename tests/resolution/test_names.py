"""Name keys: what is folded away, and what is kept as evidence."""

from __future__ import annotations

import pytest

from kgrag.curation.resolution.names import acronyms, parse, spelling_only


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Mr. Scrooge", "Scrooge"),
        ("Scrooge's", "Scrooge"),
        ("Apple Inc.", "Apple"),
        ("ACME Corp", "Acme"),
        ("Beyoncé", "Beyonce"),
        ("Ｓｃｒｏｏｇｅ", "scrooge"),
        ("St. Paul", "Saint Paul"),
        ("U.S.", "US"),
        ("劉備", "刘备"),
        ("诸葛亮先生", "诸葛亮"),
        ("阿里巴巴集团", "阿里巴巴"),
        ("The Beatles", "Beatles"),
    ],
)
def test_equal_keys(a, b):
    assert parse(a).key == parse(b).key


@pytest.mark.parametrize(
    ("a", "b"),
    [("Ghost of Christmas Past", "Ghost of Christmas Present"), ("FW-A", "FW-B"), ("v1", "v2")],
)
def test_siblings_keep_their_difference(a, b):
    assert parse(a).key != parse(b).key
    assert parse(a).distinct ^ parse(b).distinct


def test_evidence_kept_beside_the_key():
    assert parse("Mrs. Cratchit").gender == "f" and parse("Mr. Cratchit").gender == "m"
    assert parse("Apple Inc.").corporate and not parse("Apple").corporate
    assert parse("Paris (film)").qualifier == "film"


def test_acronyms():
    assert "ibm" in acronyms(parse("International Business Machines"))
    assert "ge" in acronyms(parse("General Electric"))  # a title word still gives its initial
    assert "nbc" in acronyms(parse("National Broadcasting Company"))
    assert "ndp" in acronyms(parse("Nova Scotia New Democratic Party"))
    assert not acronyms(parse("Scrooge"))


def test_spelling_only():
    assert spelling_only(parse("Québec"), parse("Quebec"))
    assert spelling_only(parse("Stockholm-Arlanda Airport"), parse("Stockholm Arlanda Airport"))
    assert not spelling_only(parse("ILM"), parse("Ilm"))  # an acronym and a word
    assert not spelling_only(parse("Mr. Scrooge"), parse("Scrooge"))  # a title, not spelling
