"""Finders for technical identifiers: versions, model numbers, protocols.

Each finder returns the :class:`Mention` objects of one kind in a text,
English or Chinese; :mod:`kgrag.retrieval.conditions.scan` resolves overlaps.
Word edges are ASCII-only, so ``型号X200`` and ``固件v2`` are found.
"""

from __future__ import annotations

import re

from kgrag.retrieval.conditions.constraint import Mention

A = r"(?<![A-Za-z0-9_])"  # an ASCII word starts here (a CJK neighbour is fine)
Z = r"(?![A-Za-z0-9_])"
_NUM = r"\d+(?:\.\d+){0,3}"
_CN_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}
_ORDINALS = {
    w: i
    for i, w in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth".split(), 1
    )
}
_VERSIONS = [
    re.compile(rf"(?<![A-Za-z0-9_.])[vV](?P<num>{_NUM}){Z}(?!\.\d)"),
    re.compile(rf"{A}(?:version|ver\.?|release|revision|rev\.?|build)\s*(?P<num>{_NUM}){Z}", re.I),
    re.compile(
        rf"{A}(?P<ord>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth"
        r"|\d{1,2}(?:st|nd|rd|th))\s+(?:version|release|revision|edition)" + Z,
        re.I,
    ),
    re.compile(r"第\s*(?P<cn>[零一二两三四五六七八九十]+|\d{1,3})\s*(?:版|个版本)"),
    re.compile(rf"版本\s*(?:号\s*)?[为是:：]?\s*[vV]?(?P<num>{_NUM})"),
    re.compile(rf"(?<![A-Za-z0-9_.])[vV]?(?P<num>{_NUM})\s*版(?!权)"),
]
# "Python 3.12", "FW-A 2.0", "firmware 2.1": a dotted number after a name or product word.
_BARE = re.compile(
    rf"(?:{A}[A-Z][\w-]*|{A}[Ff]irmware|{A}[Ss]oftware|固件|软件)\s*"
    rf"(?P<num>\d+\.\d+(?:\.\d+){{0,2}}){Z}(?![.%]\d|\s*%)"
)
_DIGIT = re.compile(r"\d")
_DOTTED = re.compile(r"\d\.\d")
_ORDINAL_WORDS = ("version", "release", "revision", "edition")
_VERSION_WORDS = ("ver", "release", "rev", "build")
_PRODUCT_WORD = re.compile(r"(firmware|software|固件|软件|系统)\s*$", re.I)


def _not_bare(text: str, m: re.Match[str]) -> bool:
    """Whether a dotted number after a word is a protocol's version or a quantity."""
    word = text[m.start() : m.start("num")].strip().lower()
    return word in _HEADS or bool(_UNIT_AFTER.match(text, m.end("num")))


def cn_number(text: str) -> int | None:
    """A small Chinese numeral (一 .. 九十九) or digits as an int."""
    if text.isdigit():
        return int(text)
    if not text or any(c not in _CN_DIGITS and c != "十" for c in text):
        return None
    if "十" not in text:
        return int("".join(str(_CN_DIGITS[c]) for c in text))
    tens, _, ones = text.partition("十")
    return (_CN_DIGITS[tens] if tens else 1) * 10 + (_CN_DIGITS[ones] if ones else 0)


def version_norm(number: str) -> str:
    """``2.0`` -> ``2``, ``02.10`` -> ``2.10``: integer parts, trailing zero parts dropped."""
    parts = [str(int(p)) for p in number.split(".") if p.isdigit()]
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def product_word(before: str) -> str:
    """The product word right before a version ("firmware" in "firmware v2"), or ""."""
    found = _PRODUCT_WORD.search(before)
    return found.group(1).lower() if found else ""


def _version_number(match: re.Match[str]) -> str | None:
    groups = match.groupdict()
    if groups.get("num"):
        return version_norm(groups["num"])
    if groups.get("cn"):
        value = cn_number(groups["cn"])
        return str(value) if value else None
    word = (groups.get("ord") or "").lower()
    value = _ORDINALS.get(word) or (int(word[:-2]) if word[:-2].isdigit() else None)
    return str(value) if value else None


def _patterns(text: str) -> list[re.Pattern[str]]:
    """The version patterns worth running on ``text`` (substring tests first)."""
    if _DIGIT.search(text) is None and "版" not in text:
        return [_VERSIONS[2]] if _has(text.lower(), _ORDINAL_WORDS) else []
    low = text.lower()
    out = [_VERSIONS[0]] + ([_VERSIONS[1]] if _has(low, _VERSION_WORDS) else [])
    out += [_VERSIONS[2]] if _has(low, _ORDINAL_WORDS) else []
    return out + (_VERSIONS[3:] if "版" in text else [])


def _has(low: str, words: tuple[str, ...]) -> bool:
    return any(w in low for w in words)


def versions(text: str) -> list[Mention]:
    """Versions: ``v2``, ``version 2.0``, ``second release``, ``第二版``, ``版本 3``, ``Python 3.12``.

    A dotted number after a protocol (``TLS 1.3``) or before a unit
    (``2.5 GHz``) is none.
    """
    found = [(m, m.span()) for p in _patterns(text) for m in p.finditer(text)]
    if _DOTTED.search(text):
        found += [(m, m.span("num")) for m in _BARE.finditer(text) if not _not_bare(text, m)]
    out = []
    for m, span in found:
        norm = _version_number(m)
        if norm:
            word = product_word(text[max(0, m.start() - 24) : m.start()])
            out.append(Mention("version", norm, "version", span, text[span[0] : span[1]], word))
    return out


_MODEL_DASHED = re.compile(r"(?<![A-Za-z0-9_-])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+(?![A-Za-z0-9_-])")
_MODEL_COMPACT = re.compile(r"(?<![A-Za-z0-9_-])[A-Z]{1,4}\d{2,5}[a-z]{0,2}(?![A-Za-z0-9_-])")
_DASHED_HINT, _COMPACT_HINT = re.compile(r"[A-Z0-9]-[A-Z0-9]"), re.compile(r"[A-Z]\d\d")
# Families of standards, not of products: "UTF-8" is no model number.
_NOT_MODELS = frozenset("UTF ISO RFC IEEE ANSI COVID SARS SHA AES MD ECMA CVE GB PM RGB".split())


def models(text: str) -> list[Mention]:
    """Model numbers: ``FW-A``, ``RTX-4090``, ``X200``, ``T480s``; the family is the leading letters.

    ``norm`` ignores dashes and case (``RTX-4090`` is ``RTX4090``).
    """
    out = []
    for pattern, hint in ((_MODEL_DASHED, _DASHED_HINT), (_MODEL_COMPACT, _COMPACT_HINT)):
        for m in pattern.finditer(text) if hint.search(text) else ():
            token = m.group(0)
            family = re.match(r"[A-Z]+", token)
            if family is None or family.group(0) in _NOT_MODELS or re.fullmatch(r"V\d+", token):
                continue
            norm = token.upper().replace("-", "")
            out.append(Mention("model", norm, f"model:{family.group(0)}", m.span(), token))
    return out


_PROTOCOL_NAMES = (
    "TLS SSL DTLS HTTPS HTTP QUIC TCP UDP IPv4 IPv6 IPsec SSH SFTP FTPS FTP SMTP IMAP POP3 DNS "
    "DHCP NTP MQTT AMQP CoAP gRPC WebSocket SNMP LDAPS LDAP Kerberos OAuth OpenID SAML RADIUS "
    "Syslog Modbus Zigbee Bluetooth Wi-Fi WiFi NFC LoRaWAN BGP OSPF SMB NFS RDP WPA 5G 4G LTE "
    "USB PCIe NVMe SATA Thunderbolt HDMI"
).split()
_ALIASES = {
    "transport layer security": "tls",
    "secure sockets layer": "ssl",
    "hypertext transfer protocol": "http",
    "secure shell": "ssh",
    "wifi": "wi-fi",
}
_NAMES = sorted((re.escape(n) for n in [*_PROTOCOL_NAMES, *_ALIASES]), key=len, reverse=True)
_PROTOCOL = re.compile(
    rf"(?<![A-Za-z0-9_-])(?P<name>{'|'.join(_NAMES)})"
    r"(?:(?:\s*[vV]|/|\s+)?(?P<ver>\d{1,2}(?:\.\d+){0,2})(?![\d.]\d|\d))?(?![A-Za-z0-9_-])",
    re.I,
)


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_UNIT_AFTER = re.compile(r"\s*(?:[kMGT]?(?:Hz|B|bps|W)|[kmc]?m|kg|mg|ms|s|V|A|%|°)(?![A-Za-z])")
_HEADS = frozenset(n.lower() for n in _PROTOCOL_NAMES)
_TRAILING_VERSION = re.compile(r"v?\d+$")


def _candidates(text: str) -> list[re.Match[str]]:
    """Protocol matches; the long pattern runs only on a text with a word that may start one."""
    low = text.lower()
    words = set(_TOKEN.findall(low))
    heads = words & _HEADS or {
        w for w in words if w[-1].isdigit() and _TRAILING_VERSION.sub("", w) in _HEADS
    }
    if heads or any(alias in low for alias in _ALIASES):
        return list(_PROTOCOL.finditer(text))
    return []


def protocols(text: str) -> list[Mention]:
    """Protocols and standards, with a version if written: ``TLS 1.3``, ``HTTP/2``, ``SNMPv3``."""
    out = []
    for m in _candidates(text):
        name = m.group("name").lower()
        family = _ALIASES.get(name, name)
        version = version_norm(m.group("ver")) if m.group("ver") else ""
        norm = f"{family} {version}" if version else family
        out.append(Mention("protocol", norm, f"protocol:{family}", m.span(), m.group(0)))
    return out
