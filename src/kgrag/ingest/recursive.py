"""Recursive, separator-based chunking measured in tokens (CJK aware).

The text is split on the first separator that occurs in it; pieces that
fit are merged greedily up to ``size`` tokens, carrying up to ``overlap``
tokens of trailing pieces into the next chunk; pieces that do not fit are
split again with the remaining separators. The empty separator splits
into single characters, so every text can be chunked.

A separator stays attached to the end of the piece before it (a CJK full
stop belongs to its sentence), so joining pieces restores the text and
no non-whitespace character is ever lost. English ``.`` is not a default
separator: it is too often part of numbers, abbreviations and names.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.errors import ConfigError
from kgrag.llm.tokenizer import Tokenizer

DEFAULT_SEPARATORS: tuple[str, ...] = (
    "\n\n",
    "\n",
    "。",
    "！",
    "？",
    "；",
    "，",
    " ",
    "",
)


def _split_keep(text: str, sep: str) -> list[str]:
    """Split ``text`` on ``sep``, keeping ``sep`` at the end of each piece."""
    if sep == "":
        return list(text)
    parts = text.split(sep)
    out = [p + sep for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return [p for p in out if p]


class _Splitter:
    def __init__(self, tokenizer: Tokenizer, size: int, overlap: int, separators: Sequence[str]):
        if size < 1 or not 0 <= overlap < size:
            raise ConfigError(f"need size >= 1 and 0 <= overlap < size, got {size}/{overlap}")
        self.tok, self.size, self.overlap = tokenizer, size, overlap
        self.separators = list(separators) or [""]
        if self.separators[-1] != "":
            self.separators.append("")

    def count(self, text: str) -> int:
        return self.tok.count(text)

    def split(self, text: str, separators: list[str]) -> list[str]:
        if self.count(text) <= self.size:
            return [text]
        index = next(i for i, s in enumerate(separators) if s == "" or s in text)
        sep, rest = separators[index], separators[index + 1 :]
        out: list[str] = []
        fitting: list[tuple[str, int]] = []
        for part in _split_keep(text, sep):
            n = self.count(part)
            if n <= self.size:
                fitting.append((part, n))
                continue
            out.extend(self.merge(fitting))
            fitting = []
            out.extend(self.split(part, rest) if rest else self.halve(part))
        out.extend(self.merge(fitting))
        return out

    def merge(self, parts: list[tuple[str, int]]) -> list[str]:
        """Greedy merge of pieces that each fit, with token overlap."""
        chunks: list[str] = []
        current: list[tuple[str, int]] = []
        total = 0
        for part, n in parts:
            if current and total + n > self.size:
                chunks.append("".join(p for p, _ in current))
                while current and (total > self.overlap or total + n > self.size):
                    total -= current.pop(0)[1]
            current.append((part, n))
            total += n
        if current:
            chunks.append("".join(p for p, _ in current))
        return chunks

    def halve(self, text: str) -> list[str]:
        """Last resort: split by characters until each half fits."""
        if len(text) <= 1 or self.count(text) <= self.size:
            return [text]
        mid = len(text) // 2
        return self.halve(text[:mid]) + self.halve(text[mid:])

    def finish(self, pieces: list[str]) -> list[str]:
        """Strip, drop empties, and re-split anything token merging overfilled."""
        out: list[str] = []
        for piece in pieces:
            piece = piece.strip()
            if not piece:
                continue
            if self.count(piece) <= self.size:
                out.append(piece)
            else:  # token counts are not additive; rare, but keep the bound
                out.extend(p.strip() for p in self.halve(piece) if p.strip())
        return out


def split_recursive(
    text: str,
    tokenizer: Tokenizer,
    size: int = 1200,
    overlap: int = 100,
    separators: Sequence[str] = DEFAULT_SEPARATORS,
) -> list[str]:
    """Chunk ``text`` into stripped, non-empty pieces of at most ``size`` tokens."""
    splitter = _Splitter(tokenizer, size, overlap, separators)
    return splitter.finish(splitter.split(text, splitter.separators))
