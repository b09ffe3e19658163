"""What the fake OpenAI-compatible server answers, as pure functions of the request.

A chat request is sorted into one *kind* by its instructions (every
message with its fenced data blocks removed, so quoted documents do not
change the kind):

* ``keywords``: asks for ``high_level_keywords`` / ``low_level_keywords``;
  answered with that JSON object, built from the question's words.
* ``extraction``: asks for entity and relation records (a ``<|#|>`` record
  format, a ``"relationships"`` JSON format, or "extract ... entities");
  ``gleaning`` when the conversation already holds an assistant turn.
  Answered in the delimited record format (or JSON when the request or its
  format asks for JSON) with the capitalised names that really occur in
  the chunk: descriptions quote the chunk's sentences and relations join
  names that share a sentence, so the graph is that of the text.
* ``summary``: merges a list of descriptions; answered with their
  sentences, opening with the subject's name.
* ``answer``: anything else; a short answer quoting the context sentence
  that best matches the question, citing its reference number.

Replies depend only on the messages, the JSON flag and the seed, never on
arrival order. Embeddings are feature hashes of word (and CJK character)
unigrams and bigrams, L2-normalised, so lexically close texts are close.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

Messages = Sequence[dict[str, Any]]
DELIM, COMPLETE = "<|#|>", "<|COMPLETE|>"
NAMES_PER_CHUNK = 8
GLEANED_NAMES = 3
MAX_RELATIONS = 10
FALLBACK_TYPES = ("Person", "Organization", "Location", "Event", "Concept")
FUNCTION_WORDS = frozenset(
    """a an and as at but by for from he her here his i if in into is it its my no nor not of
    oh on or our she so that the their then there these they this those to we what when where
    which who why with yes you your all any each every some such how mr mrs ms dr sir st
    were have been said would could should very upon than them only also over once""".split()
)
_FENCED = re.compile(r"^(`{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)
_NAME_RUN = re.compile(r"[A-Z][a-z]+(?:['’]s)?(?:[ \t]+[A-Z][a-z]+(?:['’]s)?){0,2}")
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]")
_CONTENT_WORD = re.compile(r"[A-Za-z]{4,}")


def text_of(content: Any) -> str:
    """The text of a message ``content``: a string or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def approx_tokens(text: str) -> int:
    """The token estimate of every counter: one token per 4 characters."""
    return len(text) // 4


def stable_hash(*parts: object) -> int:
    """A 32-bit hash of ``parts`` that is the same in every process."""
    return zlib.crc32("\x1f".join(map(str, parts)).encode("utf-8", "surrogatepass"))


def _unfenced(messages: Messages) -> str:
    return _FENCED.sub(" ", "\n".join(text_of(m.get("content")) for m in messages))


def classify(messages: Messages) -> str:
    """The kind of a chat request (module docstring)."""
    instructions = _unfenced(messages)
    if re.search(r"high_level_keywords|low_level_keywords", instructions):
        return "keywords"
    if _asks_for_records(instructions):
        has_reply = any(m.get("role") == "assistant" for m in messages)
        return "gleaning" if has_reply else "extraction"
    if re.search(r"\b(?:merge|summari[sz]e|consolidate)\b[^\n]{0,80}\bdescriptions?", instructions):
        return "summary"
    return "answer"


def _asks_for_records(instructions: str) -> bool:
    if DELIM in instructions or COMPLETE in instructions:
        return True
    if '"relationships"' in instructions and '"entities"' in instructions:
        return True
    return bool(re.search(r"\bextract\w*\b[^.\n]{0,60}\bentit", instructions, re.I))


def wants_json(messages: Messages, response_format: Any) -> bool:
    """JSON asked by ``response_format``, or an extraction prompt with a JSON format only."""
    if isinstance(response_format, dict) and response_format.get("type") in (
        "json_object",
        "json_schema",
    ):
        return True
    instructions = _unfenced(messages)
    return '"relationships"' in instructions and DELIM not in instructions


def fenced_after(messages: Messages, heading: str) -> str | None:
    """The fenced block after the last ``heading`` line, newest message first."""
    for message in reversed(messages):
        text = text_of(message.get("content"))
        at = text.rfind(heading)
        if at < 0:
            continue
        found = _FENCED.search(text, at)
        if found is not None:
            return found.group(2)
    return None


def _last_user(messages: Messages) -> str:
    users = [text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    return users[-1] if users else ""


def input_text(messages: Messages) -> str:
    """The document text of an extraction request."""
    found = fenced_after(messages, "---Input Text---")
    if found is not None:
        return found
    fenced = _FENCED.search(_last_user(messages))
    return fenced.group(2) if fenced else _last_user(messages)


def sentences(text: str) -> list[str]:
    """Whitespace-collapsed sentences (or lines) of ``text``."""
    return [" ".join(s.split()) for s in _SENTENCE.findall(text) if s.strip()]


def _clean(name: str) -> str:
    return re.sub(r"['’]s\b", "", name)


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip(" \t")
    return not before or before[-1] in ".!?\n\"'“‘:;([-*#>"


def names_in(text: str) -> list[str]:
    """Capitalised names of ``text``, most frequent first (ties: first seen).

    Leading function words are dropped ("The Ghost" -> "Ghost"); a single
    capitalised word opening a sentence is no name, as is a function word.
    """
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for match in _NAME_RUN.finditer(text):
        words = _clean(match.group(0)).split()
        opens = _sentence_start(text, match.start())
        while words and words[0].lower() in FUNCTION_WORDS:
            words, opens = words[1:], False
        if not words or (opens and len(words) == 1):
            continue
        name = " ".join(words)
        counts[name] += 1
        first.setdefault(name, match.start())
    return sorted(counts, key=lambda n: (-counts[n], first[n]))


def _fallback_names(text: str) -> list[str]:
    """Frequent content words as names, for text with no capitalised names."""
    words = Counter(w.lower() for w in _CONTENT_WORD.findall(text))
    common = [w for w, n in words.most_common() if n > 1 and w not in FUNCTION_WORDS]
    return [w.capitalize() for w in common[:3]]


def entity_types(messages: Messages) -> list[str]:
    """The types an extraction prompt offers (after its ``---Entity types---`` line)."""
    found = re.search(r"---Entity types---\s*\n([^\n]+)", _unfenced(messages))
    types = [t.strip() for t in found.group(1).split(",")] if found else []
    return [t for t in types if t] or list(FALLBACK_TYPES)


def _mentions(name: str, text: str) -> list[str]:
    return [s for s in sentences(text) if name in _clean(s)]


def _field(text: str, limit: int = 240) -> str:
    text = " ".join(text.replace(DELIM, " ").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _keywords(sentence: str) -> str:
    words = [w for w in _CONTENT_WORD.findall(sentence) if w[0].islower()]
    plain = [w for w in dict.fromkeys(words) if w not in FUNCTION_WORDS]
    return ", ".join(plain[:2]) or "co-occurrence"


def entity_records(
    names: Sequence[str], text: str, types: Sequence[str], rng: random.Random
) -> list[tuple[str, str, str]]:
    """``(name, type, description)``: the type by the name's hash, a sentence quoted."""
    out = []
    for name in names:
        said = _mentions(name, text) or [f"{name} is mentioned in the text."]
        kind = types[stable_hash("type", name) % len(types)]
        out.append((name, kind, _field(f"{name}: {rng.choice(said)}")))
    return out


def relation_records(names: Sequence[str], text: str) -> list[tuple[str, str, str, str]]:
    """Pairs of ``names`` sharing a sentence, in sentence order; a chain if none do."""
    pairs: dict[frozenset[str], tuple[str, str, str, str]] = {}
    for sentence in sentences(text):
        present = [n for n in names if n in _clean(sentence)]
        for a, b in itertools.pairwise(present):
            pairs.setdefault(frozenset((a, b)), (a, b, _keywords(sentence), _field(sentence)))
    if not pairs:
        for a, b in itertools.pairwise(names):
            pairs[frozenset((a, b))] = (a, b, "co-occurrence", f"{a} and {b} appear together.")
    return list(pairs.values())[:MAX_RELATIONS]


def render_records(
    entities: Sequence[tuple[str, str, str]],
    relations: Sequence[tuple[str, str, str, str]],
    as_json: bool,
) -> str:
    """The records in kgrag's delimited format (with its completion marker) or as JSON."""
    if as_json:
        data = {
            "entities": [{"name": n, "type": t, "description": d} for n, t, d in entities],
            "relationships": [
                {"source": s, "target": t, "keywords": k, "description": d}
                for s, t, k, d in relations
            ],
        }
        return json.dumps(data, ensure_ascii=False, indent=2)
    lines = [DELIM.join(("entity", *row)) for row in entities]
    lines += [DELIM.join(("relation", *row)) for row in relations]
    return "\n".join([*lines, COMPLETE])


def _earlier_names(messages: Messages) -> set[str]:
    """Entity names written in the conversation's assistant turns (either format)."""
    names: set[str] = set()
    for message in messages:
        if message.get("role") == "assistant":
            text = text_of(message.get("content"))
            names.update(re.findall(r"^entity<\|#\|>([^<\n]+)<\|#\|>", text, re.M))
            names.update(re.findall(r'"name":\s*"([^"]+)"', text))
    return names


def extraction_reply(messages: Messages, as_json: bool, rng: random.Random) -> str:
    """Records of the chunk's most frequent names (a glean: the next few not yet given)."""
    text = input_text(messages)
    ranked = names_in(text) or _fallback_names(text)
    if any(m.get("role") == "assistant" for m in messages):
        given = _earlier_names(messages)
        names = [n for n in ranked if n not in given][:GLEANED_NAMES]
        context = [n for n in ranked if n in given][:NAMES_PER_CHUNK]
        relations = [r for r in relation_records(context + names, text) if {r[0], r[1]} & {*names}]
    else:
        names = ranked[:NAMES_PER_CHUNK]
        relations = relation_records(names, text)
    entities = entity_records(names, text, entity_types(messages), rng)
    return render_records(entities, relations, as_json)


def garble(reply: str, rng: random.Random) -> str:
    """A malformed version of an extraction reply, of one of four kinds."""
    variant = rng.randrange(4)
    if variant == 0:  # cut off: no completion marker, JSON does not close
        return reply[: max(10, len(reply) // 2)]
    if variant == 1:  # the wrong field delimiter
        return reply.replace(DELIM, " | ").replace('": "', "': '")
    if variant == 2:  # every record a field short
        return "\n".join(line.rsplit(DELIM, 1)[0] for line in reply.splitlines())
    return "Here are the entities and relationships I found in the text."


def question_of(messages: Messages) -> str:
    """The question: the fenced block after ``Question:``, else the last user turn."""
    found = fenced_after(messages, "Question:")
    return (found if found is not None else _last_user(messages)).strip()


def keywords_reply(messages: Messages) -> str:
    """``{"high_level_keywords": [...], "low_level_keywords": [...]}`` from the question."""
    question = question_of(messages)
    names = [n for n in names_in(question) if len(n) > 2]
    named = {w.lower() for n in names for w in n.split()}
    words = [w.lower() for w in _CONTENT_WORD.findall(question)]
    plain = [w for w in dict.fromkeys(words) if w not in named and w not in FUNCTION_WORDS]
    high = [f"{a} {b}" for a, b in itertools.pairwise(plain)][:2] + plain[:2]
    low = list(dict.fromkeys(names + plain[2:]))[:5]
    return json.dumps({"high_level_keywords": high, "low_level_keywords": low})


def summary_reply(messages: Messages) -> str:
    """The subject's name, then the distinct sentences of its descriptions."""
    found = re.search(
        r"^Name:\s*(.+)$", "\n".join(text_of(m.get("content")) for m in messages), re.M
    )
    subject = found.group(1).strip() if found else "The subject"
    data = fenced_after(messages, "---Descriptions---") or _last_user(messages)
    parts = []
    for line in data.splitlines():
        try:
            parts.append(str(json.loads(line)["description"]))
        except (ValueError, TypeError, KeyError):
            parts.append(line)
    said = list(dict.fromkeys(s for p in parts for s in sentences(p)))
    return _field(" ".join([f"{subject}:", *said]), 1200)


def _context_chunks(context: str) -> list[tuple[str, str]]:
    """``(reference id, content)`` of the context's chunk lines (JSON or plain)."""
    out = []
    for line in context.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if isinstance(row, dict) and "content" in row:
            out.append((str(row.get("reference_id", "1")), str(row["content"])))
        elif line.strip():
            out.append(("1", line))
    return out


def _overlap(sentence: str, question: str) -> int:
    asked = set(_WORD.findall(question.lower())) - FUNCTION_WORDS
    return len(asked & set(_WORD.findall(sentence.lower())))


def answer_reply(messages: Messages) -> str:
    """The context sentence closest to the question, cited; a fixed reply without context."""
    question = question_of(messages)
    context = fenced_after(messages, "---Context---") or ""
    ranked = [
        (_overlap(s, question), -i, ref, s)
        for i, (ref, content) in enumerate(_context_chunks(context))
        for s in sentences(content)
    ]
    if not ranked:
        return f"Based on the provided context, there is no information about: {question[:200]}"
    _, _, ref, best = max(ranked)
    return (
        f"Based on the provided context, the answer to the question is this: {best} [{ref}]\n\n"
        f"### References\n- [{ref}] source"
    )


def chat_reply(kind: str, messages: Messages, as_json: bool, rng: random.Random) -> str:
    """The reply text for a request of ``kind``."""
    if kind in ("extraction", "gleaning"):
        return extraction_reply(messages, as_json, rng)
    if kind == "keywords":
        return keywords_reply(messages)
    if kind == "summary":
        return summary_reply(messages)
    return answer_reply(messages)


def embed(text: str, dim: int, seed: int = 0) -> list[float]:
    """Feature hash of unigrams (weight 1) and bigrams (0.5), L2-normalised; never zero."""
    vector = [0.0] * dim
    tokens = _WORD.findall(text.lower())
    grams = [(t, 1.0) for t in tokens] + [(f"{a} {b}", 0.5) for a, b in itertools.pairwise(tokens)]
    for gram, weight in grams:
        h = stable_hash(seed, gram)
        vector[h % dim] += weight if h >> 31 else -weight
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        vector[seed % dim] = 1.0
        return vector
    return [x / norm for x in vector]
