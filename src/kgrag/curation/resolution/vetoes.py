"""Hard negatives: differences between two names that no evidence outweighs.

A person against a non-person, Mr. against Mrs., different given names
under one surname, numbered or qualified variants (Past/Present,
FW-A/FW-B, v1/v2); and, for things other than people, a name inside the
name of another thing (*Islamabad* in *Islamabad Airport*, *Finnish* in
*Finnish markka*, 几内亚 in 新几内亚) and two different spellings-out of
one acronym (*Great Britain* and *Green Bay* are both GB); and, whatever
the types and the score, a place against a larger or smaller place of the
same name stem (:mod:`~kgrag.curation.resolution.places`). The group
step checks these on every pair it would join, so an ambiguous short
name cannot chain two things together.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from kgrag.curation.resolution import places
from kgrag.curation.resolution.names import STOPWORDS, Name, is_distinguishing, parse, spelling_only
from kgrag.curation.resolution.view import Entity

PERSON = "person"
# words that name the form of a thing, not another thing: "Republic of Latvia" is Latvia
FORM_WORDS = frozenset(
    {"republic", "kingdom", "commonwealth", "federation", "federal", "democratic", "people"}
    | {"peoples", "islamic", "socialist", "united", "state", "empire", "principality", "city"}
    | {"town", "village", "county", "municipality", "province", "borough", "band", "official"}
)
# common heads of names of places, works and bodies, and nationalities: "Islamabad Airport",
# "Limpopo River", "Spanish Wikipedia" are other things than Islamabad, Limpopo, Wikipedia
HEADS = frozenset(
    {"airport", "river", "lake", "falls", "mountain", "mount", "hill", "hills", "island"}
    | {"islands", "bay", "valley", "coast", "beach", "park", "forest", "desert", "sea", "ocean"}
    | {"street", "road", "avenue", "square", "bridge", "railway", "railroad", "station", "line"}
    | {"district", "downtown", "region", "area", "township", "parish", "courthouse", "tower"}
    | {"school", "college", "university", "academy", "institute", "church", "cathedral"}
    | {"abbey", "chapel", "temple", "hall", "house", "castle", "palace", "museum", "library"}
    | {"theatre", "theater", "stadium", "arena", "center", "centre", "hotel", "hospital"}
    | {"league", "cup", "championship", "championships", "games", "olympics", "season"}
    | {"award", "awards", "prize", "trophy", "festival", "series", "show", "film", "album"}
    | {"song", "records", "studios", "press", "news", "times", "magazine", "journal", "party"}
    | {"society", "council", "committee", "assembly", "parliament", "government", "ministry"}
    | {"department", "agency", "bank", "fund", "navy", "army", "force", "corps", "club"}
    | {"team", "fc", "company", "foundation", "association", "union", "airlines", "airways"}
    | {"world", "war", "battle", "act", "treaty", "project", "system", "network", "group"}
    | {"english", "british", "french", "german", "spanish", "italian", "portuguese", "dutch"}
    | {"american", "canadian", "mexican", "australian", "indian", "chinese", "japanese"}
    | {"korean", "russian", "polish", "swedish", "finnish", "norwegian", "danish", "irish"}
    | {"scottish", "welsh", "greek", "turkish", "persian", "arab", "arabic", "african"}
    | {"european", "asian", "latin", "roman", "catholic", "national", "international"}
    | {"central", "royal", "imperial", "grand", "great", "little", "big", "greater"}
)
ZH_FORM = ("共和国", "人民", "民主", "联邦", "王国", "帝国", "省", "市", "县")


# common Chinese surnames (and the novel's), single and compound: the only words that may
# stand before a given or courtesy name in one name (刘玄德, 诸葛孔明; not 封王蕴, "enfeoff Wang Yun")
ZH_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏"
    "魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵"
    "万钱严覃武戴莫孔向汤关荀鲁甘糜庞法费太华祝典乐臧文牛祢皇种颜蒯伊逢审沮淳辛满卫阎耿翟虞"
    "步阚简纪施伏桓邢焦祖管霍庄柳左骆"
)
ZH_COMPOUND = frozenset({"诸葛", "司马", "夏侯", "公孙", "太史", "皇甫", "欧阳", "上官", "东方"})


def types_of(e: Entity) -> set[str]:
    return {t.casefold() for t in e.types}


def veto(a: Entity, b: Entity, na: Name, nb: Name, stated: bool) -> str | None:
    """The hard-negative reason that keeps ``a`` and ``b`` apart whatever else says, if any."""
    ta, tb = types_of(a), types_of(b)
    if ta and tb and not ta & tb and PERSON in ta | tb and not (stated or spelling_only(na, nb)):
        return f"type conflict: {a.type} vs {b.type}"
    if (na.corporate and PERSON in tb) or (nb.corporate and PERSON in ta):
        return "a person and a company named after them"
    if na.gender and nb.gender and na.gender != nb.gender:
        return "titles of different genders"
    if na.qualifier and nb.qualifier and na.qualifier != nb.qualifier:
        return f"qualified variants: ({na.qualifier}) vs ({nb.qualifier})"
    differ = _distinct(na) ^ _distinct(nb)
    if differ:
        return "numbered or qualified variant: " + ", ".join(sorted(differ))
    if not stated and (_word_before(na, nb) or _word_before(nb, na)):
        return "a word that is no surname before a Chinese name"
    return (
        _people(na, nb, ta, tb, stated)
        or (None if stated else _things(na, nb, ta, tb))
        or places.contains(na, nb, PERSON in ta and PERSON in tb)
    )


def _word_before(short: Name, long: Name) -> bool:
    """``long`` is one or two characters, not a surname, then ``short`` (封王蕴, 王蕴)."""
    if not (short.cjk and long.cjk) or len(short.key) < 2 or not long.key.endswith(short.key):
        return False
    head = long.key[: -len(short.key)]
    return 1 <= len(head) <= 2 and head not in ZH_COMPOUND and not set(head) <= ZH_SURNAMES


def _people(na: Name, nb: Name, ta: set[str], tb: set[str], stated: bool) -> str | None:
    if not stated and _given_names_differ(na, nb):
        return "different given names under one surname"
    if PERSON in ta and PERSON in tb and _each_has_its_own(na, nb):
        return "different names beyond a shared word"
    if _woman_and_other(na, nb) or _woman_and_other(nb, na):
        return "a woman's title against a man's or a full name (family members)"
    return None


def _things(na: Name, nb: Name, ta: set[str], tb: set[str]) -> str | None:
    """Names of things (not two people): a part naming a whole, two spellings-out of one acronym."""
    if not (PERSON in ta and PERSON in tb) and (_modifies(na, nb) or _modifies(nb, na)):
        return "a name inside the name of another thing"
    if na.cjk and nb.cjk and na.key not in nb.key and nb.key not in na.key:
        return "two different names"  # 中共浙江省委, 中共四川省委 (scripts are in the key)
    if _own_words(na, nb) and _own_words(nb, na):
        return "two different multi-word names"
    return None


def _modifies(short: Name, long: Name) -> bool:
    """``long`` names another thing that ``short`` qualifies or locates (not a form of it).

    Not when the extra words are a locator after a comma ("Wardville,
    Oklahoma"), form words ("Republic of Latvia"), initials ("Iain M.
    Banks"), or a person's given names before a surname (the extractor
    types many people as organisations).
    """
    if short.cjk != long.cjk or short.key == long.key or not short.key:
        return False
    if short.cjk:
        rest = long.key.replace(short.key, "", 1)
        for form in ZH_FORM:
            rest = rest.replace(form, "")
        return short.key in long.key and bool(rest)
    extra = set(long.tokens) - set(short.tokens)
    if not extra or not set(short.tokens) < set(long.tokens):
        return False
    if _before_comma(long.raw) == short.key or extra <= FORM_WORDS | STOPWORDS:
        return False
    if all(len(t) == 1 for t in extra):
        return False
    return not _surname(short, long)


def _surname(short: Name, long: Name) -> bool:
    """``short`` is the last of two or three capitalised words, none a head noun or a
    nationality: a person's surname ("Parlan" in "Horace Parlan")."""
    if len(short.tokens) != 1 or not 2 <= len(long.tokens) <= 3 or "," in long.raw:
        return False
    if long.tokens[-1] != short.tokens[0] or set(long.tokens) & (HEADS | FORM_WORDS):
        return False
    return all(w[:1].isupper() for w in long.raw.replace(",", " ").split())


def _before_comma(raw: str) -> str:
    head, comma, _ = raw.partition(",")
    return parse(head).key if comma and head.strip() else ""


def _own_words(x: Name, y: Name) -> set[str]:
    """Content words of multi-word ``x`` that ``y`` has no spelling, initial or form of."""
    if x.cjk or y.cjk or len(x.tokens) < 2 or len(y.tokens) < 2:
        return set()
    theirs = set(y.tokens)
    return {
        t
        for t in set(x.tokens) - theirs
        if t not in STOPWORDS and len(t) > 1 and not any(_alike(t, u) for u in theirs)
    }


def _alike(t: str, u: str) -> bool:
    """One word as an initial, a prefix (Olympic, Olympics) or a misspelling of the other."""
    if len(u) == 1 or len(t) == 1:
        return t[0] == u[0]
    if t.startswith(u[:4]) and u.startswith(t[:4]):
        return True
    return SequenceMatcher(None, t, u).ratio() >= 0.8


def _distinct(name: Name) -> set[str]:
    """Distinguishing tokens; a lone letter counts only at the end (FW-A), not as an initial."""
    toks = name.tokens
    return {
        t for i, t in enumerate(toks) if is_distinguishing(t) and (len(t) > 1 or i == len(toks) - 1)
    }


def _given_names_differ(na: Name, nb: Name) -> bool:
    if na.cjk and nb.cjk:
        a, b = na.key, nb.key
        return 2 <= len(a) <= 3 and 2 <= len(b) <= 3 and a[0] == b[0] and a[1:] != b[1:]
    if len(na.tokens) < 2 or len(nb.tokens) < 2 or na.tokens[-1] != nb.tokens[-1]:
        return False
    fa, fb = na.tokens[0], nb.tokens[0]
    return not (fa.startswith(fb) or fb.startswith(fa))


def _each_has_its_own(na: Name, nb: Name) -> bool:
    """Two people's names, each with a word the other lacks (Tim Cratchit, Tim Smith)."""
    if na.cjk or nb.cjk:
        return False
    a, b = set(na.tokens), set(nb.tokens)
    own_a = {t for t in a - b if not any(len(t) == 1 and u.startswith(t) for u in b - a)}
    own_b = {t for t in b - a if not any(len(t) == 1 and u.startswith(t) for u in a - b)}
    return bool(a & b and own_a and own_b)


def _woman_and_other(x: Name, y: Name) -> bool:
    return (
        x.gender == "f" and y.gender != "f" and (y.gender == "m" or len(y.tokens) > len(x.tokens))
    )
