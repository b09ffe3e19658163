"""Deterministic in-process fake chat, embedding and rerank providers.

Selectable by config (provider name ``fake``) for tests, demos and offline
runs; nothing touches the network. The chat answer is chosen by
``request.role``:

- ``extract``: entities (capitalised names) and relations (names sharing a
  sentence) of the input text, as delimited records or JSON;
- ``glean``: nothing new;
- ``summary``: a short merge of the given descriptions;
- ``keywords``: JSON high/low-level keywords of the question;
- ``conditions``: JSON constraints of the question: its capitalised names
  as objects, or as model numbers when they hold a digit or a dash;
  ``v2``-style versions and four-digit years as qualifiers;
- ``judge``: JSON verdicts on the evaluation's prompts
  (:mod:`kgrag.llm._fake_judge`). Words are lower-cased, articles dropped,
  each CJK character one word. A candidate answer is ``correct`` when it
  holds at least half the distinct words of some reference answer. Of two
  answers, ``comprehensiveness`` goes to more words (ties: more distinct
  words), ``diversity`` to more distinct words and ``empowerment`` to more
  distinct words the question does not use (ties: more words), remaining
  ties to answer 1; ``overall`` to the winner of most of those three. A
  prompt of neither kind gets a reply no verdict can be read from;
- ``answer`` (and anything else): an answer quoting the context's first lines;
  when the context numbers its items (``"reference_id"`` on each JSON line),
  each quote cites its item as ``[n]``, the last one also a number no item
  has (one past the highest, as a model inventing a source would), and a
  ``### References`` list closes it, the invented number included, so an
  answer's citation checking always has something to remove.

Token counts are ``len(text) // 4``, like the benchmark referee.
"""

from __future__ import annotations

import itertools
import json
import re
import zlib
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from kgrag.llm import _fake_judge as fj
from kgrag.llm import _fake_text as ft
from kgrag.llm.base import ChatMessage, ChatRequest, ChatResult, approx_tokens

if TYPE_CHECKING:
    from kgrag.config.settings import Settings

MAX_ENTITIES = 40
MAX_RELATIONS = 60
_EMBED_WORD_RE = re.compile(r"[a-z0-9]+")


def _content(message: ChatMessage) -> str:
    return str(message.get("content") or "")


def _last_user(messages: Sequence[ChatMessage]) -> str:
    return next((_content(m) for m in reversed(messages) if m.get("role") == "user"), "")


def extract_records(text: str) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Entities and co-occurrence relations of ``text``, deterministically."""
    entities: dict[str, dict[str, str]] = {}
    relations: dict[frozenset[str], dict[str, str]] = {}
    for sentence in ft.sentences(text):
        names = ft.names_in(sentence)
        for name in names:
            if name not in entities and len(entities) < MAX_ENTITIES:
                entities[name] = {
                    "name": name,
                    "type": ft.type_of(name),
                    "description": f"{name} appears in: {ft.clip_words(sentence, 30)}",
                }
        names = [n for n in names if n in entities]
        keywords = (
            ", ".join(ft.content_words(sentence, set(" ".join(names).split()))[:2]) or "related"
        )
        for i, src in enumerate(names):
            for tgt in names[i + 1 :]:
                pair = frozenset((src, tgt))
                if pair in relations or len(relations) >= MAX_RELATIONS:
                    continue
                relations[pair] = {
                    "source": src,
                    "target": tgt,
                    "keywords": keywords,
                    "description": f"{src} and {tgt}: {ft.clip_words(sentence, 30)}",
                }
    return list(entities.values()), list(relations.values())


def _render(entities: list[dict[str, str]], relations: list[dict[str, str]], as_json: bool) -> str:
    if as_json:
        return json.dumps({"entities": entities, "relationships": relations}, ensure_ascii=False)
    lines = [
        "<|#|>".join(["entity", ft.clean(e["name"]), e["type"], ft.clean(e["description"])])
        for e in entities
    ]
    lines += [
        "<|#|>".join(
            [
                "relation",
                ft.clean(r["source"]),
                ft.clean(r["target"]),
                ft.clean(r["keywords"]),
                ft.clean(r["description"]),
            ]
        )
        for r in relations
    ]
    return "\n".join([*lines, "<|COMPLETE|>"])


def _extract(request: ChatRequest) -> str:
    user = _last_user(request.messages)
    text = ft.last_fenced(user) or user
    return _render(*extract_records(text), request.json_mode)


def _glean(request: ChatRequest) -> str:
    return _render([], [], request.json_mode)


def _summary(request: ChatRequest) -> str:
    user = _last_user(request.messages)
    text = ft.last_fenced(user) or user
    pieces: dict[str, None] = {}
    for line in re.split(r"\n|<SEP>", text):
        line = line.strip().lstrip("-*• ").strip()
        if line:
            pieces[line] = None
    return ft.clip_words(" ".join(pieces), 80)


def _keywords(request: ChatRequest) -> str:
    question = ft.question_of(_last_user(request.messages))
    low = ft.names_in(question)
    name_words = set(" ".join(low).split())
    high = ft.content_words(question, name_words)
    return json.dumps(
        {"high_level_keywords": high[:5], "low_level_keywords": low[:5]}, ensure_ascii=False
    )


# Items an answer quotes, and the fake's invented citation: one past the highest number.
_QUOTED = 3
_REFERENCE_LINE = re.compile(r"^\[(\d+)\] (.+)$")


def _numbered_items(
    messages: Sequence[ChatMessage],
) -> tuple[list[tuple[int, str]], dict[int, str]]:
    """``(number, text)`` of the context's numbered JSON lines (chunks first), and the
    Reference Document List (number -> file and location)."""
    chunks, graph, listed = [], [], {}
    for line in (ln.strip() for msg in messages for ln in _content(msg).splitlines()):
        if hit := _REFERENCE_LINE.match(line):
            listed[int(hit.group(1))] = hit.group(2)
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict) or not str(row.get("reference_id", "")).isdigit():
            continue
        number = int(row["reference_id"])
        if "content" in row:
            chunks.append((number, str(row["content"])))
        else:
            head = row.get("entity") or f"{row.get('entity1', '')} / {row.get('entity2', '')}"
            graph.append((number, f"{head}: {row.get('description', '')}"))
    return chunks + graph, listed


def _cited_answer(items: list[tuple[int, str]], listed: dict[int, str]) -> str:
    quoted = items[:_QUOTED]
    invented = max(n for n, _ in items) + 1
    lines = [f"> {ft.clip_words(' '.join(text.split()), 40)} [{n}]" for n, text in quoted]
    lines[-1] += f"[{invented}]"
    refs = [f"- [{n}] {listed.get(n, text.split(':', 1)[0])}" for n, text in quoted]
    refs.append(f"- [{invented}] a source the context does not have")
    return "Based on the context:\n" + "\n".join(lines) + "\n\n### References\n" + "\n".join(refs)


def _answer(request: ChatRequest) -> str:
    items, listed = _numbered_items(request.messages)
    if items:
        return _cited_answer(items, listed)
    context = None
    for message in reversed(request.messages):
        context = ft.last_fenced(_content(message))
        if context:
            break
    if not context:
        context = next((_content(m) for m in request.messages if m.get("role") == "system"), "")
    lines = [ln.strip() for ln in context.splitlines() if ln.strip()][:3]
    if not lines:
        return "I do not have enough information to answer that."
    return "Based on the context:\n" + "\n".join(f"> {ft.clip_words(ln, 40)}" for ln in lines)


_VERSION_RE = re.compile(r"(?<![A-Za-z0-9])[vV]\d+(?:\.\d+)*(?![A-Za-z0-9])")
_YEAR_RE = re.compile(r"(?<![\d.-])(?:1[6-9]|20)\d\d(?![\d.-])")


def _conditions(request: ChatRequest) -> str:
    question = ft.question_of(_last_user(request.messages))
    versions = _VERSION_RE.findall(question)
    names = [n for n in ft.names_in(question) if n not in versions]
    models = [n for n in names if re.search(r"[\d-]", n)]
    qualifiers = [{"kind": "model", "value": m} for m in models]
    qualifiers += [{"kind": "version", "value": v} for v in versions]
    qualifiers += [{"kind": "year", "value": y} for y in _YEAR_RE.findall(question)]
    objects = [n for n in names if n not in models]
    return json.dumps({"objects": objects, "qualifiers": qualifiers}, ensure_ascii=False)


def _resolve(request: ChatRequest) -> str:
    """Same thing when the two descriptions (lines ``A:`` and ``B:``) share a fifth of their words."""
    lines = dict(ln.split(":", 1) for ln in _last_user(request.messages).splitlines() if ":" in ln)
    a, b = (set(re.findall(r"\w{4,}", lines.get(k, "").lower())) for k in ("A", "B"))
    same = bool(a and b and len(a & b) / len(a | b) >= 0.2)
    return json.dumps({"same": same, "reason": "shared description words" if same else "few"})


def _judge(request: ChatRequest) -> str:
    """A verdict on an evaluation prompt: an answer graded, or two compared."""
    return fj.verdict(request.messages)


_ANSWERS = {
    "extract": _extract,
    "glean": _glean,
    "summary": _summary,
    "keywords": _keywords,
    "conditions": _conditions,
    "resolve": _resolve,
    "judge": _judge,
}


class FakeChatProvider:
    """A chat model whose answers are pure functions of the request."""

    def __init__(self, model: str = "fake"):
        self.model = model
        self.identity = f"fake:{model}"

    @classmethod
    def from_settings(cls, settings: Settings) -> FakeChatProvider:
        return cls()

    async def chat(self, request: ChatRequest) -> ChatResult:
        text = _ANSWERS.get(request.role, _answer)(request)
        finish = "stop"
        if request.max_tokens and approx_tokens(text) > request.max_tokens:
            text, finish = text[: request.max_tokens * 4], "length"
        prompt = sum(approx_tokens(_content(m)) for m in request.messages)
        return ChatResult(
            text=text,
            prompt_tokens=prompt,
            completion_tokens=approx_tokens(text),
            finish_reason=finish,
        )

    async def stream(
        self, request: ChatRequest, usage: ChatResult | None = None
    ) -> AsyncIterator[str]:
        """The same answer as :meth:`chat`, eight words a piece."""
        result = await self.chat(request)
        pieces = re.findall(r"\S+\s*|\s+", result.text)
        for i in range(0, len(pieces), 8):
            yield "".join(pieces[i : i + 8])
        if usage is not None:
            usage.text, usage.finish_reason = result.text, result.finish_reason
            usage.prompt_tokens, usage.completion_tokens = (
                result.prompt_tokens,
                result.completion_tokens,
            )

    async def aclose(self) -> None:
        return None


def fake_vector(text: str, dim: int = 384, seed: int = 0) -> np.ndarray:
    """Signed feature hashing of word unigrams (1.0) and bigrams (0.5), L2-normalised."""
    vec = np.zeros(dim, dtype=np.float64)
    words = _EMBED_WORD_RE.findall(text.lower())
    grams = [(w, 1.0) for w in words] + [(f"{a} {b}", 0.5) for a, b in itertools.pairwise(words)]
    for gram, weight in grams:
        h = zlib.crc32(gram.encode("utf-8"), seed)
        vec[h % dim] += weight if (h >> 31) & 1 else -weight
    norm = float(np.linalg.norm(vec))
    if norm == 0.0:
        vec[seed % dim] = 1.0  # a fixed unit vector, never zeros
        return vec.astype(np.float32)
    return (vec / norm).astype(np.float32)


class FakeEmbeddingProvider:
    """Lexical hashing embeddings: similar wording, similar vectors."""

    def __init__(self, dim: int = 384, max_tokens: int = 8192, seed: int = 0):
        self.dim, self.max_tokens, self.seed = dim, max_tokens, seed
        self.identity = f"fake-embed:{dim}"

    @classmethod
    def from_settings(cls, settings: Settings) -> FakeEmbeddingProvider:
        return cls(dim=settings.embedding.dim or 384, max_tokens=settings.embedding.max_tokens)

    async def embed(
        self, texts: list[str], kind: Literal["document", "query"] = "document"
    ) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([fake_vector(t, self.dim, self.seed) for t in texts])

    async def aclose(self) -> None:
        return None


class FakeRerankProvider:
    """Ranks documents by the cosine of their fake embeddings with the query."""

    identity = "fake-rerank"

    @classmethod
    def from_settings(cls, settings: Settings) -> FakeRerankProvider:
        return cls()

    async def rerank(
        self, query: str, documents: list[str], top_n: int | None = None
    ) -> list[tuple[int, float]]:
        q = fake_vector(query)
        scores = [(i, float(fake_vector(d) @ q)) for i, d in enumerate(documents)]
        scores.sort(key=lambda s: (-s[1], s[0]))
        return scores[:top_n] if top_n is not None else scores

    async def aclose(self) -> None:
        return None
