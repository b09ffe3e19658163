"""Property tests of the pure merge functions."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.knowledge import fields
from kgrag.knowledge.merge import merge_entity, merge_relation
from kgrag.types import SEP

from .strategies import (
    capped_policies,
    entity_fragments,
    keywords,
    relation_fragments,
    roomy_policy,
)

PAIR = ("Alice", "Bob")
FAST = settings(max_examples=150, deadline=None)


def _merge_in_batches(merge, key, batches, policy):
    data = None
    plans = []
    for i, batch in enumerate(batches):
        plan = merge(key, data, batch, policy, float(i), "llm")
        plans.append(plan)
        data = plan.data
    return plans


@FAST
@given(entity_fragments(), entity_fragments())
def test_entity_merge_is_deterministic(existing_frags, frags):
    policy = roomy_policy()
    existing = merge_entity("Alice", None, existing_frags, policy, 1.0, "llm").data
    a = merge_entity("Alice", copy.deepcopy(existing), frags, policy, 2.0, "llm")
    b = merge_entity("Alice", copy.deepcopy(existing), copy.deepcopy(frags), policy, 2.0, "llm")
    assert a == b


@FAST
@given(relation_fragments(), relation_fragments())
def test_relation_merge_is_deterministic(existing_frags, frags):
    policy = roomy_policy()
    existing = merge_relation(PAIR, None, existing_frags, policy, 1.0, "llm").data
    a = merge_relation(PAIR, copy.deepcopy(existing), frags, policy, 2.0, "llm")
    b = merge_relation(PAIR, copy.deepcopy(existing), copy.deepcopy(frags), policy, 2.0, "llm")
    assert a == b


@FAST
@given(entity_fragments(), entity_fragments())
def test_entity_two_batches_equal_one(first, second):
    policy = roomy_policy()
    one = merge_entity("Alice", None, first + second, policy, 0.0, "llm").data
    two = _merge_in_batches(merge_entity, "Alice", [first, second], policy)[-1].data
    for name in (
        "type_counts",
        "entity_type",
        "source_ids",
        "file_paths",
        "description",
        "created_at",
    ):
        assert one[name] == two[name], name


@FAST
@given(relation_fragments(), relation_fragments())
def test_relation_two_batches_equal_one(first, second):
    policy = roomy_policy()
    one = merge_relation(PAIR, None, first + second, policy, 0.0, "llm").data
    two = _merge_in_batches(merge_relation, PAIR, [first, second], policy)[-1].data
    for name in ("weight", "keywords", "source_ids", "directions", "description", "file_paths"):
        assert one[name] == two[name], name


@FAST
@given(st.lists(keywords(), max_size=5))
def test_keyword_union_is_idempotent_and_order_free(texts):
    merged = fields.merge_keywords(texts)
    assert fields.merge_keywords([merged]) == merged
    assert fields.merge_keywords([merged, merged]) == merged
    assert fields.merge_keywords(list(reversed(texts))) == merged
    words = merged.split(", ") if merged else []
    assert words == sorted(set(words))
    assert all(w == w.strip() and w and "," not in w and "\uff0c" not in w for w in words)


def _all_ids(batches):
    return fields.dedup(f.chunk_id for batch in batches for f in batch)


@FAST
@given(capped_policies(), st.lists(entity_fragments(max_size=6), min_size=1, max_size=4))
def test_entity_caps_never_exceeded(policy, batches):
    for plan in _merge_in_batches(merge_entity, "Alice", batches, policy):
        assert len(plan.data["source_ids"]) <= policy.max_source_ids_per_entity
        assert len(plan.data["file_paths"]) <= policy.max_file_paths
        assert len(set(plan.data["source_ids"])) == len(plan.data["source_ids"])


@FAST
@given(capped_policies(), st.lists(relation_fragments(max_size=6), min_size=1, max_size=4))
def test_relation_caps_never_exceeded(policy, batches):
    for plan in _merge_in_batches(merge_relation, PAIR, batches, policy):
        assert len(plan.data["source_ids"]) <= policy.max_source_ids_per_relation
        assert len(plan.data["file_paths"]) <= policy.max_file_paths


@FAST
@given(capped_policies(), st.lists(entity_fragments(max_size=6), min_size=1, max_size=4))
def test_keep_keeps_the_oldest_and_skips_the_rest(policy, batches):
    policy = _with_method(policy, "KEEP")
    cap = policy.max_source_ids_per_entity
    plan = _merge_in_batches(merge_entity, "Alice", batches, policy)[-1]
    ids = plan.data["source_ids"]
    assert ids == _all_ids(batches)[:cap]
    kept = set(ids) | {""}
    admitted = [f for b in batches for f in b if f.chunk_id in kept]
    assert set(plan.fragments) == set(fields.dedup(f.description for f in admitted))
    assert sum(plan.data["type_counts"].values()) == sum(1 for f in admitted if f.type.strip())


@FAST
@given(capped_policies(), entity_fragments(max_size=10))
def test_fifo_keeps_the_newest(policy, frags):
    policy = _with_method(policy, "FIFO")
    cap = policy.max_source_ids_per_entity
    plan = merge_entity("Alice", None, frags, policy, 0.0, "llm")
    expected = _all_ids([frags])
    assert plan.data["source_ids"] == (expected[max(0, len(expected) - cap) :] if cap else [])
    # FIFO never drops descriptions
    assert set(plan.fragments) == set(fields.dedup(f.description for f in frags))


@FAST
@given(capped_policies(), st.lists(relation_fragments(max_size=6), min_size=1, max_size=3))
def test_needs_summary_matches_thresholds(policy, batches):
    for plan in _merge_in_batches(merge_relation, PAIR, batches, policy):
        frags = plan.fragments
        tokens = sum(policy.tokenizer.count(x) for x in frags)
        expected = len(frags) >= 2 and (
            len(frags) >= policy.force_llm_summary_on_merge or tokens >= policy.summary_max_tokens
        )
        assert (plan.needs_summary is not None) == expected
        if expected:
            assert plan.needs_summary == frags
        assert plan.data["description"] == SEP.join(frags)
        assert frags == fields.dedup(frags)


def _with_method(policy, method):
    from dataclasses import replace

    return replace(policy, source_ids_limit_method=method)
