"""A bare surname or given name two people carry stands for neither of them.

"Bradshaw" in a corpus with *Roberta Bradshaw* and *Matthew Bradshaw*
may be either; joined to one, it takes the other's facts with it. A
one-word name is linked to a full name only when exactly one person in
the corpus carries it (as the last word, a surname, or the first word, a
given name), or, when several do, when it is mentioned (shares source
chunks) with that one person alone: "Bowie" met only beside *David
Bowie*, never beside *James Bowie*. Full names count as one person when
their given names (for a surname) agree or one is an initial of the other
(*E. Scrooge*, *Ebenezer Scrooge*, *Adam Fredric Duritz*, *Adam Duritz*).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from kgrag.curation.resolution.names import Name
from kgrag.curation.resolution.vetoes import FORM_WORDS, HEADS, PERSON
from kgrag.curation.resolution.view import Entity

NOT_GIVEN = frozenset({"saint", "san", "santa", "sao", "fort", "mount", "port", "lake"})


class People:
    """The people of a graph, by the words that begin and end their full names."""

    def __init__(self, names: Mapping[str, Name], entities: Mapping[str, Entity]) -> None:
        self.names, self.entities = names, entities
        by_word: dict[tuple[str, int], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for n, name in names.items():
            if _person(name, entities[n]):
                toks = name.tokens
                by_word["last", -1][toks[-1]] |= {n}
                by_word["first", 0][toks[0]] |= {n}
        self.carriers = {
            (place, word): _distinct(found, names, 0 if place == "last" else -1)
            for (place, _), words in by_word.items()
            for word, found in words.items()
        }

    def shared(self, x: str, y: str) -> str | None:
        """Why one-word ``x`` (or ``y``) may not join the other: several people carry it."""
        for short, long in ((x, y), (y, x)):
            ns, nl = self.names[short], self.names[long]
            if len(ns.tokens) != 1 or ns.cjk or len(nl.tokens) < 2:
                continue
            for place, pos in (("last", -1), ("first", 0)):
                people = self.carriers.get((place, ns.tokens[0]), [])
                if nl.tokens[pos] != ns.tokens[0] or len(people) < 2:
                    continue
                if not self._met_with_only(short, long, people):
                    shown = ", ".join(sorted(min(p) for p in people)[:4])
                    return f"a name {len(people)} people carry: {shown}"
        return None

    def _met_with_only(self, short: str, long: str, people: list[set[str]]) -> bool:
        mine = self.entities[short].sources
        met = [p for p in people if any(mine & self.entities[n].sources for n in p)]
        return len(met) == 1 and long in met[0]


def _person(name: Name, e: Entity) -> bool:
    """Two or three words of a person's name: typed a person, or capitalised words and no
    head noun (the extractor types many people as organisations)."""
    if name.cjk or not 2 <= len(name.tokens) <= 3 or name.corporate or "," in name.raw:
        return False
    if set(name.tokens) & (HEADS | FORM_WORDS) or name.tokens[0] in NOT_GIVEN:
        return False
    typed = PERSON in {t.casefold() for t in e.types} or e.type.casefold() == PERSON
    return typed or all(w[:1].isupper() for w in name.raw.split())


def _distinct(found: set[str], names: Mapping[str, Name], pos: int) -> list[set[str]]:
    """The full names, one set per person: names whose word at ``pos`` (the given name for
    a surname, the surname for a given name) agree, or one is an initial of the other."""
    out: list[tuple[str, set[str]]] = []
    for n in sorted(found, key=lambda n: (-len(names[n].tokens[pos]), n)):
        word = names[n].tokens[pos]
        for key, members in out:
            if key.startswith(word):
                members.add(n)
                break
        else:
            out.append((word, {n}))
    return [members for _, members in out]
