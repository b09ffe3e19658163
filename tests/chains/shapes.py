"""The relations of the chain set, the sentence shapes that state them, and the invented names.

A relation is stated by one of several shapes (active, passive, appositive,
copular), so a question's words do not simply reappear in its answer. Every
shape holds ``{s}`` (the relation's subject), ``{o}`` (its object) and may
hold ``{y}`` (a year). Names are invented, so no model knows them already.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Relation:
    """A relation between two kinds of thing, and the sentence shapes that state it."""

    name: str  # the relation name the true and the distractor chain share
    subject: str  # kind of ``{s}``: person, company, product, city
    object: str  # kind of ``{o}``
    shapes: tuple[str, ...]


@dataclass(frozen=True)
class Hop:
    relation: Relation
    forward: bool  # the chain's earlier node is the relation's subject


@dataclass(frozen=True)
class Pattern:
    hops: tuple[Hop, ...]
    question: str  # holds ``{a}``, the anchor


def _h(relation: Relation, forward: bool = True) -> Hop:
    return Hop(relation, forward)


FOUNDED = Relation(
    "founded",
    "person",
    "company",
    (
        "{s} founded {o} in {y}.",
        "{o} was founded by {s} in {y}.",
        "{s}, the founder of {o}, opened its first office in {y}.",
    ),
)
ACQUIRED = Relation(
    "acquired",
    "company",
    "company",
    (
        "{s} acquired {o} in {y}.",
        "In {y}, {o} was acquired by {s}.",
        "{o}, acquired by {s} in {y}, kept its own name.",
    ),
)
CEO_OF = Relation(
    "CEO of",
    "person",
    "company",
    (
        "{s} is the CEO of {o}.",
        "The chief executive officer of {o} is {s}.",
        "{s}, CEO of {o} since {y}, rarely gives interviews.",
    ),
)
LOCATED_IN = Relation(
    "located in",
    "company",
    "city",
    (
        "{s} is headquartered in {o}.",
        "The head office of {s} is located in {o}.",
        "{s}, based in {o}, employs a few hundred people.",
    ),
)
MAKES = Relation(
    "makes",
    "company",
    "product",
    (
        "{s} makes the {o}.",
        "The {o} is manufactured by {s}.",
        "The {o}, a product of {s}, went on sale in {y}.",
    ),
)

FIRST = (
    "Mira", "Oren", "Sela", "Kael", "Tamsin", "Ivo", "Lenna", "Bram", "Odile", "Corin",
    "Yara", "Teodor", "Nessa", "Quill", "Ansel", "Petra", "Rune", "Liora", "Davin", "Elske",
)  # fmt: skip
LAST = (
    "Solen", "Valdt", "Marrow", "Brant", "Okoro", "Haskel", "Venn", "Torvik", "Damaris",
    "Quell", "Strand", "Orlov", "Pellin", "Rask", "Ambrose", "Keddle", "Fairholt", "Maro",
)  # fmt: skip
STEM = (
    "Vantor", "Tessaline", "Orrin", "Pellham", "Quorra", "Brightmoor", "Kestrel", "Halvard",
    "Norvale", "Cindral", "Ostrava", "Meridane", "Lumera", "Garrick", "Selbourne", "Varrow",
    "Thessaly", "Ironvale", "Dunmere", "Calloway",
)  # fmt: skip
SUFFIX = ("Labs", "Robotics", "Dynamics", "Systems", "Works", "Industries")
CITY = (
    "Port Aven", "Kessel", "Marrowgate", "Dorn", "Ulvik", "Saltmere", "Brennock", "Ostwick",
    "Halden", "Vellmar", "Tarrow", "Linmouth", "Caskerry", "Emberly",
)  # fmt: skip
PRODUCT_STEM = ("Aero", "Nimbus", "Pulse", "Helix", "Quanta", "Strata", "Vector", "Orbit")
PRODUCT_KIND = ("drone", "scanner", "press", "router", "pump", "loom")
FILLER = (
    "The announcement drew little attention at the time.",
    "Analysts expected steady growth in the following years.",
    "Local papers covered the story on their business pages.",
    "Several trade journals mentioned it in passing.",
    "Few details were published beyond the bare facts.",
)
