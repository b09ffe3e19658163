"""The quotes of an extractive answer: which sentences, and with which neighbours.

:func:`find_quotes` reads the sentences of the context's chunks, ranks
them (:mod:`kgrag.retrieval.answer.ranking`: lexical for all, dense for the
best ``RankOptions.dense``, embedded in a few calls of similar-length
texts; lexical only if the embedder fails) and turns the picks into quotes: a sentence that opens
with a pronoun brings the one before it, and picks next to each other in
a chunk make one quote (up to three sentences).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from kgrag.errors import ModelError
from kgrag.retrieval.answer.ranking import Pool, RankOptions, pick, relative
from kgrag.retrieval.answer.sentences import Sentence, context_sentences, needs_antecedent
from kgrag.retrieval.answer.terms import terms
from kgrag.retrieval.records import ChunkHit

DEFAULT_OPTIONS = RankOptions()
_CJK_END = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef”’」』]$")
CHUNKS_READ = 24  # chunks of the context whose sentences are read
SENTENCES_READ = 2000
EMBED_CHARS = 400  # of a long sentence, the part embedded
SPAN = 3  # sentences one quote may join
EMBED_GROUP = 4  # texts per embedding call (similar lengths together)


class Embedder(Protocol):
    """What the extractive answer embeds sentences with (an :class:`EmbeddingService`)."""

    async def embed(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class Quote:
    """Quoted text and the index (in the context's chunks) of the chunk it comes from."""

    text: str
    chunk: int


def _context_terms(sentences: Sequence[Sentence], docs: list[list[str]]) -> list[set[str]]:
    """Per sentence, the terms of the one before it and of its chunk's last heading."""
    out: list[set[str]] = []
    heading: set[str] = set()
    for i, s in enumerate(sentences):
        same = i > 0 and sentences[i - 1].chunk == s.chunk
        heading = heading if same else set()
        out.append(heading | set(docs[i - 1]) if same else set())
        if s.heading:
            heading = set(docs[i])
    return out


def _embedded_text(i: int, sentences: Sequence[Sentence]) -> str:
    """What stands for sentence ``i`` in the embedding: a pronoun-led one with the one before."""
    s = sentences[i]
    text = s.text[:EMBED_CHARS]
    if i > 0 and sentences[i - 1].chunk == s.chunk and needs_antecedent(s.text):
        return sentences[i - 1].text[-EMBED_CHARS // 2 :] + " " + text
    return text


@dataclass(frozen=True, slots=True)
class DenseQuery:
    """What the dense half of the ranking needs: the question, its vector, the embedder."""

    question: str
    vector: np.ndarray
    embed: Embedder | None  # an EmbeddingService (``await embed.embed(texts)``), or None


async def _embed_grouped(embed: Embedder, texts: list[str]) -> np.ndarray | None:
    """Vectors of ``texts``, embedded in groups of similar length (None if a call fails).

    A batch is padded to its longest text: a local model given one short
    and one long sentence pays for two long ones. Groups of
    :data:`EMBED_GROUP` shortest-first cut that cost by about 40%; the
    calls run concurrently (a remote service answers them side by side).
    """
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    groups = [order[k : k + EMBED_GROUP] for k in range(0, len(order), EMBED_GROUP)]
    done = await asyncio.gather(
        *(embed.embed([texts[i] for i in g]) for g in groups), return_exceptions=True
    )
    if any(isinstance(d, BaseException) for d in done):
        errors = [d for d in done if isinstance(d, BaseException)]
        if all(isinstance(e, ModelError) for e in errors):
            return None
        raise errors[0]
    out = np.zeros((len(texts), np.asarray(done[0]).shape[1]))
    for g, vectors in zip(groups, done, strict=True):
        out[g] = np.asarray(vectors, dtype=np.float64)
    return out


async def _fill_dense(pool: Pool, sentences: Sequence[Sentence], q: DenseQuery, count: int) -> None:
    """Set ``pool.dense`` for the best lexical candidates (left at 0 if the embedder fails)."""
    chosen = pool.dense_candidates(q.question, count)
    if not chosen or q.embed is None:
        return
    vectors = await _embed_grouped(q.embed, [_embedded_text(i, sentences) for i in chosen])
    if vectors is None:
        return
    cosines = vectors @ np.asarray(q.vector, dtype=np.float64)
    pool.dense[np.asarray(chosen)] = relative(cosines)


def _touches(span: list[int], members: set[int], sentences: Sequence[Sentence]) -> bool:
    """Whether a sentence of ``members`` is next to (or in) ``span``, in the same chunk."""
    chunk = sentences[span[0]].chunk
    held = {sentences[m].position for m in span}
    return any(
        sentences[m].chunk == chunk and {p - 1, p, p + 1} & held
        for m in members
        for p in [sentences[m].position]
    )


def spans(picked: list[int], sentences: Sequence[Sentence], quotes: int) -> list[list[int]]:
    """Per quote, the sentence indexes it holds, in the order the quotes were picked.

    A pronoun-led sentence brings the one before it; a pick next to a
    quote in the same chunk joins it (up to :data:`SPAN` sentences; past
    that it is left out). At most ``quotes`` quotes.
    """
    where = {(s.chunk, s.position): i for i, s in enumerate(sentences)}
    out: list[list[int]] = []
    for i in picked:
        s = sentences[i]
        members = {i}
        before = where.get((s.chunk, s.position - 1))
        if before is not None and needs_antecedent(s.text) and sentences[before].readable:
            members.add(before)
        near = next((span for span in out if _touches(span, members, sentences)), None)
        if near is None and len(out) < quotes:
            out.append(sorted(members, key=lambda m: sentences[m].position))
        elif near is not None and len(set(near) | members) <= SPAN:
            near[:] = sorted(set(near) | members, key=lambda m: sentences[m].position)
    return out


async def find_quotes(
    q: DenseQuery, chunks: Sequence[ChunkHit], options: RankOptions = DEFAULT_OPTIONS
) -> list[Quote]:
    """The quotes answering ``q.question`` from ``chunks`` (context order), best first."""
    sentences = context_sentences([c.content for c in chunks[:CHUNKS_READ]], SENTENCES_READ)
    if not sentences:
        return []
    texts = [s.text for s in sentences]
    docs = [terms(t) for t in texts]
    eligible = [s.quotable for s in sentences]
    pool = Pool.of(texts, docs, eligible, _context_terms(sentences, docs), options)
    await _fill_dense(pool, sentences, q, options.dense)
    return [
        Quote(joined([sentences[m].text for m in span]), sentences[span[0]].chunk)
        for span in spans(pick(q.question, pool, options), sentences, options.quotes)
    ]


def joined(texts: list[str]) -> str:
    """Consecutive sentences as one quote: a space between them, none after CJK text."""
    out = texts[0] if texts else ""
    for text in texts[1:]:
        out += ("" if _CJK_END.search(out) else " ") + text
    return out
