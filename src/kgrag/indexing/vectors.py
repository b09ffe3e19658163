"""Entity and relation vectors: what each embeds, and re-embedding only what changed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kgrag.ingest.ids import entity_vector_id, relation_vector_id
from kgrag.knowledge.batch import BatchPlan
from kgrag.storage.layout import ENTITY_VECTORS, RELATION_VECTORS

if TYPE_CHECKING:
    from kgrag.storage.base import Storage

Pair = tuple[str, str]
Embed = Callable[[list[str]], Awaitable[np.ndarray]]


def entity_text(name: str, node: Mapping[str, object], compact: bool = False) -> str:
    """The text an entity's vector embeds: its names (with a merged entity's aliases) and
    description, or its names alone.

    ``compact`` is for graphs built by the NLP extractor, whose descriptions
    are the chunk's own sentences (already embedded with the chunk): the
    name alone is what a question's keywords are matched against, and it
    embeds many times faster than a paragraph.
    """
    aliases = node.get("aliases")
    names = (
        f"{name}; {'; '.join(map(str, aliases))}" if isinstance(aliases, list) and aliases else name
    )
    return names if compact else f"{names}\n{node.get('description', '')}"


def relation_text(key: Pair, edge: Mapping[str, object], compact: bool = False) -> str:
    """The text a relation's vector embeds; ``compact``: a short ``source keywords target`` fact."""
    if compact:
        keywords = str(edge.get("keywords", "")).replace(",", "")
        return " ".join(p for p in (key[0], keywords, key[1]) if p)
    return f"{edge.get('keywords', '')}\t{key[0]}\n{key[1]}\n{edge.get('description', '')}"


def _compact(data: Mapping[str, object]) -> bool:
    return data.get("extractor") == "nlp"


@dataclass(slots=True)
class Embedded:
    """New vectors for the nodes and edges whose embedded text changed."""

    names: list[str] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))


class GraphVectors:
    """Keeps the ``entities`` and ``relations`` vector namespaces in step with the graph."""

    def __init__(self, storage: Storage, embed: Embed):
        self.storage, self._embed = storage, embed

    async def prepare(
        self,
        plan: BatchPlan,
        old_nodes: Mapping[str, Mapping[str, object]],
        old_edges: Mapping[Pair, Mapping[str, object]],
        *,
        skip: Collection[str | Pair] = (),
        force: Collection[str | Pair] = (),
    ) -> Embedded:
        """Embed the changed plans whose vector text differs from the stored one.

        Keys in ``skip`` are left alone (their summary is still to come);
        keys in ``force`` are embedded whatever changed.
        """
        names = [
            n
            for n, p in plan.nodes.items()
            if n in force
            or (
                n not in skip
                and p.changed
                and (
                    n not in old_nodes
                    or entity_text(n, old_nodes[n], _compact(old_nodes[n]))
                    != entity_text(n, p.data, _compact(p.data))
                )
            )
        ]
        pairs = [
            k
            for k, p in plan.edges.items()
            if k in force
            or (
                k not in skip
                and p.changed
                and (
                    k not in old_edges
                    or relation_text(k, old_edges[k], _compact(old_edges[k]))
                    != relation_text(k, p.data, _compact(p.data))
                )
            )
        ]
        texts = [entity_text(n, plan.nodes[n].data, _compact(plan.nodes[n].data)) for n in names]
        texts += [relation_text(k, plan.edges[k].data, _compact(plan.edges[k].data)) for k in pairs]
        out = Embedded(names, pairs)
        if texts:
            out.vectors = await self._embed(texts)
        return out

    async def write(
        self, embedded: Embedded, dead_nodes: list[str], dead_edges: list[Pair]
    ) -> None:
        """Upsert the new vectors and delete those of removed nodes and edges."""
        s, n = self.storage, len(embedded.names)
        if dead_nodes:
            await s.vectors(ENTITY_VECTORS).delete([entity_vector_id(x) for x in dead_nodes])
        if dead_edges:
            await s.vectors(RELATION_VECTORS).delete([relation_vector_id(*k) for k in dead_edges])
        if embedded.names:
            await s.vectors(ENTITY_VECTORS).upsert(
                [entity_vector_id(x) for x in embedded.names],
                embedded.vectors[:n],
                [{"name": x} for x in embedded.names],
            )
        if embedded.pairs:
            await s.vectors(RELATION_VECTORS).upsert(
                [relation_vector_id(*k) for k in embedded.pairs],
                embedded.vectors[n:],
                [{"src": k[0], "tgt": k[1]} for k in embedded.pairs],
            )
