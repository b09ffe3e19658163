"""Bytes of unknown encoding to text.

Order (the first that applies wins):

1. a byte order mark (UTF-8, UTF-32 LE/BE, UTF-16 LE/BE);
2. the caller's override (``input_encoding`` / ``kgrag index --encoding``);
3. a charset the file declares (HTML ``<meta charset>``), when it fits;
4. strict UTF-8, when the bytes hold no NUL (most files end here); or
   UTF-8 with a few bad sequences among many good ones (with a warning);
5. ``charset-normalizer`` on a sample of at most :data:`SAMPLE_BYTES`,
   re-ranked (see :func:`_rank`); the whole file is then decoded strictly
   with the guess. When the guess is not clearly better than another
   candidate that reads differently, the text is still decoded with the
   best guess and a warning names the encoding assumed.

Text that decodes to NULs or many control characters is refused as binary.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # charset-normalizer is imported when a file needs guessing
    from charset_normalizer.models import CharsetMatch

SAMPLE_BYTES = 128 * 1024  # what the detector reads of a bigger file
_BOMS = (  # UTF-32 before UTF-16: FF FE 00 00 starts with FF FE
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Decode with the superset the guess usually means (what Windows writes).
_WIDER = {"gb2312": "gb18030", "gbk": "gb18030", "shift_jis": "cp932", "euc_kr": "cp949"}
# When candidates tie, the more common encoding wins (and names a group).
_PRIOR = [
    "utf_8",
    "cp1252",
    "gb18030",
    "big5",
    "cp932",
    "shift_jis",
    "cp949",
    "euc_kr",
    "latin_1",
    "cp1250",
    "cp1251",
]
# Legacy code pages nobody writes today that the detector otherwise picks
# for short Western text (Swedish latin-1 as hp-roman8): never candidates.
_RARE = [
    "hp_roman8",
    "mac_cyrillic",
    "mac_greek",
    "mac_iceland",
    "mac_latin2",
    "mac_roman",
    "mac_turkish",
    "cp037",
    "cp273",
    "cp424",
    "cp500",
    "cp875",
    "cp1026",
    "cp1140",
    "cp856",
    "cp1006",
]
_TIE = 0.02  # scores this close are a tie, broken by _PRIOR
_UNSURE_MARGIN = 0.05  # a differing runner-up this close makes the guess uncertain
_UNSURE_CHAOS = 0.1  # text this "noisy" in the best encoding is uncertain too
_ODD = {"No", "Sc", "Sm", "So", "Sk", "Co", "Cn", "Cc", "Mn"}  # glued to letters: odd
_MOSTLY_UTF8 = 10  # valid multi-byte UTF-8 characters per bad sequence to call it UTF-8
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")


class UndecodableError(ValueError):
    """The bytes are not text in any encoding the detector knows."""


@dataclass(slots=True)
class Decoded:
    """Text, the codec that produced it and what had to be guessed."""

    text: str
    encoding: str
    warnings: list[str] = field(default_factory=list)


def decode_bytes(
    data: bytes, *, override: str | None = None, declared: str | None = None
) -> Decoded:
    """Decode ``data`` (see the module docstring for the order)."""
    decoded = _decode(data, override, declared)
    if _looks_binary(decoded.text):
        raise UndecodableError("looks like a binary file, not text")
    return decoded


def _decode(data: bytes, override: str | None, declared: str | None) -> Decoded:
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return _decode_as(data, codec, "byte order mark")
    if override:
        return _decode_as(data, override, "input_encoding")
    warnings: list[str] = []
    if declared:
        fitted = _fit_declared(data, declared, warnings)
        if fitted is not None:
            return fitted
    utf8 = None if b"\x00" in data else _utf8(data)
    if utf8 is not None:
        utf8.warnings[:0] = warnings
        return utf8
    detected = detect_and_decode(data)
    detected.warnings[:0] = warnings
    return detected


def _utf8(data: bytes) -> Decoded | None:
    """Strict UTF-8; or UTF-8 with a few bad bytes (a log with one cp1252 line); else None.

    Valid multi-byte UTF-8 sequences hardly occur by chance in legacy
    encodings, so text where they outnumber bad sequences ten to one is
    UTF-8 with damage, not something to guess about.
    """
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    good = len(text) - len(text.encode("ascii", "ignore")) - bad
    if good < _MOSTLY_UTF8 * bad or good < 8:
        return None
    warning = f"mostly utf-8; {bad} undecodable byte sequence(s) replaced with U+FFFD"
    return Decoded(text, "utf-8", [warning])


def _decode_as(data: bytes, codec: str, why: str) -> Decoded:
    """Decode with a codec we were told to use; bad bytes become U+FFFD, with a warning."""
    name = codecs.lookup(codec).name
    try:
        return Decoded(data.decode(codec), name)
    except UnicodeDecodeError as exc:
        text = data.decode(codec, errors="replace")
        warning = (
            f"bytes not valid {name} (first at offset {exc.start}, {why}) replaced with U+FFFD"
        )
        return Decoded(text, name, [warning])


def _fit_declared(data: bytes, declared: str, warnings: list[str]) -> Decoded | None:
    """Decode with the file's declared charset; ``None`` (and a warning) when it does not fit."""
    try:
        return Decoded(data.decode(declared), codecs.lookup(declared).name)
    except LookupError:
        warnings.append(f"declared charset {declared!r} is unknown; detected instead")
    except UnicodeDecodeError:
        warnings.append(f"declared charset {declared!r} does not fit the bytes; detected instead")
    return None


def _looks_binary(text: str) -> bool:
    """NULs, or control characters in more than 1 % of the first 64 K characters."""
    if "\x00" in text:
        return True
    head = text[:65536]
    return len(_CONTROL.findall(head)) > len(head) / 100


@dataclass(slots=True)
class _Guess:
    encoding: str  # codec to decode with (widened: gbk -> gb18030)
    detected: str  # what the detector named, tried when the wider codec does not fit
    unsure: bool
    others: list[str]  # runner-up encodings that read differently


def detect_and_decode(data: bytes) -> Decoded:
    """Run the detector (on a sample of a big input) and decode all of ``data``."""
    sample = _sample(data)
    guess = _detect(sample)
    decoded = _strict(data, guess)
    if decoded is None and sample is not data:
        guess = _detect(data)  # the sample misled: look at everything
        decoded = _strict(data, guess)
    if guess is None:
        raise UndecodableError(
            "looks like a binary file, not text (no text encoding fits "
            "every byte; --encoding reads it anyway)"
        )
    if decoded is None:
        decoded = _decode_as(data, guess.encoding, "detected")
    if guess.unsure:
        also = f" (other candidates: {', '.join(guess.others)})" if guess.others else ""
        decoded.warnings.insert(0, f"encoding not certain; read as {decoded.encoding}{also}")
    return decoded


def _strict(data: bytes, guess: _Guess | None) -> Decoded | None:
    """``data`` decoded strictly with the guess (or the narrower codec it widened)."""
    for codec in () if guess is None else dict.fromkeys([guess.encoding, guess.detected]):
        try:
            return Decoded(data.decode(codec), codecs.lookup(codec).name)
        except UnicodeDecodeError:
            continue
    return None


def _sample(data: bytes) -> bytes:
    """At most :data:`SAMPLE_BYTES` of ``data`` for the detector.

    ASCII-compatible data: from the line holding the first non-ASCII byte,
    cut after a line end. Data with NULs (UTF-16/32 without a BOM): from the
    start, cut at a multiple of four bytes so code units stay aligned.
    """
    if len(data) <= SAMPLE_BYTES:
        return data
    if b"\x00" in data[:4096]:
        return data[:SAMPLE_BYTES]
    first = re.search(rb"[\x80-\xff]", data)
    start = 0 if first is None else data.rfind(b"\n", 0, first.start()) + 1
    sample = data[start : start + SAMPLE_BYTES]
    cut = sample.rfind(b"\n", len(sample) - 4096)
    return sample if cut < 0 else sample[: cut + 1]


def _detect(data: bytes) -> _Guess | None:
    """charset-normalizer's candidates, re-ranked; ``None`` when none fits."""
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data, cp_exclusion=_RARE))
    if not matches:
        return None
    ranked = _rank(matches)
    best_score, best = ranked[0]
    close = [m for score, m in ranked[1:] if best_score - score < _UNSURE_MARGIN]
    unsure = best.chaos > _UNSURE_CHAOS or bool(close)
    name = _group_name(best)
    return _Guess(
        _WIDER.get(name, name), name, unsure, [_display(_group_name(m)) for m in close[:3]]
    )


def _rank(matches: list[CharsetMatch]) -> list[tuple[float, CharsetMatch]]:
    """Candidates best first.

    Each match (one per distinct decoded text) scores its coherence (how
    much the text looks like a language) minus its chaos (odd characters)
    minus the share of symbols glued to letters (``Wis³a``: Polish read as
    cp1252). charset-normalizer alone ranks by chaos first, which reads
    French cp1252 as cp1257. Scores within :data:`_TIE` are a tie, broken
    by :data:`_PRIOR` (cp1252 before cp1250, ...), then by the detector's order.
    """
    scored = [
        (m.coherence - m.chaos - _glued_symbols(str(m)[:16384]), i, m)
        for i, m in enumerate(matches)
    ]
    top = max(s for s, _, _ in scored)
    tied = sorted(
        (t for t in scored if t[0] >= top - _TIE), key=lambda t: (_prior(t[2]), -t[0], t[1])
    )
    rest = sorted((t for t in scored if t[0] < top - _TIE), key=lambda t: (-t[0], t[1]))
    return [(s, m) for s, _, m in tied + rest]


def _glued_symbols(text: str) -> float:
    """Share of non-ASCII characters that are symbols or digits touching a letter."""
    odd = total = 0
    for i, ch in enumerate(text):
        if ch < "\x80":
            continue
        total += 1
        if unicodedata.category(ch) in _ODD and any(
            c.isalpha() for c in text[max(0, i - 1) : i] + text[i + 1 : i + 2]
        ):
            odd += 1
    return odd / total if total else 0.0


def _prior(match: CharsetMatch) -> int:
    ranks = [_PRIOR.index(n) for n in (match.encoding, *match.could_be_from_charset) if n in _PRIOR]
    return min(ranks, default=len(_PRIOR))


def _group_name(match: CharsetMatch) -> str:
    """The most common of the encodings that give this match's text."""
    names = [match.encoding, *match.could_be_from_charset]
    return min(names, key=lambda n: _PRIOR.index(n) if n in _PRIOR else len(_PRIOR))


def _display(codec: str) -> str:
    return codecs.lookup(codec).name
