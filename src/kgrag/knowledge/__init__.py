"""Merging extracted fragments into the knowledge graph.

Pure and deterministic: :mod:`kgrag.knowledge.merge` turns stored node/edge
dicts plus new fragments into :class:`MergePlan` objects,
:mod:`kgrag.knowledge.batch` does it for a whole batch (placeholders
included), and :mod:`kgrag.knowledge.summary` condenses long descriptions
with the chat model (map-reduce). Storage I/O stays with the caller.
"""

from kgrag.knowledge.batch import BatchInput, BatchPlan, needed_keys, plan_batch
from kgrag.knowledge.merge import (
    MergePlan,
    group_extractions,
    merge_entity,
    merge_relation,
    placeholder_entity,
)
from kgrag.knowledge.policy import MergePolicy
from kgrag.knowledge.summary import apply_summaries, build_summary_messages, summarize

__all__ = [
    "BatchInput",
    "BatchPlan",
    "MergePlan",
    "MergePolicy",
    "apply_summaries",
    "build_summary_messages",
    "group_extractions",
    "merge_entity",
    "merge_relation",
    "needed_keys",
    "placeholder_entity",
    "plan_batch",
    "summarize",
]
