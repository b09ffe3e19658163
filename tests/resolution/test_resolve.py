"""Resolution over small graphs: aliases join, hard negatives stay apart, the text is read."""

from __future__ import annotations

from kgrag.curation.resolution import Entity, GraphView, Options, resolve_view


def person(name, sources=("c1",), neighbours=(), description="", kind="Person"):
    return Entity(
        name, kind, frozenset({kind}), description, frozenset(sources), frozenset(neighbours)
    )


async def groups(entities, texts=None, **opts):
    report = await resolve_view(GraphView.of(entities, texts or {}), Options(**opts))
    return [set(g.names) for g in report.groups], report


async def test_aliases_join():
    got, _ = await groups(
        [
            person("Ebenezer Scrooge", ("c1", "c2"), ("Marley", "London"), "a miser of London"),
            person("Scrooge", ("c1", "c2", "c3"), ("Marley", "London"), "the miser, a partner"),
            person("Mr. Scrooge", ("c3",), ("Marley",), "the miser"),
            person("Apple Inc.", ("c5",), ("Cupertino",), "maker of phones", "Organization"),
            person("Apple", ("c5", "c6"), ("Cupertino",), "phones maker", "Organization"),
            person("劉備", ("c7",), ("关羽",)),
            person("刘备", ("c7", "c8"), ("关羽",)),
        ]
    )
    assert {"Ebenezer Scrooge", "Scrooge", "Mr. Scrooge"} in got
    assert {"Apple Inc.", "Apple"} in got
    assert {"劉備", "刘备"} in got


async def test_acronym_stated_in_the_text_joins():
    text = {"c1": "International Business Machines (IBM) makes computers."}
    got, report = await groups(
        [
            person("International Business Machines", kind="Organization"),
            person("IBM", kind="Organization"),
        ],
        text,
    )
    assert got == [{"International Business Machines", "IBM"}]
    assert any("stated as an alias" in e for e in report.groups[0].links[0].evidence_for)


async def test_family_members_stay_apart():
    family = [
        person("Bob Cratchit", ("c1", "c2"), ("Tiny Tim", "Scrooge")),
        person("Mrs. Cratchit", ("c1", "c2"), ("Tiny Tim", "Scrooge")),
        person("Martha Cratchit", ("c1",), ("Tiny Tim",)),
        person("Cratchit", ("c1", "c2"), ("Tiny Tim", "Scrooge")),
    ]
    got, _ = await groups(family, {"c1": "Bob Cratchit and Mrs. Cratchit sat down.", "c2": ""})
    for g in got:
        assert not {"Bob Cratchit", "Martha Cratchit"} <= g
        assert not {"Bob Cratchit", "Mrs. Cratchit"} <= g
        assert not {"Mrs. Cratchit", "Martha Cratchit"} <= g


async def test_numbered_and_qualified_variants_stay_apart():
    names = [
        "Ghost of Christmas Past",
        "Ghost of Christmas Present",
        "Ghost of Christmas",
        "FW-A",
        "FW-B",
        "Widget v1",
        "Widget v2",
        "Super Bowl XLV",
        "Super Bowl XLVI",
    ]
    got, _ = await groups([person(n, ("c1",), ("Scrooge",), "a thing") for n in names])
    assert got == []


async def test_a_person_and_the_company_named_after_them_stay_apart():
    got, report = await groups(
        [
            person("Walt Disney", ("c1",), ("Hollywood",), "founder of a studio"),
            person("Walt Disney Company", ("c1",), ("Hollywood",), "a studio", "Organization"),
            person("Ford", ("c2",), ("Detroit",), "a car maker", "Organization"),
            person("Henry Ford", ("c2",), ("Detroit",), "a car maker's founder"),
        ],
        near_misses=10,
    )
    assert got == []
    vetoes = {p.veto for p in report.near_misses if p.veto}
    assert any("company named after them" in v or "type conflict" in v for v in vetoes)


async def test_two_names_in_one_sentence_are_two_things():
    text = {"c1": "Joe Miller told a joke to Joe."}
    got, report = await groups(
        [person("Joe Miller", ("c1",), ("London",)), person("Joe", ("c1",), ("London",))], text
    )
    assert got == []
    assert "in one sentence as two things" in " ".join(report.near_misses[0].evidence_against)


async def test_courtesy_name_joins_only_through_the_stated_alias():
    ents = [
        person("刘备", ("c1", "c2"), ("关羽", "张飞")),
        person("玄德", ("c1", "c3"), ("关羽", "张飞")),
        person("刘禅", ("c2",), ("诸葛亮",)),
    ]
    got, _ = await groups(ents, {"c1": "那人姓刘，名备，\n字玄德。"})
    assert got == [{"刘备", "玄德"}]
    got, _ = await groups(ents, {"c1": "那人来了。"})  # nothing states it: no rule reaches it
    assert got == []


async def test_a_group_never_joins_a_hard_negative_through_a_shared_short_name():
    ents = [
        person("Tim", ("c1", "c2"), ("Bob",)),
        person("Tim Cratchit", ("c1",), ("Bob",)),
        person("Tim Smith", ("c2",), ("Bob",)),
    ]
    got, _ = await groups(ents, min_score=0.0)
    assert all(not {"Tim Cratchit", "Tim Smith"} <= g for g in got)


async def test_min_score_decides():
    ents = [person("Peter", ("c1",)), person("Peter Cratchit", ("c1",))]
    low, _ = await groups(ents, min_score=0.5)
    high, _ = await groups(ents, min_score=0.99)
    assert low == [{"Peter", "Peter Cratchit"}] and high == []
