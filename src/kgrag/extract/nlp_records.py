"""The records the LLM-free extractor's analyzers produce: sentences and their mentions."""

from __future__ import annotations

from dataclasses import dataclass, field

from kgrag.extract.nlp_roles import RoleStatement


@dataclass(slots=True)
class Mention:
    name: str
    type: str
    start: int  # character offsets inside the sentence
    end: int
    alias: str = ""  # the name with the form of address before it ("Mr. Scrooge")


@dataclass(slots=True)
class Sentence:
    text: str
    mentions: list[Mention] = field(default_factory=list)
    words: list[tuple[str, int]] = field(default_factory=list)  # content word, offset
    reads_as_name: bool = True  # False: a heading-like line that POS tags show is a clause
    roles: list[RoleStatement] = field(default_factory=list)  # "Y is the CEO of X"
