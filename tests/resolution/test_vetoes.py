"""Hard negatives found on real graphs: a name inside another thing's name, one acronym's
several spellings-out, different Chinese names, a word used as a common noun."""

from __future__ import annotations

from kgrag.curation.resolution import Entity, GraphView, Options, resolve_view
from kgrag.curation.resolution.names import parse
from kgrag.curation.resolution.vetoes import veto


def node(name, kind="Location", sources=("c1",), neighbours=("X",), description=""):
    return Entity(
        name, kind, frozenset({kind}), description, frozenset(sources), frozenset(neighbours)
    )


def vetoed(a: str, b: str, kind_a: str = "Location", kind_b: str = "Location") -> str | None:
    return veto(node(a, kind_a), node(b, kind_b), parse(a), parse(b), False)


async def grouped(entities, texts=None):
    report = await resolve_view(GraphView.of(entities, texts or {}), Options())
    return [set(g.names) for g in report.groups]


def test_a_name_inside_another_things_name_is_a_hard_negative():
    for short, long in [
        ("Islamabad", "Islamabad Airport"),
        ("Finnish", "Finnish markka"),
        ("Wikipedia", "Spanish Wikipedia"),
        ("Royal Navy", "Royal Australian Navy"),
        ("Chennai", "Trident, Chennai"),
        ("Lara", "Jiménez Municipality, Lara"),
    ]:
        assert vetoed(short, long) == "a name inside the name of another thing", (short, long)
    assert vetoed("几内亚", "新几内亚") == "a word that is no surname before a Chinese name"
    assert vetoed("长江", "长江大桥") == "a name inside the name of another thing"


def test_only_a_surname_stands_before_a_chinese_name():
    for short, long in [("王蕴", "封王蕴"), ("宁康", "改宁康")]:
        assert vetoed(short, long, "Person", "Person"), (short, long)
    for short, long in [("玄德", "刘玄德"), ("孔明", "诸葛孔明"), ("仲翔", "虞仲翔")]:
        assert vetoed(short, long, "Person", "Person") is None, (short, long)


def test_forms_locators_initials_and_surnames_are_not_other_things():
    for short, long, kind in [
        ("Latvia", "Republic of Latvia", "Location"),
        ("Wardville", "Wardville, Oklahoma", "Location"),
        ("Iain Banks", "Iain M. Banks", "Organization"),
        ("Parlan", "Horace Parlan", "Organization"),  # a person the extractor typed wrongly
        ("缅甸", "缅甸联邦共和国", "Location"),
    ]:
        assert vetoed(short, long, kind, kind) is None, (short, long)
    # two people: a surname inside a full name is the person, whatever the words
    assert vetoed("Bishop", "Madge Bishop", "Person", "Person") is None


def test_two_spellings_out_of_one_acronym_are_kept_apart():
    assert vetoed("Great Britain", "Green Bay") == "two different multi-word names"
    assert vetoed("Baltimore Cathedral", "Baltimore Colts") == "two different multi-word names"
    # a spelling difference is not a word of its own
    assert vetoed("Winter Olympic Games", "Winter Olympics Games") is None
    assert vetoed("中共浙江省委", "中共四川省委") == "two different names"


async def test_an_ambiguous_acronym_chains_nothing_together():
    got = await grouped(
        [
            node("GB", "Organization", ("c1", "c2", "c3")),
            node("Great Britain", "Organization", ("c1",)),
            node("Green Bay", "Organization", ("c2",)),
            node("Guinea-Bissau", "Organization", ("c3",)),
        ]
    )
    assert not any({"Great Britain", "Green Bay"} <= g for g in got)
    assert not any(len(g & {"Great Britain", "Green Bay", "Guinea-Bissau"}) > 1 for g in got)


async def test_a_stated_acronym_joins_despite_rivals():
    text = {"c1": "The United Kingdom (UK) is a country.", "c2": "", "c3": ""}
    got = await grouped(
        [
            node("UK", "Location", ("c1", "c2", "c3")),
            node("United Kingdom", "Location", ("c1",)),
            node("Ukulele Kings", "Location", ("c2",)),
            node("Upper Karnali", "Location", ("c3",)),
        ],
        text,
    )
    assert {"UK", "United Kingdom"} in got


async def test_a_word_used_as_a_common_noun_is_not_a_surname():
    text = {"c1": "The Warsaw Pact was signed in 1955; the Pact was a defence treaty."}
    got = await grouped([node("Warsaw Pact", "Organization"), node("Pact", "Organization")], text)
    assert got == []
    text = {"c1": "Horace Parlan played the piano; Parlan recorded for Blue Note."}
    got = await grouped(
        [node("Horace Parlan", "Organization"), node("Parlan", "Organization")], text
    )
    assert got == [{"Horace Parlan", "Parlan"}]


def test_types_apart_are_a_group_level_negative_unless_one_is_a_catch_all():
    from kgrag.curation.resolution.engine import _types_apart

    assert _types_apart(node("Tunis", "Location"), node("Northwind Labs", "Organization"))
    assert not _types_apart(node("Tunis", "Location"), node("Tunis", "Concept"))
    assert not _types_apart(node("Tunis", "Location"), node("Tunis City", "Location"))
