"""The records of the conditions stage: constraints, mentions and how kinds compare.

A :class:`Constraint` is one thing the question insists on: the object it
is about (``FW-A``, ``Log Platform``) or a qualifier (``firmware v2``,
``2021``, ``TLS 1.3``, ``500 W``, ``Paris``). A :class:`Mention` is the
same kind of thing found in a context item's text. Both carry a ``group``:
values of one group compete (``FW-A`` and ``FW-B`` are model numbers of
the ``FW`` family, ``v1`` and ``v2`` are versions), values of different
groups never meet.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgrag.retrieval.shapes import ConstraintData

# Kinds the stage knows, in the order they are listed to users.
KINDS = ("object", "model", "version", "date", "year", "protocol", "place", "quantity")
# Another value of the same group in an item, and none of the asked ones: the item conflicts.
EXCLUSIVE = frozenset({"model", "version", "date", "year", "protocol"})
# An item applies only when it matches these (a statement without a version does not
# apply to a question about version 2: it is unknown).
SELECTING = frozenset({"model", "version", "date", "year"})
# Kinds that name what the question is about.
OBJECT_LIKE = frozenset({"object", "model"})


@dataclass(frozen=True, slots=True)
class Mention:
    """A qualifier found in a text: ``norm`` compares, ``group`` says what it competes with."""

    kind: str
    norm: str
    group: str
    span: tuple[int, int]
    text: str
    label: str = ""  # a word naming what the value qualifies: "firmware" in "firmware v2"


@dataclass(frozen=True, slots=True)
class Constraint:
    """One condition of the question.

    ``value`` is the text as the question writes it, ``norm`` the value
    compared with items (``v2.0`` and ``version 2`` are both ``2``),
    ``span`` its character offsets in the question (None when a chat
    model named it in other words).
    """

    kind: str
    value: str
    norm: str
    span: tuple[int, int] | None = None
    group: str = ""
    label: str = ""
    # False for a date or year in a question without model number or version: it may
    # qualify another part of the question ("the film of 2001 starring an actress who...").
    strict: bool = True

    @property
    def exclusive(self) -> bool:
        """Whether another value of its group makes an item conflict."""
        if self.kind == "protocol":
            return " " in self.norm  # only a protocol's versions compete
        return self.kind in EXCLUSIVE and self.strict

    @property
    def selecting(self) -> bool:
        return self.kind in SELECTING

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.norm)

    def describe(self) -> str:
        """How messages name it: ``firmware v2``, ``FW-A``, ``2021``, ``固件第二版``."""
        if not self.label or self.label in self.value.casefold():
            return self.value
        return _labelled(self.label, self.value)

    def to_dict(self) -> ConstraintData:
        return {
            "kind": self.kind,
            "value": self.value,
            "normalized": self.norm,
            "span": list(self.span) if self.span is not None else None,
            "exclusive": self.exclusive,
        }

    @classmethod
    def of(cls, mention: Mention) -> Constraint:
        """The constraint a mention in the question stands for."""
        return cls(
            mention.kind, mention.text, mention.norm, mention.span, mention.group, mention.label
        )


def show(kind: str, norm: str, label: str = "") -> str:
    """A normalised value as users read it (``v2``, ``firmware v2``, ``TLS 1.3``)."""
    if kind == "version":
        text = norm if norm.startswith("gen") else f"v{norm}"
    elif kind == "protocol":
        family, _, version = norm.partition(" ")
        text = family.upper() + (f" {version}" if version else "")
    else:
        text = norm
    return _labelled(label, text) if label else text


def _labelled(label: str, text: str) -> str:
    return f"{label}{text}" if label[-1:] > "\u2e80" else f"{label} {text}"


def _parts(norm: str, sep: str) -> list[str]:
    return [p for p in norm.split(sep) if p]


def compatible(kind: str, asked: str, found: str) -> bool:
    """Whether a value found in an item agrees with the asked one.

    Versions and dates agree when one is a prefix of the other (``2`` and
    ``2.1``, ``2021`` and ``2021-03``); a protocol without a version agrees
    with any version of it; other kinds agree when equal.
    """
    if kind in ("version", "date", "year"):
        sep = "." if kind == "version" else "-"
        a, b = _parts(asked, sep), _parts(found, sep)
        n = min(len(a), len(b))
        return n > 0 and a[:n] == b[:n]
    if kind == "protocol":
        fa, _, va = asked.partition(" ")
        fb, _, vb = found.partition(" ")
        return fa == fb and (not va or not vb or compatible("version", va, vb))
    return asked == found
