"""The extractive answer, used when no chat model is set (or it fails).

It quotes the sentences of the retrieved chunks that answer the question,
best first, each cited with its chunk's reference number ``[n]``, then
lists the references it cites. Which sentences: see
:mod:`kgrag.retrieval.answer.quotes` (lexical and dense ranking, each hop of a
multi-hop question its own quote, a pronoun-led quote with the sentence
before it). With no chunk sentences, the descriptions of the first
entities and relations stand in. The same context gives the same answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence

import numpy as np

from kgrag.retrieval.answer import replies as P
from kgrag.retrieval.answer.citations import cite, reference_list
from kgrag.retrieval.answer.quotes import DEFAULT_OPTIONS, DenseQuery, Embedder, find_quotes
from kgrag.retrieval.answer.sentences import split_sentences
from kgrag.retrieval.records import ChunkHit, EntityHit, RelationHit, description_text

__all__ = ["MAX_SENTENCES", "extractive_answer", "fallback_note", "single", "split_sentences"]

MAX_SENTENCES = DEFAULT_OPTIONS.quotes


async def single(text: str) -> AsyncIterator[str]:
    """An async iterator yielding ``text`` once (streaming a fixed reply)."""
    yield text


def fallback_note(reason: str) -> str:
    """The first paragraph of an extractive answer given because the chat model failed."""
    return (
        f"The chat model could not answer ({reason}), so this answer is extractive: "
        "the sentences below are quoted from the indexed documents, best match first."
    )


def _graph_fallback(
    entities: Sequence[EntityHit],
    relations: Sequence[RelationHit],
    references: Sequence[Mapping[str, object]],
) -> list[tuple[str, str]]:
    """The first entities' and relations' descriptions, with their numbers when known."""
    numbers = {
        kind: [str(r["reference_id"]) for r in references if r.get("kind") == kind]
        for kind in ("entity", "relation")
    }
    lines = [
        (f"{e.name}: {description_text(e.data)}", _nth(numbers["entity"], i))
        for i, e in enumerate(entities[:2])
    ]
    lines += [
        (f"{r.src} / {r.tgt}: {description_text(r.data)}", _nth(numbers["relation"], i))
        for i, r in enumerate(relations[:2])
    ]
    return [(" ".join(text.split()), n) for text, n in lines if text.strip()]


def _nth(values: list[str], i: int) -> str:
    return values[i] if i < len(values) else ""


def _render(
    cited: list[tuple[str, str]], references: Sequence[Mapping[str, object]], note: str
) -> str:
    """The note, the numbered quotes with their citations, the cited references."""
    lines = [
        f"{n}. " + cite(text, *(r for r in (ref,) if r)) for n, (text, ref) in enumerate(cited, 1)
    ]
    parts = [note, "Best supporting passages:\n" + "\n".join(lines)]
    numbers = [int(ref) for _, ref in cited if ref.isdigit()]
    block = reference_list(references, numbers) if numbers else ""
    return "\n\n".join([*parts, block] if block else parts)


async def extractive_answer(
    question_vector: np.ndarray,
    chunks: Sequence[ChunkHit],
    refs: Sequence[str],
    references: Sequence[Mapping[str, object]],
    embed: Embedder | None,
    graph: tuple[Sequence[EntityHit], Sequence[RelationHit]] = ((), ()),
    note: str = P.NO_LLM_NOTE,
    question: str = "",
) -> str:
    """The sentences of the context that answer ``question``, each cited ``[n]``.

    ``refs`` is each chunk's reference number; ``note`` opens the answer and
    says why it is extractive. Only the cited references are listed.
    """
    found = await find_quotes(DenseQuery(question, question_vector, embed), chunks)
    if found:
        cited = [(f'"{q.text}"', refs[q.chunk] if q.chunk < len(refs) else "") for q in found]
    else:
        cited = _graph_fallback(*graph, references)
    return _render(cited, references, note)
