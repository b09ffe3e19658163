"""A seeded set of multi-hop questions, each over its own small corpus with a distractor chain.

An item asks for the end of a chain of two or three relations that starts
at an *anchor* the question names ("Who is the CEO of the company acquired
by the company Mira Solen founded?"). Its corpus states every hop of the
true chain in a document of its own, and a *distractor* chain of the same
relations (founded, acquired, CEO of, ...) from another anchor, so that a
retriever that follows relation names and not the anchor finds a wrong
end. The gold is the final hop's sentence and the answer it names.

    python -m tests.chains.generate --out chains.json   # the default set, as JSON
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import asdict, dataclass
from typing import Protocol

from tests.chains import shapes as S
from tests.chains.chinese import FILLER_ZH, ZH_PATTERNS, ZhNames
from tests.chains.shapes import Hop, Pattern, _h

SEED = 22
COUNT = 60  # English items; the Chinese ones come on top


@dataclass(frozen=True)
class ChainItem:
    """One question, its corpus, and what answers it."""

    id: str
    lang: str
    hops: int
    question: str
    anchor: str
    answer: str
    relations: tuple[str, ...]  # the relation names, in chain order (shared by both chains)
    chain: tuple[str, ...]  # the true chain's sentences, one per hop, in order
    distractor: tuple[str, ...]  # the distractor chain's sentences, in order
    distractor_anchor: str
    distractor_answer: str
    documents: tuple[tuple[str, str], ...]  # (document id, text), shuffled

    @property
    def final(self) -> str:
        """The final hop's sentence: the one that answers."""
        return self.chain[-1]


PATTERNS = (
    Pattern((_h(S.FOUNDED), _h(S.LOCATED_IN)), "In which city is the company {a} founded based?"),
    Pattern(
        (_h(S.ACQUIRED), _h(S.CEO_OF, False)), "Who is the CEO of the company that {a} acquired?"
    ),
    Pattern((_h(S.FOUNDED), _h(S.MAKES)), "Which product is made by the company that {a} founded?"),
    Pattern((_h(S.ACQUIRED), _h(S.LOCATED_IN)), "Where is the company acquired by {a} located?"),
    Pattern(
        (_h(S.MAKES, False), _h(S.CEO_OF, False)),
        "Who is the chief executive of the company that makes the {a}?",
    ),
    Pattern(
        (_h(S.CEO_OF), _h(S.ACQUIRED)),
        "Which company was acquired by the company whose CEO is {a}?",
    ),
    Pattern(
        (_h(S.FOUNDED), _h(S.ACQUIRED), _h(S.CEO_OF, False)),
        "Who is the CEO of the company acquired by the company {a} founded?",
    ),
    Pattern(
        (_h(S.FOUNDED), _h(S.ACQUIRED), _h(S.LOCATED_IN)),
        "In which city is the company located that was acquired by the company {a} founded?",
    ),
    Pattern(
        (_h(S.MAKES, False), _h(S.ACQUIRED, False), _h(S.LOCATED_IN)),
        "Where is the company headquartered that acquired the maker of the {a}?",
    ),
    Pattern(
        (_h(S.CEO_OF), _h(S.ACQUIRED), _h(S.MAKES)),
        "Which product is made by the company acquired by the company whose CEO is {a}?",
    ),
    Pattern(
        (_h(S.MAKES, False), _h(S.ACQUIRED, False), _h(S.CEO_OF, False)),
        "Who is the CEO of the company that acquired the maker of the {a}?",
    ),
    Pattern(
        (_h(S.FOUNDED), _h(S.ACQUIRED), _h(S.MAKES)),
        "Which product does the company acquired by the company {a} founded make?",
    ),
)


class NameSource(Protocol):
    def draw(self, kind: str) -> str: ...


class Names:
    """Invented names of each kind, never the same one twice within an item."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.used = rng, set[str]()

    def draw(self, kind: str) -> str:
        while True:
            name = self._one(kind)
            words = {w for u in self.used for w in (u.split()[0], u.split()[-1])}
            mine = {name.split()[0], name.split()[-1]} if kind == "person" else {name.split()[0]}
            if name not in self.used and not mine & words:
                self.used.add(name)
                return name

    def _one(self, kind: str) -> str:
        r = self.rng
        if kind == "person":
            return f"{r.choice(S.FIRST)} {r.choice(S.LAST)}"
        if kind == "company":
            return f"{r.choice(S.STEM)} {r.choice(S.SUFFIX)}"
        if kind == "city":
            return r.choice(S.CITY)
        return f"{r.choice(S.PRODUCT_STEM)} {r.choice('KMTXZ')}{r.randint(2, 90)}"


def _kind(hop: Hop, start: bool) -> str:
    """The kind of the hop's earlier (``start``) or later node."""
    return hop.relation.subject if hop.forward == start else hop.relation.object


def walk(pattern: Pattern, names: NameSource, rng: random.Random) -> tuple[list[str], list[str]]:
    """(the chain's nodes, one sentence per hop) of a new chain of ``pattern``."""
    nodes = [names.draw(_kind(pattern.hops[0], True))]
    said = []
    for hop in pattern.hops:
        nodes.append(names.draw(_kind(hop, False)))
        s, o = (nodes[-2], nodes[-1]) if hop.forward else (nodes[-1], nodes[-2])
        shape = rng.choice(hop.relation.shapes)
        said.append(shape.format(s=s, o=o, y=rng.randint(1961, 2019)))
    return nodes, [x[0].upper() + x[1:] for x in said]


def make_item(number: int, pattern: Pattern, rng: random.Random, lang: str = "en") -> ChainItem:
    names: NameSource = Names(rng) if lang == "en" else ZhNames(rng)
    nodes, chain = walk(pattern, names, rng)
    others, distractor = walk(pattern, names, rng)
    filler = FILLER_ZH if lang == "zh" else S.FILLER
    docs = [
        (
            f"{tag}{k + 1}",
            f"{text} {rng.choice(filler)}" if lang == "en" else text + rng.choice(filler),
        )
        for tag, texts in (("t", chain), ("d", distractor))
        for k, text in enumerate(texts)
    ]
    rng.shuffle(docs)
    return ChainItem(
        id=f"{lang}-{number:03d}",
        lang=lang,
        hops=len(pattern.hops),
        question=pattern.question.format(a=nodes[0]),
        anchor=nodes[0],
        answer=nodes[-1],
        relations=tuple(h.relation.name for h in pattern.hops),
        chain=tuple(chain),
        distractor=tuple(distractor),
        distractor_anchor=others[0],
        distractor_answer=others[-1],
        documents=tuple(docs),
    )


def generate(count: int = COUNT, seed: int = SEED, chinese: bool = True) -> list[ChainItem]:
    """``count`` English items (patterns in turn), then the Chinese ones; the same every run."""
    rng = random.Random(seed)
    items = [make_item(i, PATTERNS[i % len(PATTERNS)], rng) for i in range(count)]
    if chinese:
        items += [make_item(i, p, rng, "zh") for i, p in enumerate(ZH_PATTERNS)]
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="-", help="a JSON file (- for stdout)")
    parser.add_argument("--count", type=int, default=COUNT)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    text = json.dumps([asdict(i) for i in generate(args.count, args.seed)], ensure_ascii=False)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(text)


if __name__ == "__main__":
    main()
