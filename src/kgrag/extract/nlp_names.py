"""Name shapes for the LLM-free extractor: span trimming, headings and type corrections.

spaCy's small English model often takes a word too many or too few into
an entity ("Scrooge muttered", "for Scrooge quite", "In half a minute
Mrs. Cratchit"), and types by context, so a company founded by people is
a Person. The functions here are small, pure and rule-based:

* :func:`trim_span` keeps the part of a PERSON/ORG/place span that reads
  as a name: its first and last tokens carry a capital (or a digit) and
  are no function words; particles ("of", "de", "van") stay inside.
* :func:`is_clause` rejects a span that holds ``? ! ;`` (and for people
  and organisations a comma or a lower-case verb): a clause, not a name.
* :func:`split_label` turns a metadata line ``Author: Charles Dickens``
  into its value.
* :func:`reads_as_title` tells, from part-of-speech tags, whether a short
  heading line is a name or title rather than a fragment of a sentence.
* :func:`corrected_type` fixes a type from the name's own words: corporate
  suffixes make an Organization, geographic heads a Location, honorifics
  a Person.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# spaCy coarse tags of capitalised words that still do not open or close a name ("The", "He",
# "And", "Oh"). Capitalised adverbs and prepositions stay: they open titles NER calls ORG or
# PERSON ("Almost Naked Animals", "Behind Crimson Eyes"); lower-case words never do.
EDGE_POS = frozenset({"SCONJ", "CCONJ", "DET", "PRON", "INTJ", "PUNCT", "SYM", "SPACE"})
_NOMINAL_POS = frozenset({"NOUN", "PROPN", "ADJ", "X", "NUM"})
_SOFT_EDGE_POS = frozenset({"ADP", "ADV", "PART"})
TRIMMED_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP"})
_CLAUSE_MARKS = frozenset({"?", "!", ";", "--", "—", "…"})
_VERBS = frozenset({"VERB", "AUX"})
NAME_SUFFIXES = frozenset(
    {"Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV", "Inc", "Inc.", "Ltd", "Ltd.", "LLC", "Co."}
)
# Lower-case words that may open a name ("von Cramm", "de Gaulle") or close one ("Future plc").
LEADING_PARTICLES = frozenset(
    {
        "von",
        "van",
        "de",
        "da",
        "di",
        "du",
        "del",
        "della",
        "der",
        "le",
        "la",
        "al",
        "el",
        "bin",
        "ibn",
        "ap",
    }
)
TRAILING_SUFFIXES = frozenset({"plc", "inc", "inc.", "ltd", "ltd.", "gmbh"})
_GLUED_OPEN = re.compile(r"\w\([^()\s]*$")
_GLUED_WORD = re.compile(r"^\w+\(\w+\)$")  # a coined name such as the band f(x)
_OPENERS = "([{\"'“‘"

Token = tuple[str, str, bool]  # (text, coarse part of speech, whitespace after it)


def words_of(tokens: Sequence[Token], lo: int, hi: int) -> list[tuple[int, int]]:
    """Token ranges of the whitespace-delimited words in ``tokens[lo:hi]`` (``Wen-ting`` is one word)."""
    words, start = [], lo
    for i in range(lo, hi):
        if tokens[i][2] or i == hi - 1:
            words.append((start, i + 1))
            start = i + 1
    return words


def _name_edge(tokens: Sequence[Token], leading: bool) -> bool:
    """Whether a word (its tokens) may open (``leading``) or close a name.

    It must carry a capital and be no capitalised function word ("The",
    "He"), or start with a digit, or be of a script without case (चोरी); a
    particle may open a name ("von Cramm"), and a lower-case noun or
    adjective ("Cotula mexicana") or corporate suffix ("Future plc") close
    one, but no verb or adverb ("Scrooge muttered", "Scrooge quite"); a
    word with a glued bracket is a coined name ("f(x)"). Opening quotes and
    brackets are not looked at.
    """
    head = next((t for t in tokens if t[0] not in _OPENERS), None)
    if head is None:
        return False
    text = "".join(t[0] for t in tokens).lstrip(_OPENERS)
    if _GLUED_WORD.match(text):
        return True
    if any(c.isupper() for c in text):
        return head[1] not in EDGE_POS
    if text.lower() in (LEADING_PARTICLES if leading else TRAILING_SUFFIXES):
        return True
    if not leading and head[1] in _NOMINAL_POS:
        return True  # "Cotula mexicana", "Jiangsu province": a lower-case noun may close a name
    return text[:1].isdigit() or not any(c.islower() for c in text)


def _closes_glued(tokens: Sequence[Token], lo: int, hi: int) -> bool:
    """The last token is the ``)`` of a bracket glued to a word in the span ("f(x" + ")")."""
    text = "".join(t[0] + (" " if t[2] else "") for t in tokens[lo : hi - 1])
    return tokens[hi - 1][0] == ")" and bool(_GLUED_OPEN.search(text))


def _opens_a_phrase(tokens: Sequence[Token], words: list[tuple[int, int]]) -> bool:
    """A capitalised adverb or preposition followed by a lower-case word: a sentence opening
    ("In half a minute Mrs. Cratchit"), not a title ("Behind Crimson Eyes")."""
    if len(words) < 2 or tokens[words[0][0]][1] not in _SOFT_EDGE_POS:
        return False
    second = "".join(t[0] for t in tokens[slice(*words[1])])
    return not any(c.isupper() or c.isdigit() for c in second)


def _unpaired_bracket(tokens: Sequence[Token], lo: int, hi: int) -> int | None:
    """Index of the first ``(`` in ``tokens[lo:hi]`` that is not closed before ``hi``."""
    depth_at: list[int] = []
    for i in range(lo, hi):
        if tokens[i][0] == "(":
            depth_at.append(i)
        elif tokens[i][0] == ")" and depth_at:
            depth_at.pop()
    return depth_at[0] if depth_at else None


def _trim_once(tokens: Sequence[Token], lo: int, hi: int) -> tuple[int, int]:
    """One trimming step: edge punctuation, an unclosed ``(`` and what follows, a non-name edge word."""
    if tokens[lo][1] == "PUNCT":
        return lo + 1, hi
    if tokens[hi - 1][1] == "PUNCT" and not _closes_glued(tokens, lo, hi):
        return lo, hi - 1
    bracket = _unpaired_bracket(tokens, lo, hi)
    if bracket is not None:
        return lo, bracket  # "American Football League (AFL" -> "American Football League"
    words = words_of(tokens, lo, hi)
    if not _name_edge(tokens[slice(*words[0])], leading=True) or _opens_a_phrase(tokens, words):
        return words[0][1], hi
    if not _name_edge(tokens[slice(*words[-1])], leading=False):
        return lo, words[-1][0]
    return lo, hi


def trim_span(tokens: Sequence[Token]) -> tuple[int, int]:
    """The ``(start, end)`` token range of ``tokens`` that reads as a name (empty: none).

    Whole words are trimmed: leading prepositions, time phrases, pronouns
    and lower-case words ("In half a minute Mrs. Cratchit" -> "Mrs.
    Cratchit"), and trailing verbs, adverbs, prepositions and particles
    ("Scrooge muttered" -> "Scrooge", "University of North Carolina at"); a hyphenated name keeps its lower-case part
    ("Chan Wen-ting"). Edge punctuation and an unclosed bracket go too.
    """
    lo, hi = 0, len(tokens)
    while lo < hi:
        step = _trim_once(tokens, lo, hi)
        if step == (lo, hi):
            return lo, hi
        lo, hi = step
    return 0, 0


def is_clause(tokens: Sequence[Token], label: str) -> bool:
    """True when a span reads as a clause: sentence punctuation before its end, or for PERSON
    and ORG a comma (but ", Jr." or ", Inc.") or a lower-case verb inside ("Sabyasachi played
    Feluda")."""
    named = label in ("PERSON", "ORG")
    marks = _CLAUSE_MARKS | ({","} if named else set())
    if any(
        t[0] in marks and not (t[0] == "," and tokens[i + 1][0] in NAME_SUFFIXES)
        for i, t in enumerate(tokens[:-1])
    ):
        return True
    return named and any(
        t[1] in _VERBS and t[0].islower() and t[0] not in LEADING_PARTICLES for t in tokens[1:-1]
    )  # "Cynfyn ap Gwerystan": ap/VERB is a particle


def collapse_repeat(name: str) -> str:
    """``Scrooge Scrooge`` -> ``Scrooge``: a name said twice in a row."""
    words = name.split()
    half = len(words) // 2
    if half and len(words) % 2 == 0 and words[:half] == words[half:]:
        return " ".join(words[:half])
    return name


# One-word labels of metadata lines; "Star Wars: A New Hope" is a title, not a label.
METADATA_LABELS = frozenset(
    {
        "title",
        "author",
        "authors",
        "by",
        "illustrator",
        "editor",
        "translator",
        "language",
        "credits",
        "date",
        "released",
        "publisher",
        "source",
        "subject",
        "genre",
        "series",
        "category",
        "tags",
        "keywords",
        "contact",
        "email",
        "website",
        "isbn",
        "note",
        "notes",
        "summary",
        "abstract",
        "status",
        "version",
        "updated",
        "created",
        "posted",
        "produced",
    }
)
_LABELLED = re.compile(r"^\s*([A-Za-z][\w'-]*(?:[ \t]+[a-z][\w'-]*){0,2})[ \t]*:[ \t]+(\S.*?)\s*$")


def split_label(line: str) -> str:
    """The value of a ``Label: Value`` metadata line, else the line itself.

    A label is one known metadata word (Title, Author, Language, ...) or
    two or three words of which only the first is capitalised ("Release
    date", "Original publication").
    """
    found = _LABELLED.match(line)
    if not found:
        return line
    label = found.group(1).split()
    known = len(label) == 1 and label[0].lower() in METADATA_LABELS
    return found.group(2) if known or len(label) > 1 else line


# Closed-class tags of a clause (spaCy tags them reliably even out of context): pronouns,
# wh-words, modals; the AUX part of speech is checked too. Lexical verb tags are not used:
# on a bare noun phrase they are often wrong ("head coaches" -> head/VBP).
CLAUSE_TAGS = frozenset({"PRP", "WP", "WRB", "MD"})
_NOT_FIRST = frozenset(
    {"ADP", "SCONJ", "CCONJ", "ADV", "DET", "INTJ", "PRON", "AUX", "PART", "PUNCT"}
)
_NOT_ALONE = _NOT_FIRST - {"ADV"}  # "Always (2011 film)" is a title
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_TITLE_LOWER = frozenset(
    {"from", "with", "into", "onto", "over", "upon", "than", "that", "unto", "till"}
)
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")

Tagged = tuple[str, str, str]  # (text, coarse part of speech, fine tag)


def without_qualifier(text: str) -> str:
    """``text`` without a trailing bracketed qualifier ("Terror (album)" -> "Terror")."""
    return _QUALIFIER.sub("", text) or text


def is_title_case(text: str) -> bool:
    """Two or more capitalised words, every word of four or more letters capitalised, not all capitals.

    "eBook" counts as capitalised; prepositions such as "from" and "with" may
    stay lower case ("Build Me Up from Bones"); "What do you" (one capital)
    does not qualify.
    """
    words = _WORD.findall(text)
    capitalised = [w for w in words if w[0].isupper() or not w.islower()]
    long_ok = all(w in capitalised for w in words if len(w) >= 4 and w not in _TITLE_LOWER)
    return len(capitalised) >= 2 and long_ok and not text.isupper()


# An ALL-CAPS line is no title when it opens with one of these or holds a pronoun (tags fail on capitals).
_CAPS_OPENERS = frozenset(
    {
        "in",
        "by",
        "of",
        "on",
        "at",
        "for",
        "with",
        "from",
        "to",
        "and",
        "or",
        "but",
        "if",
        "when",
        "what",
        "how",
        "who",
        "where",
        "why",
        "no",
        "yes",
        "not",
        "so",
        "then",
        "there",
        "this",
        "that",
    }
)
_PRONOUNS = frozenset(
    {"i", "you", "he", "she", "we", "they", "it", "me", "him", "her", "us", "them"}
)


def caps_title(text: str) -> bool:
    """Whether an ALL-CAPS heading reads as a title ("STAVE ONE", not "IN COLOUR" or "BY")."""
    words = [w.strip(".,:'\"()").lower() for w in text.split()]
    return bool(words) and words[0] not in _CAPS_OPENERS and not _PRONOUNS.intersection(words)


_ARTICLE = re.compile(r"^\s*(?:the|a|an)\s+")


def _opens_in_capitals(part: str) -> bool:
    """The first letter or digit of ``part``, after an article, is no lower-case letter (True when none)."""
    part = _ARTICLE.sub("", part)
    first = next((c for c in part if c.isalnum()), "")
    return not first.islower()


def heading_shape(text: str) -> bool:
    """A heading that may be a name: opens with a capital or digit and holds no ``? ! ;``.

    A comma is allowed between capitalised parts ("Leland, North Carolina",
    "Tarzan, the Ape Man").
    """
    if not any(c.isalnum() for c in text) or any(c in text for c in "?!;？！；"):
        return False
    return all(_opens_in_capitals(part) for part in text.split(","))


def _before_last_bracket(tokens: Sequence[Tagged]) -> Sequence[Tagged]:
    """The tokens before the last ``(`` (all of them when there is none)."""
    opens = [i for i, t in enumerate(tokens) if t[0] == "("]
    return tokens[: opens[-1]] if opens else tokens


def reads_as_title(text: str, tokens: Sequence[Tagged]) -> bool:
    """Whether a short heading line is a name or title, from its tagged tokens.

    A trailing qualifier is left out ("Terror (album)"). A title-case line
    is a title ("Pick Me Up"); an ALL-CAPS one is judged by its words
    (:func:`caps_title`). Otherwise a pronoun, wh-word, modal or auxiliary
    makes it a clause ("What do you", "This pleasantry was received"), and
    it must not open with a function word or adverb ("In half a minute
    Mrs. Cratchit", "Suddenly a man"); one word alone must be no function
    word ("When", "No"). "Habitat and range" is kept.
    """
    core = without_qualifier(text)
    if core.isupper():
        return caps_title(core)
    if is_title_case(core):
        return True
    if core != text:
        tokens = _before_last_bracket(tokens)
    tokens = [t for t in tokens if t[1] != "SPACE"]
    if not tokens or any(tag in CLAUSE_TAGS or pos == "AUX" for _, pos, tag in tokens):
        return False
    if len(tokens) == 1:
        return tokens[0][1] not in _NOT_ALONE
    # "Late-May 1998 tornado outbreak" (Late/ADV), "1997–98 Orlando Magic season" (1997–98/PUNCT)
    plain_word = core.split()[0] == tokens[0][0] and tokens[0][0][:1].isalpha()
    return not plain_word or tokens[0][1] not in _NOT_FIRST


HONORIFICS = frozenset(
    {
        "Mr",
        "Mr.",
        "Mrs",
        "Mrs.",
        "Ms",
        "Ms.",
        "Miss",
        "Mx",
        "Mx.",
        "Dr",
        "Dr.",
        "Prof",
        "Prof.",
        "Sir",
        "Dame",
        "Lady",
        "Madame",
        "Mme",
        "Mme.",
    }
)
ORG_SUFFIXES = frozenset(
    {
        "Inc",
        "Inc.",
        "Ltd",
        "Ltd.",
        "LLC",
        "L.L.C.",
        "GmbH",
        "AG",
        "plc",
        "PLC",
        "Corp",
        "Corp.",
        "Corporation",
        "Company",
        "Co",
        "Co.",
        "Robotics",
        "Labs",
        "Laboratories",
        "Systems",
        "Technologies",
        "University",
        "Institute",
        "College",
        "Academy",
        "Foundation",
        "Association",
        "Society",
        "Studios",
        "Records",
        "Airlines",
    }
)
ORG_HEADS = frozenset(
    {
        "University",
        "Institute",
        "Academy",
        "Bank",
        "Ministry",
        "Department",
        "Council",
        "Church",
        "Society",
    }
)
NATURAL_HEADS = frozenset(
    {
        "Island",
        "Islands",
        "Isles",
        "Archipelago",
        "River",
        "Mountains",
        "Sea",
        "Ocean",
        "Lake",
        "Bay",
        "Gulf",
        "Peninsula",
        "Valley",
        "Desert",
        "Strait",
        "Canyon",
        "Falls",
        "Glacier",
    }
)
# Heads that overrule an Organization too ("Tampa Bay" and "Ohio Valley" may be teams or leagues).
PLAIN_PLACE_HEADS = frozenset(
    {"Islands", "Isles", "Archipelago", "River", "Mountains", "Ocean", "Peninsula"}
)
ADMIN_HEADS = frozenset({"County", "City", "Province", "Prefecture", "District", "Township"})
PLACE_PREFIXES = frozenset(
    {"Lake", "Mount", "Mt", "Mt.", "Isle", "Gulf", "Sea", "Bay", "River", "Cape"}
)
CJK_ORG_SUFFIXES = (
    "公司",
    "集团",
    "大学",
    "学院",
    "银行",
    "研究所",
    "研究院",
    "委员会",
    "协会",
    "中学",
    "小学",
)
CJK_ADMIN_SUFFIXES = ("省", "县", "州", "郡", "市")
CJK_NATURAL_SUFFIXES = ("山", "河", "江", "湖", "岛")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_FROM_ANY = frozenset(
    {"Person", "Organization", "Location", "Concept", "Artifact"}
)  # never Content, Event


def _english_type(words: list[str], kind: str) -> str | None:
    """The type the words of an English name call for, or None."""
    first, last = words[0], words[-1]
    of_head = len(words) > 2 and words[1] == "of"
    if first in HONORIFICS and 1 < len(words) <= 3:  # not "Mr. Bill's Real Life Adventures"
        return "Person"
    if last in ORG_SUFFIXES or (of_head and first in ORG_HEADS):
        return "Organization"
    if last in PLAIN_PLACE_HEADS or (first in PLACE_PREFIXES and len(words) == 2):
        return "Location"  # "Faroe Islands", "River Tagus"
    place = (
        last in NATURAL_HEADS or last in ADMIN_HEADS or (first in PLACE_PREFIXES and len(words) > 2)
    )
    return "Location" if place and kind != "Organization" else None  # not "Manchester City"


def _cjk_type(name: str, kind: str) -> str | None:
    """The type the suffix of a Chinese name calls for, or None."""
    if len(name) < 2:
        return None
    if name.endswith(CJK_ORG_SUFFIXES):
        return "Organization"
    if name.endswith(CJK_ADMIN_SUFFIXES) or (
        name.endswith(CJK_NATURAL_SUFFIXES) and kind != "Person"
    ):
        return "Location"
    return None


def corrected_type(name: str, kind: str) -> str:
    """``kind`` corrected by the name's own words (``Zephyr Robotics`` is an Organization).

    Honorifics (Mr., Mrs., Dr., Sir, Lady) make a Person, corporate and
    institutional suffixes (Inc, GmbH, Labs, University, 公司) an
    Organization, geographic heads (Islands, River, Lake, County, 州) and
    place prefixes (Lake X, Mount X) a Location; only the plainest heads
    (Islands, River, Mountains...) and a two-word prefixed name ("River
    Tagus") overrule an Organization ("Manchester City", "Mount Sinai
    Hospital" stay). Content and Event types are kept
    ("Lake Placid" the film), and a Chinese name ending in 山/河/江/湖/岛
    that jieba called a person stays one (孙中山).
    """
    if kind not in _FROM_ANY or not name.strip():
        return kind
    fixed = _cjk_type(name, kind) if _HAN.search(name) else _english_type(name.split(), kind)
    return fixed or kind
