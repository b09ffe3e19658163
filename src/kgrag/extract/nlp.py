"""LLM-free entity and relation extraction.

:class:`NLPExtractor` produces the same records as the LLM extractor
(:class:`~kgrag.types.ExtractedEntity`, :class:`~kgrag.types.ExtractedRelation`)
from classic NLP, with zero LLM tokens:

* **Entities** - named entities. English text goes through spaCy's
  ``en_core_web_sm`` (PERSON -> Person, ORG -> Organization,
  GPE/LOC/FAC -> Location, EVENT -> Event, WORK_OF_ART/LAW -> Content,
  PRODUCT -> Artifact, NORP/LANGUAGE -> Concept; dates, times, numbers and
  amounts are dropped). Chinese (CJK-dominant) text goes through
  ``jieba.posseg`` (nr -> Person, ns -> Location, nt -> Organization,
  nz -> Concept). Without spaCy or its model, English falls back to a
  regex over capitalised phrases (see :mod:`kgrag.extract.nlp_analyzers`).
  Names are normalised (quotes, possessive 's, a leading article and extra
  whitespace removed); PERSON, ORG and place spans are trimmed to their
  name words and dropped when they read as a clause, a name said twice
  ("Scrooge Scrooge") is said once, and a name holding markup or code is
  dropped (:mod:`kgrag.extract.nlp_names`). An entity's type is its most
  frequent type in the chunk, corrected by its own words (``Zephyr
  Robotics`` is an Organization, ``Faroe Islands`` a Location, ``Mrs.
  Cratchit`` a Person); its description is the sentences mentioning it,
  up to ``max_description_chars``.
* **Whole names and roles** (English, :mod:`kgrag.extract.nlp_whole`) - a
  person's name grows over the proper nouns NER left out ("Oren Valdt",
  not "Valdt"), a form of address before a name is kept as an alias
  (description "Also called Mr. Scrooge."), and copular and appositive
  role statements ("The CEO of X is Y", "Y, CEO of X", "X's CEO, Y")
  become relations Y -> X with the role words as keywords.
* **Relations** - two entities mentioned in the same sentence. Keywords
  are up to three content words (verbs, nouns) between the two mentions
  (else of the sentence); the description is the sentence(s), trimmed;
  the weight counts the sentences in which the pair co-occurs.

Markdown and HTML are read as prose first (:mod:`kgrag.extract.nlp_markup`):
emphasis keeps its text, code and table separators go, a table row is a
sentence of its cells, a ``#`` heading is a section line.

Titles and headings (short lines that do not end like a sentence) become
entities too, paired with the entities of the sentence that follows them
(``headings=False`` turns this off) - when they read as a name, not as a
clause or fragment ("What do you", "In half a minute Mrs. Cratchit"); a
``Label: Value`` metadata line gives its value ("Author: Charles Dickens"
gives "Charles Dickens"). A token window's cut edges (a chunk starting or
stopping mid-line) give no heading, nor a mention touching the cut.

``noun_chunks=True`` also adds noun-chunk heads seen at least twice in a
chunk as ``Concept`` entities. It needs spaCy's parser (slower) and is off
by default: on 50 HotpotQA questions over their 500 passages, retrieving
passages through entity vectors gave recall@5 55.0 with it against 57.0
without, for 11% more entities and 51% more relations to embed.

Speed: about 20-25k characters/s of English on one core (A Christmas
Carol, 190 KB, in about 8 s of CPU); the parser and lemmatizer are not
loaded (sentences come from the cheaper sentence recogniser).
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from kgrag.errors import ExtractionError
from kgrag.extract.nlp_analyzers import (
    Analyzer,
    JiebaAnalyzer,
    english_analyzer,
    is_heading,
    normalise_name,
)
from kgrag.extract.nlp_markup import strip_markup
from kgrag.extract.nlp_names import (
    collapse_repeat,
    corrected_type,
    heading_shape,
    split_label,
    without_qualifier,
)
from kgrag.extract.nlp_records import Mention, Sentence
from kgrag.types import Chunk, ExtractedEntity, ExtractedRelation, Extraction

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
_LETTER = re.compile(r"[^\W\d_]")


def is_cjk(text: str, threshold: float = 0.3) -> bool:
    """True when CJK characters make up at least ``threshold`` of the letters."""
    sample = text[:4000]
    letters = len(_LETTER.findall(sample))
    return letters > 0 and len(_CJK.findall(sample)) / letters >= threshold


def _alias_line(aliases: list[str]) -> list[str]:
    """The names a mention was also written with ("Also called Mr. Scrooge."), as a description line."""
    return [f"Also called {', '.join(aliases)}."] if aliases else []


def _trim(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(slots=True)
class _PairSeen:
    """What the sentences say of one entity pair: how often, with which words, where."""

    n: int = 0
    keywords: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


class NLPExtractor:
    """Entities from NER, relations from sentence co-occurrence.

    ``max_pair_distance`` limits the pairs per sentence: each mention pairs
    with the next few distinct entities only, so a list of twenty names
    does not yield 190 relations.
    """

    def __init__(
        self,
        *,
        noun_chunks: bool = False,
        headings: bool = True,
        max_description_chars: int = 400,
        max_keywords: int = 3,
        max_pair_distance: int = 4,
    ):
        self.noun_chunks = noun_chunks
        self.headings = headings
        self.max_description_chars = max_description_chars
        self.max_keywords = max_keywords
        self.max_pair_distance = max_pair_distance
        self._english: Analyzer | None = None
        self._chinese: Analyzer | None = None

    def analyzer(self, text: str) -> Analyzer:
        """The analyzer for ``text``'s script (loaded on first use)."""
        if is_cjk(text):
            if self._chinese is None:
                self._chinese = JiebaAnalyzer()
            return self._chinese
        if self._english is None:
            self._english = english_analyzer(self.noun_chunks)
        return self._english

    async def extract(self, chunk: Chunk) -> Extraction:
        """Extract from ``chunk`` in a worker thread."""
        return await asyncio.to_thread(self.extract_sync, chunk)

    def extract_sync(self, chunk: Chunk) -> Extraction:
        """Extract entities and relations from one chunk (Markdown and HTML read as prose)."""
        text = strip_markup(chunk.content)
        try:
            sentences = self.analyzer(text).analyze(text)
        except Exception as exc:
            raise ExtractionError(f"{chunk.id}: NLP extraction failed: {exc}") from exc
        _collapse_repeats(sentences)
        cut = _cut_lines(text)
        _drop_cut_words(sentences, cut)
        if self.noun_chunks:
            sentences = _frequent_concepts(sentences)
        if self.headings:
            _heading_entities(sentences, cut=cut)
        sep = "" if is_cjk(text) else " "
        return Extraction(
            entities=self._entities(sentences, chunk, sep),
            relations=self._relations(sentences, chunk, sep),
        )

    def _entities(self, sentences: list[Sentence], chunk: Chunk, sep: str) -> list[ExtractedEntity]:
        types: dict[str, Counter[str]] = defaultdict(Counter)
        seen: dict[str, list[str]] = defaultdict(list)
        aliases: dict[str, list[str]] = defaultdict(list)
        for s in sentences:
            for m in s.mentions:
                types[m.name][m.type] += 1
                if m.alias and m.alias not in aliases[m.name]:
                    aliases[m.name].append(m.alias)
                if not seen[m.name] or seen[m.name][-1] != s.text:
                    seen[m.name].append(s.text)
        return [
            ExtractedEntity(
                name=name,
                type=corrected_type(name, types[name].most_common(1)[0][0]),
                description=_trim(
                    sep.join([*_alias_line(aliases[name]), *texts]), self.max_description_chars
                ),
                chunk_id=chunk.id,
                file_path=chunk.file_path,
            )
            for name, texts in seen.items()
        ]

    def _relations(
        self, sentences: list[Sentence], chunk: Chunk, sep: str
    ) -> list[ExtractedRelation]:
        found: dict[tuple[str, str], _PairSeen] = {}
        for s in sentences:
            for source, target, words in self._statements(s):
                rel = found.setdefault((source, target), _PairSeen())
                rel.n += 1
                for word in words:
                    if word not in rel.keywords:
                        rel.keywords.append(word)
                if s.text not in rel.texts:
                    rel.texts.append(s.text)
        return [
            ExtractedRelation(
                source=a,
                target=b,
                keywords=", ".join(rel.keywords[: self.max_keywords]),
                description=_trim(sep.join(rel.texts), self.max_description_chars),
                weight=float(rel.n),
                chunk_id=chunk.id,
                file_path=chunk.file_path,
            )
            for (a, b), rel in found.items()
        ]

    def _statements(self, s: Sentence) -> list[tuple[str, str, list[str]]]:
        """(source, target, keywords) of one sentence: its role statements, then co-occurring pairs.

        A role statement ("Y is the CEO of X") runs from the holder to the
        other entity, with the role's words as its first keywords; a pair it
        covers is not repeated the other way round.
        """
        out = [(r.holder, r.of, r.role.split(", ")) for r in s.roles]
        stated = {frozenset((r.holder, r.of)) for r in s.roles}
        for a, b in self._pairs(s):
            if frozenset((a.name, b.name)) not in stated:
                out.append((a.name, b.name, self._keywords(s, a, b)))
        return out

    def _pairs(self, s: Sentence) -> list[tuple[Mention, Mention]]:
        """Distinct entity pairs of one sentence, in order of mention."""
        firsts: dict[str, Mention] = {}
        for m in sorted(s.mentions, key=lambda m: m.start):
            firsts.setdefault(m.name, m)
        ordered = list(firsts.values())
        pairs = []
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 : i + 1 + self.max_pair_distance]:
                pairs.append((a, b))
        return pairs

    def _keywords(self, s: Sentence, a: Mention, b: Mention) -> list[str]:
        """Content words between the two mentions, else of the whole sentence."""
        lo, hi = min(a.end, b.end), max(a.start, b.start)
        names = {a.name.lower(), b.name.lower()}
        between = [w for w, pos in s.words if lo <= pos < hi and w.lower() not in names]
        pool = between or [w for w, _ in s.words if w.lower() not in names]
        return list(dict.fromkeys(pool))[: self.max_keywords]


MAX_HEADING_WORDS = 8
_MID_LINE_START = re.compile(r" (?! )")
WRAPPED_LINE_CHARS = 100  # a last line this short may be a hard-wrapped line cut by the window
_ENDS_SENTENCE = tuple(".!?…\"'”’)]。！？」』")
_LEAD_IN = re.compile(r"^[\s\"'“‘]*(?:(?:The|A|An)\s+)?")
_CAPTION = re.compile(r"[\[\]【】]|^[(（]")


def _cut_lines(text: str) -> tuple[bool, bool]:
    """Whether a chunk starts inside its first line and stops inside its last (a token window's edges).

    A token window that starts mid-line opens with a single space (" word");
    a window of hard-wrapped lines whose last (short) line ends without a
    line break or sentence punctuation stops mid-line. A passage ending
    "... World War I." is whole, and so is one whose last line is a long
    unwrapped paragraph ("... the pair of M. Sasikumar").
    """
    starts_cut = bool(_MID_LINE_START.match(text))
    body = text.strip()
    last_line = body.rsplit("\n", 1)[-1]
    ends_cut = (
        "\n" in body
        and not text.endswith(("\n", "\r"))
        and not body.endswith(_ENDS_SENTENCE)
        and len(last_line) <= WRAPPED_LINE_CHARS
    )
    return starts_cut, ends_cut


def _drop_cut_words(sentences: list[Sentence], cut: tuple[bool, bool]) -> None:
    """Drop mentions touching a cut edge of the chunk: their word may be cut ("Scro" of "Scrooge")."""
    if not sentences:
        return
    if cut[0]:
        first = sentences[0]
        lead = len(first.text) - len(first.text.lstrip())
        first.mentions = [m for m in first.mentions if m.start > lead]
    if cut[1]:
        last = sentences[-1]
        end = len(last.text.rstrip())
        last.mentions = [m for m in last.mentions if m.end < end]


def heading_name(text: str, reads_as_name: bool = True, next_text: str = "") -> str:
    """The entity name a heading line gives, or "" when the line is no name.

    A ``Label: Value`` metadata line gives its value. A title the next
    sentence opens with ("Cheer Up! (TV series)" before "Cheer Up! is a
    ...") is a name whatever its words; otherwise the line must read as a name
    (``reads_as_name``, from the analyzer's tags) and open in capitals with
    no ``? ! ;`` (:func:`~kgrag.extract.nlp_names.heading_shape`). Lines
    longer than :data:`MAX_HEADING_WORDS` words and captions ("[Illustration:
    ...]") give nothing.
    """
    text = text.strip()
    if (
        "\n" in text
        or not is_heading(text)
        or len(text.split()) > MAX_HEADING_WORDS
        or _CAPTION.search(text)
    ):
        return ""
    value = split_label(text)
    core = without_qualifier(value)
    echoed = len(core) >= 3 and _LEAD_IN.sub("", next_text).startswith(core)
    if not echoed and not (reads_as_name and heading_shape(core)):
        return ""
    name = normalise_name(value)
    return name if len(name) >= 2 and any(c.isalpha() for c in name) else ""


def _heading_entities(sentences: list[Sentence], cut: tuple[bool, bool] = (False, False)) -> None:
    """Make each title or heading line an entity, mentioned again by the sentence after it.

    A document's title names what it is about ("Pterocarya", "Leland, North
    Carolina") but is often no named entity to NER. The heading keeps the
    type NER gave the whole line, else the type NER gives the same name
    elsewhere in the chunk ("Baz Bamigboye is a British columnist"), else
    ``Concept``; placed at the start of the next sentence, it pairs with
    that sentence's entities, and that lead sentence becomes its
    description. Lines whose tags read as a clause are skipped, and so are
    a chunk's first and last lines when the chunk was cut inside them
    (``cut``: start, end).
    """
    known = {m.name: m.type for s in reversed(sentences) for m in s.mentions}
    edges = {i for i, was_cut in ((0, cut[0]), (len(sentences) - 1, cut[1])) if was_cut}
    for i, s in enumerate(sentences):
        following = sentences[i + 1].text if i + 1 < len(sentences) else ""
        name = heading_name(s.text, s.reads_as_name, following) if i not in edges else ""
        if not name:
            continue
        kind = next((m.type for m in s.mentions if m.name == name), known.get(name, "Concept"))
        s.mentions = [Mention(name, kind, 0, len(s.text))]
        if i + 1 < len(sentences) and name not in {m.name for m in sentences[i + 1].mentions}:
            sentences[i + 1].mentions.insert(0, Mention(name, kind, 0, 0))


def _collapse_repeats(sentences: list[Sentence]) -> None:
    """``Scrooge Scrooge`` -> ``Scrooge`` when ``Scrooge`` is itself a name in the text.

    A real doubled name ("Bora Bora") is kept unless its half occurs alone.
    """
    names = {m.name for s in sentences for m in s.mentions}
    for s in sentences:
        for m in s.mentions:
            half = collapse_repeat(m.name)
            if half != m.name and half in names:
                m.name = half


def _frequent_concepts(sentences: list[Sentence]) -> list[Sentence]:
    """Keep noun-chunk concepts only when they occur twice or more in the chunk."""
    counts = Counter(m.name for s in sentences for m in s.mentions if m.type == "Concept")
    named = {m.name for s in sentences for m in s.mentions if m.name[:1].isupper()}
    for s in sentences:
        s.mentions = [
            m for m in s.mentions if m.type != "Concept" or m.name in named or counts[m.name] >= 2
        ]
    return sentences
