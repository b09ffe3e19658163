"""The extractive answer, used when no chat model is set (or it fails)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

import numpy as np

from kgrag.query.answer import replies as P
from kgrag.query.context.sections import reference_line
from kgrag.query.records import ChunkHit, EntityHit, RelationHit, description_text

MAX_SENTENCES = 4
_MAX_CANDIDATES = 96
_CHUNKS_READ = 8
_SENTENCE_END = re.compile(
    r"(?<=[.!?])\s+(?=[\"'“‘(\[]?[A-Z0-9])|(?<=[。！？；])|\n\s*\n|\n(?=\s*[-*•#])"
)


async def single(text: str) -> AsyncIterator[str]:
    """An async iterator yielding ``text`` once (streaming a fixed reply)."""
    yield text


def fallback_note(reason: str) -> str:
    """The first paragraph of an extractive answer given because the chat model failed."""
    return (
        f"The chat model could not answer ({reason}), so this answer is extractive: "
        "the sentences below are quoted from the indexed documents, best match first."
    )


def split_sentences(text: str) -> list[str]:
    """Sentences and list items of ``text``, whitespace-normalised."""
    out = []
    for piece in _SENTENCE_END.split(text):
        sentence = " ".join(piece.split()).strip(" -*•#")
        if len(sentence) >= 12 or (len(sentence) >= 6 and re.search(r"[\u3400-\u9fff]", sentence)):
            out.append(sentence)
    return out


def _candidates(chunks: Sequence[ChunkHit], refs: Sequence[str]) -> list[tuple[str, str]]:
    seen: set[str] = set()
    out = []
    for chunk, ref in zip(chunks[:_CHUNKS_READ], refs, strict=False):
        for sentence in split_sentences(chunk.content):
            if sentence not in seen:
                seen.add(sentence)
                out.append((sentence, ref))
    return out[:_MAX_CANDIDATES]


def _graph_fallback(entities: Sequence[EntityHit], relations: Sequence[RelationHit]) -> list[str]:
    lines = [f"{e.name}: {description_text(e.data)}" for e in entities[:2]]
    lines += [f"{r.src} / {r.tgt}: {description_text(r.data)}" for r in relations[:2]]
    return [" ".join(line.split()) for line in lines if line.strip()]


async def extractive_answer(
    question_vector: np.ndarray,
    chunks: Sequence[ChunkHit],
    refs: Sequence[str],
    references: Sequence[dict[str, str]],
    embed: Any,
    graph: tuple[Sequence[EntityHit], Sequence[RelationHit]] = ((), ()),
    note: str = P.NO_LLM_NOTE,
) -> str:
    """The sentences of the top chunks most similar to the question, with their references.

    ``note`` opens the answer and says why it is extractive.
    """
    candidates = _candidates(chunks, refs)
    lines: list[str] = []
    if candidates:
        vectors = await embed.embed([s for s, _ in candidates], kind="document")
        scores = np.asarray(vectors, dtype=np.float32) @ np.asarray(
            question_vector, dtype=np.float32
        )
        best = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), i))[:MAX_SENTENCES]
        lines = [
            f'{n}. "{candidates[i][0]}" [{candidates[i][1]}]' for n, i in enumerate(best, start=1)
        ]
    else:
        lines = [f"{n}. {text}" for n, text in enumerate(_graph_fallback(*graph), start=1)]
    parts = [note, "Best supporting passages:\n" + "\n".join(lines)]
    if references:
        parts.append(
            "### References\n"
            + "\n".join(  # with page / section (sections.reference_line)
                reference_line(r["reference_id"], r["file_path"], r.get("location", ""))
                for r in references
            )
        )
    return "\n\n".join(parts)
