"""LLM summaries of description fragments, map-reduce when they are large.

:func:`summarize` condenses the fragments of one node or edge. When they
fit one call (``summary_context_size`` tokens, prompt included) it makes
one call; otherwise it groups them into calls that fit (at least two
fragments each), summarises the groups concurrently and repeats over the
partial summaries until one call suffices. No call ever carries more than
``summary_context_size`` tokens: fragments too long to pair are truncated.

:func:`summarize_buckets` is what the pipeline uses: fragments that fit one
call are summarised in one call; more are spread over a fixed number of
buckets by a hash of their text (a power of two, so it changes only when
the fragments double), each bucket is summarised and the bucket summaries
reduced. The result depends on the fragment list only, and since every
call is cached by its prompt, adding or removing one fragment re-asks only
its bucket and the reduction: about two calls however popular the entity.

:func:`apply_summaries` runs every summary a list of merge plans needs.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from kgrag.errors import ConfigError
from kgrag.extract import prompts
from kgrag.knowledge.merge import MergePlan
from kgrag.knowledge.policy import MergePolicy
from kgrag.llm.reasoning import strip_reasoning
from kgrag.llm.tokenizer import Tokenizer
from kgrag.types import SEP

if TYPE_CHECKING:
    from kgrag.llm.base import ChatMessage, ChatResult, Messages, Role

Kind = Literal["entity", "relation"]
# Tokens reserved per message for the chat format, plus a safety margin.
_PER_MESSAGE = 4
_MARGIN = 16
# Fewest tokens left for descriptions in one call (room for a few pairs).
_MIN_BUDGET = 64


class Chat(Protocol):
    """The slice of the chat service the summariser uses."""

    async def chat(
        self, messages: Messages, *, role: Role, json_mode: bool = False
    ) -> ChatResult: ...


def _line(fragment: str) -> str:
    return json.dumps({"description": fragment}, ensure_ascii=False)


def build_summary_messages(
    name: str | tuple[str, str], fragments: Sequence[str], language: str, length: int, kind: Kind
) -> Messages:
    """The chat messages asking for one summary of ``fragments``.

    The wording lives with the other prompts (:mod:`kgrag.extract.prompts`):
    fragments go one JSON object per line inside a fenced block after a
    ``---Descriptions---`` heading. A relation is named by its endpoint pair.
    """
    # a pair read back from JSON may be a list: the prompt wants a tuple
    subject = (name[0], name[1]) if kind == "relation" and not isinstance(name, str) else name
    return prompts.summary_messages(subject, fragments, language=language, summary_length=length)


def fragment_cost(tokenizer: Tokenizer, fragment: str) -> int:
    """Tokens one fragment adds to a summary prompt (its JSON line)."""
    return tokenizer.count(_line(fragment)) + 1


def messages_tokens(tokenizer: Tokenizer, messages: Sequence[ChatMessage]) -> int:
    """Tokens of the messages' contents."""
    return sum(tokenizer.count(m["content"]) for m in messages)


def truncate_tokens(tokenizer: Tokenizer, text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` tokens."""
    ids = tokenizer.encode(text)
    if len(ids) <= limit:
        return text
    return tokenizer.decode(ids[: max(limit, 0)]).rstrip("\ufffd")


@dataclass(slots=True)
class _Job:
    """One summarisation: who, how, and the per-call token budget."""

    name: str | tuple[str, str]
    kind: Kind
    language: str
    policy: MergePolicy
    tokenizer: Tokenizer
    chat: Chat

    def messages(self, fragments: Sequence[str]) -> Messages:
        return build_summary_messages(
            self.name, fragments, self.language, self.policy.summary_length_recommended, self.kind
        )

    def budget(self) -> int:
        """Tokens left for fragment lines in one call."""
        base = self.messages([])
        overhead = messages_tokens(self.tokenizer, base) + _PER_MESSAGE * len(base) + _MARGIN
        budget = self.policy.summary_context_size - overhead
        if budget < _MIN_BUDGET:
            raise ConfigError(
                f"summary_context_size={self.policy.summary_context_size} leaves no room for "
                f"descriptions after the {overhead}-token summary prompt"
            )
        return budget

    def cost(self, fragment: str) -> int:
        return fragment_cost(self.tokenizer, fragment)

    def fit(self, fragment: str, limit: int) -> str:
        """``fragment`` shortened until its line costs at most ``limit``."""
        cost = self.cost(fragment)
        ids = self.tokenizer.encode(fragment)
        n = len(ids)
        while cost > limit and n > 0:
            n = max(0, n - max(1, cost - limit))
            fragment = self.tokenizer.decode(ids[:n]).rstrip("\ufffd")
            cost = self.cost(fragment)
        return fragment

    async def call(self, fragments: Sequence[str], fallback_tokens: int) -> str:
        """One LLM summary; an empty answer falls back to the joined fragments."""
        result = await self.chat.chat(self.messages(fragments), role="summary")
        text = strip_reasoning(getattr(result, "text", "") or "").strip()
        if text:
            return text
        return truncate_tokens(self.tokenizer, SEP.join(fragments), fallback_tokens)


def call_budget(
    name: str, kind: Kind, language: str, policy: MergePolicy, tokenizer: Tokenizer | None = None
) -> int:
    """Tokens of fragment lines one summary call for ``name`` may carry."""
    tok = tokenizer or policy.tokenizer
    return _Job(name, kind, language, policy, tok, None).budget()  # type: ignore[arg-type]


def group_fragments(costs: Sequence[int], budget: int) -> list[list[int]]:
    """Greedy groups of consecutive indices whose costs add up to ≤ ``budget``.

    With every cost ≤ ``budget // 2``, every group but the last has at
    least two members.
    """
    groups: list[list[int]] = [[]]
    total = 0
    for i, c in enumerate(costs):
        if groups[-1] and total + c > budget:
            groups.append([])
            total = 0
        groups[-1].append(i)
        total += c
    return [g for g in groups if g]


async def _reduce_round(job: _Job, items: list[str], budget: int) -> list[str]:
    """Summarise groups of ``items`` concurrently; singletons pass through."""
    groups = group_fragments([job.cost(x) for x in items], budget)

    async def one(group: list[int]) -> str:
        frags = [items[i] for i in group]
        if len(frags) == 1:
            return frags[0]
        return await job.call(frags, budget // 2)

    return list(await asyncio.gather(*(one(g) for g in groups)))


async def summarize(
    name: str | tuple[str, str],
    fragments: Sequence[str],
    *,
    chat: Chat,
    tokenizer: Tokenizer | None = None,
    policy: MergePolicy,
    language: str = "English",
    kind: Kind = "entity",
) -> str:
    """One description condensing ``fragments`` (map-reduce when large)."""
    job = _Job(name, kind, language, policy, tokenizer or policy.tokenizer, chat)
    budget = job.budget()
    final_tokens = policy.summary_max_tokens
    items = [x for x in fragments if x.strip()]
    if not items:
        return ""
    while True:
        if sum(job.cost(x) for x in items) > budget:
            items = [job.fit(x, budget // 2) for x in items]  # any two now fit one call
        if len(items) <= 2 or sum(job.cost(x) for x in items) <= budget:
            return await job.call(items, final_tokens)
        items = await _reduce_round(job, items, budget)


def bucket_of(fragment: str, buckets: int) -> int:
    """The bucket ``fragment`` falls in (stable across runs and machines)."""
    digest = hashlib.md5(fragment.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:4], "big") % buckets


def bucket_count(total_cost: int, budget: int) -> int:
    """Buckets for fragments costing ``total_cost``: a power of two, each about half a call."""
    n = 2
    while total_cost > n * (budget // 2):
        n *= 2
    return n


async def summarize_buckets(
    name: str | tuple[str, str],
    fragments: Sequence[str],
    *,
    chat: Chat,
    policy: MergePolicy,
    tokenizer: Tokenizer | None = None,
    language: str = "English",
    kind: Kind = "entity",
) -> str:
    """One description of ``fragments``: one call when they fit, else bucketed."""
    tok = tokenizer or policy.tokenizer
    job = _Job(name, kind, language, policy, tok, chat)
    budget = job.budget()
    items = [x for x in fragments if x.strip()]
    total = sum(job.cost(x) for x in items)
    if total <= budget:
        return await summarize(
            name, items, chat=chat, tokenizer=tok, policy=policy, language=language, kind=kind
        )
    n = bucket_count(total, budget)
    buckets: list[list[str]] = [[] for _ in range(n)]
    for frag in items:  # canonical order is kept inside each bucket
        buckets[bucket_of(frag, n)].append(frag)

    async def one(bucket: list[str]) -> str:
        if len(bucket) == 1:
            return bucket[0]
        return await summarize(
            name, bucket, chat=chat, tokenizer=tok, policy=policy, language=language, kind=kind
        )

    parts = await asyncio.gather(*(one(b) for b in buckets if b))
    return await summarize(
        name, list(parts), chat=chat, tokenizer=tok, policy=policy, language=language, kind=kind
    )


async def apply_summaries(
    plans: Sequence[MergePlan],
    chat: Chat | None,
    *,
    policy: MergePolicy,
    language: str = "English",
    tokenizer: Tokenizer | None = None,
) -> int:
    """Summarise every plan with ``needs_summary``, concurrently.

    Writes the summary into ``plan.data["description"]`` and clears
    ``needs_summary``. Without a chat model (``chat=None``) the description
    becomes the joined fragments truncated to ``summary_max_tokens``.
    Returns how many plans were summarised.
    """
    todo = [p for p in plans if p.needs_summary]
    tok = tokenizer or policy.tokenizer

    async def one(plan: MergePlan) -> None:
        frags = plan.needs_summary or []
        if chat is None:
            text = truncate_tokens(tok, SEP.join(frags), policy.summary_max_tokens)
        else:
            subject = plan.key if plan.kind == "relation" else plan.label
            text = await summarize_buckets(
                subject,
                frags,
                chat=chat,
                tokenizer=tok,
                policy=policy,
                language=language,
                kind=plan.kind,
            )
        plan.data["description"] = text
        plan.needs_summary = None
        plan.changed = True

    await asyncio.gather(*(one(p) for p in todo))
    return len(todo)
