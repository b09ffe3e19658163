"""Reference numbers of the context's items, the ``[n]`` an answer cites.

Every item of the answer context (entity, relation, chunk) has one number,
given in the order the context shows them: entities ``1..a``, relations
``a+1..a+b``, then each chunk its own number. A section placed before the
chunks takes its numbers with :meth:`Numbering.take`. Chunks come last, so
dropping trailing chunks to fit the prompt renumbers nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class Numbering:
    """Hands out consecutive reference numbers, from 1."""

    def __init__(self, start: int = 1) -> None:
        self.next = start

    def take(self, count: int) -> list[int]:
        """The next ``count`` numbers."""
        numbers = list(range(self.next, self.next + count))
        self.next += count
        return numbers


@dataclass(slots=True)
class ItemNumbers:
    """The number of each context item, aligned with the assembly's lists."""

    entities: list[int] = field(default_factory=list)
    relations: list[int] = field(default_factory=list)
    chunks: list[int] = field(default_factory=list)

    @classmethod
    def assign(cls, entities: int, relations: int, chunks: int) -> ItemNumbers:
        """Numbers for that many entities, relations and chunks, in context order."""
        numbering = Numbering()
        return cls(numbering.take(entities), numbering.take(relations), numbering.take(chunks))

    def all(self) -> set[int]:
        """Every number an answer may cite."""
        return {*self.entities, *self.relations, *self.chunks}

    def drop_last_chunk(self) -> None:
        """Forget the last chunk's number (the chunk left the context)."""
        if self.chunks:
            self.chunks.pop()
