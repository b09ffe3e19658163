"""False merges a reader rejects, found on real graphs (issue 22): a place against the
larger place of the same name stem, a place against the place that locates it, and a
surname that two people in the corpus carry."""

from __future__ import annotations

from kgrag.curation.resolution import Entity, GraphView, Options, resolve_view

# everything the graph can say for a merge: one chunk, the same neighbours and description
HOOD = ("Albania", "Ottoman Empire")
PLACE = "a place in the south-east of the country"


def node(name, kind="Location", sources=("c1",), neighbours=HOOD, description=PLACE):
    return Entity(
        name, kind, frozenset({kind}), description, frozenset(sources), frozenset(neighbours)
    )


async def grouped(entities, texts=None):
    report = await resolve_view(GraphView.of(entities, texts or {"c1": ""}), Options())
    return [set(g.names) for g in report.groups]


def together(got, a, b):
    return any({a, b} <= g for g in got)


async def test_a_town_is_not_its_county():
    got = await grouped([node("Korçë"), node("Korçë County")])
    assert not together(got, "Korçë", "Korçë County")
    got = await grouped([node("Georgetown"), node("Georgetown County")])
    assert not together(got, "Georgetown", "Georgetown County")


async def test_a_place_located_by_a_larger_place_is_not_that_place():
    got = await grouped([node("Young, New South Wales"), node("New South Wales")])
    assert not together(got, "Young, New South Wales", "New South Wales")


async def test_a_town_is_not_its_airport_whatever_the_extractor_typed():
    got = await grouped(
        [node("Chiang Rai", "Person"), node("Chiang Rai International Airport", "Person")]
    )
    assert not together(got, "Chiang Rai", "Chiang Rai International Airport")


async def test_a_surname_two_people_carry_is_neither_of_them():
    text = {
        "c1": "Roberta Bradshaw was a judge. Bradshaw served for twenty years.",
        "c2": "Matthew Bradshaw is a singer. Bradshaw released an album.",
    }
    got = await grouped(
        [
            node("Roberta Bradshaw", "Person", ("c1",), ("Court",)),
            node("Bradshaw", "Person", ("c1", "c2"), ("Court", "Album")),
            node("Matthew Bradshaw", "Person", ("c2",), ("Album",)),
        ],
        text,
    )
    assert not together(got, "Bradshaw", "Matthew Bradshaw")
    assert not together(got, "Bradshaw", "Roberta Bradshaw")


async def test_the_place_and_surname_set():
    """data/containment: 28 pairs a reader keeps apart, 10 that stay one (docs/resolution.md)."""
    from pathlib import Path

    from kgrag.curation.resolution.evaluate import evaluate, load_fixture

    path = Path(__file__).parent / "data" / "containment" / "places_and_surnames.json"
    total = (await evaluate(*load_fixture(path), Options(min_score=0.6))).total
    assert total.different >= 20 and total.joined == 0
    assert total.recall is not None and total.recall >= 0.8


async def test_the_merged_node_keeps_the_most_complete_name():
    text = {c: "Ebenezer Scrooge sat alone; Scrooge was alone." for c in ("c1", "c2", "c3")}
    got = await resolve_view(
        GraphView.of(
            [
                node("Scrooge", "Person", ("c1", "c2", "c3"), ("Marley", "Fred", "Belle")),
                node("Ebenezer Scrooge", "Person", ("c1",), ("Marley",)),
            ],
            text,
        ),
        Options(),
    )
    assert [(g.target, g.members) for g in got.groups] == [("Ebenezer Scrooge", ["Scrooge"])]
