"""Questions with their gold passages and answers, whatever file they came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class GoldQuestion:
    """One question: its gold passage keys (for recall) and gold answers (for accuracy)."""

    question: str
    gold: frozenset[str] = frozenset()
    answers: tuple[str, ...] = ()
    id: str = ""


@dataclass(slots=True)
class GoldSet:
    """The questions of one gold file and the passages they refer to.

    ``passages`` maps a passage key to its text, in file order: indexed one
    document per passage, the key becomes the document's ``file_path``.
    ``corpus_dir`` is a folder of documents to index instead (gold keys are
    then paths relative to it). ``format`` names the file's layout.
    """

    format: str
    questions: list[GoldQuestion]
    passages: dict[str, str] = field(default_factory=dict)
    corpus_dir: Path | None = None
    source: str = ""
    note: str = ""

    @property
    def has_corpus(self) -> bool:
        """Whether there is something to index (passages or a folder)."""
        return bool(self.passages) or self.corpus_dir is not None
