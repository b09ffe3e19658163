"""The conditions stage: the question's constraints, checked against every retrieved item.

It runs between retrieval and the context: :func:`read_conditions` (at
the same time as the routes) extracts the constraints; the entities and
relations a mode found are screened before their budgets, the chunks
after selection and before theirs. A conflicting item is dropped (a
``conditions`` drop in the trace, with its reason) unless the query keeps
them (``QueryParam.keep_conflicting``), and then the context says so.
Once the context is final, :meth:`Conditions.finish` works out the
coverage and the note on what is missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from kgrag.retrieval.conditions.check import Judgement, judge
from kgrag.retrieval.conditions.constraint import Constraint
from kgrag.retrieval.conditions.coverage import Coverage, coverage
from kgrag.retrieval.conditions.extract_llm import llm_constraints
from kgrag.retrieval.conditions.extract_rules import from_names, rule_constraints, unique
from kgrag.retrieval.conditions.names import in_question
from kgrag.retrieval.conditions.note import missing_note
from kgrag.retrieval.conditions.render import Final, reserve_text, section_variants
from kgrag.retrieval.records import ChunkHit, EntityHit, RelationHit, description_text
from kgrag.retrieval.shapes import ConditionsData, ConditionsTrace, CoverageData
from kgrag.retrieval.trace import Trace, relation_id

if TYPE_CHECKING:
    from kgrag.llm.service import ChatService
    from kgrag.llm.tokenizer import Tokenizer
    from kgrag.retrieval.keywords.source import KeywordSet
    from kgrag.retrieval.param import QueryParam
    from kgrag.retrieval.records import RetrievalContext, Retrieved

T = TypeVar("T")
EXTRA = "conditions"  # the RetrievalContext.extras key the chunk screen reads
EXTRACTORS = ("rules", "llm", "off")
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(slots=True)
class Conditions:
    """The constraints of one question and every verdict on its items."""

    asked: list[Constraint] = field(default_factory=list)
    source: str = "off"  # rules, llm, cache or off
    keep_conflicting: bool = False
    chinese: bool = False
    error: str | None = None
    judgements: dict[tuple[str, str], Judgement] = field(default_factory=dict)
    coverage: list[Coverage] = field(default_factory=list)
    note: str = ""
    section: str = ""
    budget: int = 0  # tokens kept for the section (see reserve)
    chunk_slots: int = 0  # chunks the context may hold (chunk_top_k), for the reserve
    tokenizer: Tokenizer | None = field(default=None, repr=False)

    @property
    def active(self) -> bool:
        return bool(self.asked)

    def add_entities(self, question: str, entities: Sequence[EntityHit]) -> None:
        """Objects for the retrieved entities whose names the question writes out."""
        named = [e.name for e in entities if in_question(question, e.name)]
        if self.source != "off" and named:
            self.asked = unique([*self.asked, *from_names(question, named)])

    def screen(
        self,
        kind: str,
        items: Sequence[T],
        name: Callable[[T], str],
        text: Callable[[T], str],
        trace: Trace,
    ) -> list[T]:
        """The items that stay: all but the conflicting ones, unless those are kept."""
        if not self.active:
            return list(items)
        kept = []
        for item in items:
            j = self.judgements.get((kind, name(item))) or judge(
                self.asked, kind, name(item), text(item)
            )
            self.judgements[(kind, j.id)] = j
            if j.verdict != "conflicts":
                kept.append(item)
            elif self.keep_conflicting:
                kept.append(item)
                trace.note("conditions", f"kept conflicting {kind} {j.id}: {'; '.join(j.reasons)}")
            else:
                trace.drop(
                    "conditions", kind, j.id, "; ".join(j.reasons), getattr(item, "score", None)
                )
        return kept

    def reserve(self, tokenizer: Tokenizer, room: int) -> int:
        """``room`` less the tokens kept for the conditions section.

        The section gets what its longest form needs, provided that is at
        most half the room; otherwise none (the items come first).
        """
        self.tokenizer = tokenizer
        text = reserve_text(self, self.chunk_slots)
        need = tokenizer.count(text) + 2 if text else 0
        self.budget = need if need <= room // 2 else 0
        return room - self.budget

    def finish(self, context: str, final: Final) -> str:
        """Coverage and note for the ``final`` items; ``context`` with the conditions section.

        The section is the most detailed one that fits :meth:`reserve`'s tokens.
        """
        if not self.active:
            return context
        present = final.keys()
        judged = list(self.judgements.values())
        self.coverage = coverage(self.asked, judged, present)
        self.note = missing_note(self.coverage, judged, self.chinese) if judged else ""
        kept = [j for j in judged if j.verdict == "conflicts" and (j.kind, j.id) in present]
        count = self.tokenizer.count if self.tokenizer else len
        fitting = [v for v in section_variants(self, kept, final) if count(v) + 2 <= self.budget]
        self.section = fitting[0] if fitting else ""
        return "\n\n".join(p for p in (context, self.section) if p)

    def coverage_data(self) -> list[CoverageData]:
        """:attr:`QueryResult.coverage`: each constraint, its status and items."""
        return [e.to_dict() for e in self.coverage]

    def answer_with_note(self, answer: str) -> str:
        """An answer written without a model, opened by what the sources do not cover."""
        return f"{self.note}\n\n{answer}" if self.note else answer

    def to_dict(self) -> ConditionsData:
        """The stage's outcome as JSON-ready data (``query_data()["conditions"]``)."""
        judged = list(self.judgements.values())
        return {
            "source": self.source,
            "error": self.error,
            "keep_conflicting": self.keep_conflicting,
            "constraints": [c.to_dict() for c in self.asked],
            "coverage": self.coverage_data(),
            "judgements": [j.to_dict() for j in judged],
            "dropped": []
            if self.keep_conflicting
            else [j.id for j in judged if j.verdict == "conflicts"],
            "note": self.note,
        }


def entity_text(e: EntityHit) -> str:
    return f"{e.name}\n{description_text(e.data)}"


def relation_text(r: RelationHit) -> str:
    return f"{r.src}\n{r.tgt}\n{r.data.get('keywords', '')}\n{description_text(r.data)}"


def relation_key(r: RelationHit) -> str:
    return relation_id(r.src, r.tgt)


async def read_conditions(
    question: str, kws: KeywordSet, param: QueryParam, chat: ChatService | None
) -> Conditions:
    """The constraints of ``question``: off, the rules, or the chat model (rules when it fails)."""
    chinese = bool(_CJK.search(question))
    mode, keep = param.conditions, param.keep_conflicting
    if mode == "off":
        return Conditions(source="off", keep_conflicting=keep, chinese=chinese)
    asked, source, error = None, "rules", None
    if mode == "llm" and chat is not None:
        asked, source, error = await llm_constraints(question, chat)
    if asked is None:
        asked, source = rule_constraints(question, kws.low), "rules"
    found = Conditions(asked, source, keep, chinese, error)
    found.chunk_slots = param.chunk_top_k
    return found


def screen_found(
    conds: Conditions, question: str, found: Retrieved, ctx: RetrievalContext
) -> Retrieved:
    """``found`` without its conflicting entities and relations; the chunk screen armed."""
    conds.add_entities(question, found.entities)
    ctx.extras[EXTRA] = conds
    asked: ConditionsTrace = {
        "source": conds.source,
        "constraints": [c.to_dict() for c in conds.asked],
        "error": conds.error,
    }
    ctx.trace.set(EXTRA, asked)
    found.entities = conds.screen(
        "entity", found.entities, lambda e: e.name, entity_text, ctx.trace
    )
    found.relations = conds.screen(
        "relation", found.relations, relation_key, relation_text, ctx.trace
    )
    return found


def screen_chunks(ctx: RetrievalContext, chunks: list[ChunkHit]) -> list[ChunkHit]:
    """The selected chunks without the conflicting ones (as they are when no stage ran)."""
    conds = ctx.extras.get(EXTRA)
    if not isinstance(conds, Conditions):
        return chunks
    return conds.screen("chunk", chunks, lambda c: c.id, lambda c: c.content, ctx.trace)
