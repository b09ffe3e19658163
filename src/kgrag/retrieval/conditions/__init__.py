"""Conditions: the question's constraints, checked against every context item.

A question about "TLS on firmware v2 of FW-A" is about one model number
and one version: an item about FW-B, or about firmware v1, answers
another question. This stage, between retrieval and the context:

1. extracts the constraints (:class:`Constraint`): objects from the
   keyword stage and the entities the question names; qualifiers
   (versions, model numbers, dates and years, protocols, places,
   quantities with units) by rules for English and Chinese
   (:mod:`.extract_rules`) or by the chat model (:mod:`.extract_llm`,
   ``QueryParam.conditions="llm"``);
2. judges each entity, relation and chunk (:func:`judge`): ``applies``,
   ``conflicts`` or ``unknown``; conflicting items leave the context
   unless ``QueryParam.keep_conflicting`` is set;
3. reports the coverage of each constraint (:class:`Coverage`) and, when
   a qualifier is not covered, a note on what is missing that the answer
   carries (:func:`missing_note`).

See docs/conditions.md.
"""

from kgrag.retrieval.conditions.check import Judgement, judge
from kgrag.retrieval.conditions.constraint import Constraint, Mention
from kgrag.retrieval.conditions.coverage import Coverage
from kgrag.retrieval.conditions.extract_llm import conditions_messages, parse_conditions
from kgrag.retrieval.conditions.extract_rules import rule_constraints
from kgrag.retrieval.conditions.note import missing_note
from kgrag.retrieval.conditions.render import Final
from kgrag.retrieval.conditions.scan import scan
from kgrag.retrieval.conditions.stage import EXTRACTORS, Conditions, read_conditions

__all__ = [
    "EXTRACTORS",
    "Conditions",
    "Constraint",
    "Coverage",
    "Final",
    "Judgement",
    "Mention",
    "conditions_messages",
    "judge",
    "missing_note",
    "parse_conditions",
    "read_conditions",
    "rule_constraints",
    "scan",
]
