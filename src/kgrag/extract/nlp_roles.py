"""Whole names and role statements for the LLM-free extractor (English).

Two things NER alone misses:

* **Whole names.** spaCy's small model often tags part of an unknown name
  ("Valdt" of "Oren Valdt") or none of it. :func:`name_spans` extends each
  entity span over the capitalised proper-noun tokens next to it and adds
  runs of two or more such tokens NER left out, so a name is keyed whole.
* **Role statements.** A copular or appositive statement names a role one
  entity holds in another: "The CEO of X is Y", "Y is the CEO of X",
  "Y, CEO of X", "X's CEO, Y". :func:`find_roles` reads them off the tags
  and returns ``Role(holder=Y, role="CEO", of=X)``; the extractor turns each
  into a relation Y -> X whose keywords are the role words.

All functions are pure, over :class:`Tok` records (text, part of speech,
character offsets), so they are tested without spaCy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Forms of address: kept out of a name's words, kept as its alias ("Mr. Scrooge").
TITLES = frozenset(
    {
        *("mr", "mrs", "ms", "miss", "dr", "prof", "sir", "dame", "lady", "lord", "madam", "mx"),
        *("professor", "general", "colonel", "captain", "judge", "rev", "reverend", "senator"),
        *("president", "secretary", "minister", "governor", "chairman", "director"),
    }
)
# Capitalised words that open a sentence before a name but are no part of it ("Old Jacob Marley").
_NOT_NAME_WORDS = frozenset({"Old", "Young", "Poor", "Little", "Dear", "Good", "Great", "Oh"})
_BE = frozenset({"is", "was", "are", "were", "became", "becomes", "remains", "remained"})
_DETS = frozenset({"the", "a", "an", "its", "their", "his", "her"})
MAX_ROLE_TOKENS = 6
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9&]{1,5}$")


@dataclass(frozen=True, slots=True)
class Tok:
    """One token: text, coarse part of speech, character offsets in the sentence."""

    text: str
    pos: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Span:
    """A name over tokens ``lo`` (inclusive) to ``hi`` (exclusive)."""

    lo: int
    hi: int


@dataclass(frozen=True, slots=True)
class Role:
    """``holder`` is ``role`` of ``of`` (token spans of the sentence; role as its words)."""

    holder: Span
    role: str
    of: Span


def is_title(tok: Tok) -> bool:
    """A capitalised form of address ("Mr.", "Mrs", "Dr.", "Professor")."""
    return tok.text[:1].isupper() and tok.text.rstrip(".").lower() in TITLES


def _name_word(tok: Tok) -> bool:
    """A capitalised proper-noun word that may be part of a name (no acronym role, no title)."""
    return (
        tok.pos == "PROPN"
        and tok.text[:1].isupper()
        and tok.text.isalpha()
        and not tok.text.isupper()
        and not is_title(tok)
        and tok.text not in _NOT_NAME_WORDS
    )


def name_spans(
    toks: list[Tok], ents: list[Span], others: list[Span], grows: list[bool] | None = None
) -> list[Span]:
    """``ents`` widened over adjacent name words (same order), then runs of two or more name words NER missed.

    Tokens of ``others`` (dates, numbers: spans NER gave that are no
    names) are never taken. ``grows[i]`` False: ``ents[i]`` only grows
    to the left (an organisation's name is whole to its right: "X
    Association General Secretary" is a role after it).
    """
    out: list[Span] = []
    taken = [_inside(i, others) or _inside(i, ents) for i in range(len(toks))]
    for n, e in enumerate(ents):
        grows_right = grows is None or grows[n]
        lo, hi = e.lo, e.hi
        while lo > 0 and not taken[lo - 1] and _name_word(toks[lo - 1]):
            lo -= 1
        while grows_right and hi < len(toks) and _name_word(toks[hi]) and not taken[hi]:
            hi += 1
        out.append(Span(lo, hi))
        for i in range(lo, hi):
            taken[i] = True
    i = 0
    while i < len(toks):
        j = i
        while j < len(toks) and not taken[j] and _name_word(toks[j]):
            j += 1
        if j - i >= 2:
            out.append(Span(i, j))
        i = max(j, i + 1)
    return out


def _inside(i: int, spans: list[Span]) -> bool:
    return any(s.lo <= i < s.hi for s in spans)


def _role_word(tok: Tok) -> bool:
    if tok.pos in ("NOUN", "ADJ") and tok.text.isalpha() and tok.text.islower():
        return True
    return bool(_ACRONYM.match(tok.text))


def _role_before(toks: list[Tok], k: int) -> tuple[int, str] | None:
    """The role words ending right before ``toks[k]`` ("chief executive officer (CEO)"): start, words."""
    i, words = k, list[str]()
    while i > 0 and k - i < MAX_ROLE_TOKENS:
        t = toks[i - 1]
        if (
            t.text == ")"
            and i >= 3
            and toks[i - 3].text == "("
            and _ACRONYM.match(toks[i - 2].text)
        ):
            words.insert(0, toks[i - 2].text)
            i -= 3
        elif _role_word(t):
            words.insert(0, t.text)
            i -= 1
        else:
            break
    has_noun = any(t.pos == "NOUN" or _ACRONYM.match(t.text) for t in toks[i:k])
    return (i, _role_text(words)) if words and has_noun else None


def _role_text(words: list[str]) -> str:
    """ "chief executive officer (CEO)" as "chief executive officer, CEO"."""
    plain = [w for w in words if not _ACRONYM.match(w)]
    short = [w for w in words if _ACRONYM.match(w)]
    return ", ".join(p for p in (" ".join(plain), *short) if p)


def _at(spans: list[Span], lo: int | None = None, hi: int | None = None) -> Span | None:
    for s in spans:
        if (lo is None or s.lo == lo) and (hi is None or s.hi == hi):
            return s
    return None


def _skip_det(toks: list[Tok], i: int) -> int:
    """Index before a determiner that ends at ``i`` (or ``i`` itself)."""
    return i - 1 if i > 0 and toks[i - 1].text.lower() in _DETS else i


def find_roles(toks: list[Tok], names: list[Span]) -> list[Role]:
    """Role statements of one sentence: "R of X" next to a name Y by copula or apposition."""
    roles: list[Role] = []
    for k, t in enumerate(toks):
        if t.text.lower() != "of" or (x := _at(names, lo=k + 1)) is None:
            continue
        found = _role_before(toks, k)
        if found is None:
            continue
        r0, role = found
        p = _skip_det(toks, r0)
        y: Span | None = None
        if p >= 2 and toks[p - 1].text.lower() in _BE | {","}:
            y = _at(names, hi=p - 1)
        if y is None and x.hi + 1 < len(toks) and toks[x.hi].text.lower() in _BE:
            y = _at(names, lo=x.hi + 1)
        if y is not None and y != x:
            roles.append(Role(y, role, x))
    return roles + _possessive_roles(toks, names)


def _possessive_roles(toks: list[Tok], names: list[Span]) -> list[Role]:
    """ "X's R, Y" and "X's R is Y"."""
    roles: list[Role] = []
    for x in names:
        k = x.hi
        if k < len(toks) and toks[k].text in ("'s", "’s"):
            k += 1
        elif not (x.hi > x.lo and toks[x.hi - 1].text in ("'s", "’s")):
            continue
        end = k
        while end < len(toks) and end - k < MAX_ROLE_TOKENS and _role_word(toks[end]):
            end += 1
        if end == k or end + 1 >= len(toks):
            continue
        if toks[end].text == "," or toks[end].text.lower() in _BE:
            y = _at(names, lo=end + 1)
            role = _role_text([t.text for t in toks[k:end]])
            if y is not None and y != x:
                roles.append(Role(y, role, x))
    return roles


# Role words only a person holds: their holder is a Person unless its own words say otherwise.
PERSON_ROLES = frozenset(
    {
        "ceo",
        "cto",
        "cfo",
        "coo",
        "founder",
        "cofounder",
        "co-founder",
        "president",
        "chairman",
        "chairwoman",
        "chair",
        "director",
        "officer",
        "chief",
        "head",
        "leader",
        "mayor",
        "governor",
        "minister",
        "manager",
        "owner",
        "wife",
        "husband",
        "son",
        "daughter",
        "father",
        "mother",
        "brother",
        "sister",
        "editor",
        "author",
        "coach",
        "captain",
        "secretary",
        "dean",
        "principal",
        "king",
        "queen",
    }
)


def is_person_role(role: str) -> bool:
    """True when a word of ``role`` is one only a person holds ("chief executive officer, CEO")."""
    return any(w.lower() in PERSON_ROLES for w in re.findall(r"[\w-]+", role))


@dataclass(frozen=True, slots=True)
class RoleStatement:
    """A sentence's role statement by names: ``holder`` is ``role`` of ``of``."""

    holder: str
    role: str
    of: str


# Chinese role statements: "X的R是Y" and "Y是X的R", R from a short list of roles.
CJK_PERSON_ROLES = (
    "首席执行官",
    "首席技术官",
    "首席财务官",
    "行政总裁",
    "总裁",
    "董事长",
    "创始人",
    "创办人",
    "总经理",
    "经理",
    "主席",
    "校长",
    "院长",
    "市长",
    "省长",
    "总统",
    "总理",
    "主编",
    "作者",
    "妻子",
    "丈夫",
    "儿子",
    "女儿",
    "父亲",
    "母亲",
    "CEO",
)
CJK_ROLES = (*CJK_PERSON_ROLES, "首都", "省会", "子公司", "母公司")
_CJK_NAME = r"[^\s，。！？；：、,.!?;:的是为]{2,16}"
_CJK_ROLE = "|".join(sorted(CJK_ROLES, key=len, reverse=True))
_CJK_OF_IS = re.compile(
    rf"^(?P<of>{_CJK_NAME})的(?P<role>{_CJK_ROLE})(?:是|为)(?P<holder>{_CJK_NAME})[。！]?$"
)
_CJK_IS_OF = re.compile(
    rf"^(?P<holder>{_CJK_NAME})(?:是|为|担任)(?P<of>{_CJK_NAME})的(?P<role>{_CJK_ROLE})[。！]?$"
)


@dataclass(frozen=True, slots=True)
class CjkRole:
    """A Chinese role statement with the names' character offsets in the sentence."""

    holder: str
    holder_at: tuple[int, int]
    role: str
    of: str
    of_at: tuple[int, int]


def cjk_role(sentence: str) -> CjkRole | None:
    """The role statement a whole Chinese sentence makes ("X的首席执行官是Y"), or None."""
    text = sentence.strip()
    found = _CJK_OF_IS.match(text) or _CJK_IS_OF.match(text)
    if found is None:
        return None
    return CjkRole(
        found["holder"], found.span("holder"), found["role"], found["of"], found.span("of")
    )
