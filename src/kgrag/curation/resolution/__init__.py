"""Entity resolution: one node per real thing (``kgrag dedupe``; docs/resolution.md).

Cheap blocking proposes pairs (:mod:`.blocking`), the text and the graph
score them (:mod:`.statements`, :mod:`.score`, optionally :mod:`.judge`),
accepted pairs become groups that never join a hard negative
(:mod:`.group`), and the report (:mod:`.report`) says why. Applying the
groups goes through the curation merge, so every merge can be undone.
"""

from kgrag.curation.resolution.engine import Options, resolve_entities, resolve_view
from kgrag.curation.resolution.group import Group
from kgrag.curation.resolution.report import Homonym, ResolutionReport
from kgrag.curation.resolution.score import PairScore
from kgrag.curation.resolution.view import Entity, GraphView

__all__ = [
    "Entity",
    "GraphView",
    "Group",
    "Homonym",
    "Options",
    "PairScore",
    "ResolutionReport",
    "resolve_entities",
    "resolve_view",
]
