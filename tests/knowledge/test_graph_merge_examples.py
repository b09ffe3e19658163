"""Worked examples of the merge rules, field by field."""

from __future__ import annotations

import pytest

from kgrag.config.settings import Settings
from kgrag.knowledge import (
    BatchInput,
    MergePolicy,
    group_extractions,
    merge_entity,
    merge_relation,
    needed_keys,
    plan_batch,
)
from kgrag.types import SEP, Extraction
from kgrag.types import ExtractedEntity as E
from kgrag.types import ExtractedRelation as R

from .strategies import TOKENIZER

POLICY = MergePolicy(tokenizer=TOKENIZER)
NODE_FIELDS = [
    "entity_type",
    "type_counts",
    "description",
    "source_ids",
    "file_paths",
    "extractor",
    "created_at",
]
EDGE_FIELDS = [
    "src",
    "tgt",
    "weight",
    "keywords",
    "description",
    "directions",
    "source_ids",
    "file_paths",
    "extractor",
    "created_at",
]


def test_policy_from_settings():
    s = Settings(_env_file=None, max_file_paths=3, source_ids_limit_method="FIFO")
    p = MergePolicy.from_settings(s)
    assert (p.max_file_paths, p.source_ids_limit_method, p.force_llm_summary_on_merge) == (
        3,
        "FIFO",
        8,
    )
    assert p.tokenizer.name == s.chunking.tokenizer


def test_new_entity_fields():
    frags = [
        E("Alice", "Person", "A girl.", "c1", "a.txt"),
        E("Alice", "Place", "A town.", "c2", "b.txt"),
        E("Alice", "Person", "A girl.", "c1", "a.txt"),
    ]
    plan = merge_entity("Alice", None, frags, POLICY, 5.0, "llm")
    assert list(plan.data) == NODE_FIELDS
    assert plan.data["entity_type"] == "Person"
    assert plan.data["type_counts"] == {"Person": 2, "Place": 1}
    assert plan.data["description"] == f"A girl.{SEP}A town."
    assert plan.data["source_ids"] == ["c1", "c2"]
    assert plan.data["file_paths"] == ["a.txt", "b.txt"]
    assert (plan.data["created_at"], plan.needs_summary, plan.changed) == (5.0, None, True)


def test_existing_entity_keeps_created_at_and_orders_fragments():
    existing = {
        "entity_type": "Place",
        "description": f"Old one.{SEP}Old two.",
        "source_ids": ["c0"],
        "file_paths": ["z.txt"],
        "extractor": "nlp",
        "created_at": 1.0,
    }
    plan = merge_entity(
        "Alice",
        existing,
        [E("Alice", "Person", "New.", "c1"), E("Alice", "Person", "Old two.", "c2")],
        POLICY,
        9.0,
        "llm",
    )
    assert plan.fragments == ["Old one.", "Old two.", "New."]
    assert plan.data["type_counts"] == {"Person": 2, "Place": 1}
    assert plan.data["entity_type"] == "Person"
    assert (plan.data["created_at"], plan.data["extractor"]) == (1.0, "nlp")


def test_type_tie_is_alphabetical_and_unknown_loses():
    plan = merge_entity("X", None, [E("X", "Zeta", "d"), E("X", "Alpha", "d")], POLICY, 0, "llm")
    assert plan.data["entity_type"] == "Alpha"
    placeholder = {"entity_type": "UNKNOWN", "type_counts": {"UNKNOWN": 5}, "description": "rel"}
    plan = merge_entity("X", placeholder, [E("X", "Person", "p")], POLICY, 0, "llm")
    assert plan.data["entity_type"] == "Person"


def test_unchanged_when_keep_cap_is_full():
    policy = MergePolicy(max_source_ids_per_entity=1, tokenizer=TOKENIZER)
    first = merge_entity("A", None, [E("A", "T", "one", "c1")], policy, 0, "llm")
    again = merge_entity("A", first.data, [E("A", "T", "two", "c2")], policy, 1, "llm")
    assert not again.changed and again.data == first.data


def test_relation_fields():
    frags = [
        R("Bob", "Alice", "friendship， trust", "Friends.", 2.0, "c1", "a.txt"),
        R("Alice", "Bob", "trust,rivalry ", "Rivals.", 0.5, "c2", "a.txt"),
        R("Bob", "Alice", "", "Friends.", 1.0, "c3"),
    ]
    plan = merge_relation(
        ("Bob", "Alice"),
        {"weight": 1.0, "keywords": "old", "created_at": 3.0},
        frags,
        POLICY,
        9.0,
        "llm",
    )
    assert list(plan.data) == EDGE_FIELDS
    assert plan.key == ("Alice", "Bob")
    assert (plan.data["src"], plan.data["tgt"]) == ("Alice", "Bob")
    assert plan.data["weight"] == 4.5
    assert plan.data["keywords"] == "friendship, old, rivalry, trust"
    assert plan.data["directions"] == [["Bob", "Alice"], ["Alice", "Bob"]]
    assert plan.data["description"] == f"Friends.{SEP}Rivals."
    assert plan.data["source_ids"] == ["c1", "c2", "c3"]
    assert plan.data["created_at"] == 3.0


def test_relation_rejects_foreign_fragment():
    with pytest.raises(ValueError):
        merge_relation(("A", "B"), None, [R("A", "C", "", "d")], POLICY, 0, "llm")


def test_summary_thresholds():
    small = MergePolicy(
        force_llm_summary_on_merge=3, summary_max_tokens=10_000, tokenizer=TOKENIZER
    )
    two = merge_entity("A", None, [E("A", "T", "x"), E("A", "T", "y")], small, 0, "llm")
    three = merge_entity("A", two.data, [E("A", "T", "z")], small, 0, "llm")
    assert two.needs_summary is None and three.needs_summary == ["x", "y", "z"]
    long = MergePolicy(summary_max_tokens=10, tokenizer=TOKENIZER)
    one_long = merge_entity("A", None, [E("A", "T", "word " * 50)], long, 0, "llm")
    assert one_long.needs_summary is None  # a single fragment is never summarised
    two_long = merge_entity("A", one_long.data, [E("A", "T", "other")], long, 0, "llm")
    assert two_long.needs_summary is not None


def test_group_extractions_keeps_chunk_order_and_drops_self_loops():
    ex1 = Extraction(
        [E("B", "T", "b1"), E("A", "T", "a1")], [R("B", "A", "", "r1"), R("A", "A", "", "loop")]
    )
    ex2 = Extraction([E("A", "T", "a2")], [R("A", "B", "", "r2"), R("C", "A", "", "r3")])
    entities, relations = group_extractions([ex1, ex2])
    assert list(entities) == ["B", "A"]
    assert [e.description for e in entities["A"]] == ["a1", "a2"]
    assert list(relations) == [("A", "B"), ("A", "C")]
    assert [r.description for r in relations[("A", "B")]] == ["r1", "r2"]
    assert needed_keys([ex1, ex2]) == (["B", "A", "C"], [("A", "B"), ("A", "C")])


def test_plan_batch_makes_placeholders_only_for_unknown_endpoints():
    ex = Extraction(
        [E("A", "Person", "a", "c1")],
        [
            R("A", "B", "k", "A knows B.", 1.0, "c1", "f"),
            R("C", "A", "k", "C met A.", 1.0, "c2", "f"),
            R("B", "A", "k", "B saw A.", 1.0, "c3", "f"),
        ],
    )
    plan = plan_batch(
        BatchInput([ex], existing_nodes={"C": {"entity_type": "Person"}}, now=7.0), POLICY
    )
    assert list(plan.nodes) == ["A", "B"]
    b = plan.nodes["B"].data
    assert b["entity_type"] == "UNKNOWN"
    assert b["description"] == f"A knows B.{SEP}B saw A."
    assert b["source_ids"] == ["c1", "c3"]
    assert list(plan.edges) == [("A", "B"), ("A", "C")]
    assert len(plan.all()) == 4
