"""The homonym report on a real index: one name, two separate clusters of fragments."""

from __future__ import annotations

from kgrag.api.facade import KGRag
from tests.support.settings import fake_settings

settings = fake_settings


def graph(paris_person_partner: str = "Helen") -> dict:
    """Paris the city (chunks c1, c2, beside France) and Paris the prince (c3, c4)."""
    chunks = [
        {"content": "Paris is the capital of France, on the Seine.", "source_id": "c1"},
        {"content": "France governs Paris from its ministries.", "source_id": "c2"},
        {"content": "Paris, son of Priam, took Helen to Troy.", "source_id": "c3"},
        {"content": "Helen left Sparta with Paris of Troy.", "source_id": "c4"},
    ]
    entities = [
        {"entity_name": "Paris", "entity_type": "location", "description": "a city", "source_id": c}
        for c in ("c1", "c2")
    ] + [
        {"entity_name": "Paris", "entity_type": "person", "description": "a prince", "source_id": c}
        for c in ("c3", "c4")
    ]
    entities += [
        {"entity_name": "France", "entity_type": "location", "source_id": "c1"},
        {"entity_name": "France", "entity_type": "location", "source_id": "c2"},
        {"entity_name": paris_person_partner, "entity_type": "person", "source_id": "c3"},
        {"entity_name": paris_person_partner, "entity_type": "person", "source_id": "c4"},
    ]
    rels = [
        {"src_id": "Paris", "tgt_id": "France", "description": "capital of", "source_id": c}
        for c in ("c1", "c2")
    ] + [
        {"src_id": "Paris", "tgt_id": paris_person_partner, "description": "eloped", "source_id": c}
        for c in ("c3", "c4")
    ]
    return {"chunks": chunks, "entities": entities, "relationships": rels}


async def test_a_name_with_two_separate_clusters_is_reported(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.import_graph(graph(), source="kg", name="paris")
        report = await rag.resolve_entities()
    found = {h.name: h for h in report.homonyms}
    assert set(found) == {"Paris"}
    clusters = found["Paris"].to_dict()["clusters"]
    assert sorted(c["type"].casefold() for c in clusters) == ["location", "person"]
    assert [len(c["chunks"]) for c in clusters] == [2, 2]
    assert {n for c in clusters for n in c["neighbours"]} == {"France", "Helen"}


async def test_clusters_that_share_a_partner_are_one_thing(tmp_path):
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await rag.import_graph(graph(paris_person_partner="France"), source="kg", name="paris")
        report = await rag.resolve_entities()
    assert report.homonyms == []
