"""Finders for quantities with units and for places.

Quantities normalise to ``<number> <unit>`` (``1,500 W`` is ``1500 W``);
places are the capitalised names after "in", "at" or "near" in English
and the place names jieba tags (``ns``) in Chinese. Neither ever makes an
item conflict: a different wattage or town is often the answer itself.
"""

from __future__ import annotations

import re

from kgrag.retrieval.conditions.constraint import Mention

_UNITS = (
    "kWh Wh mAh Ah kW MW mW W kV mV V mA A GHz MHz kHz Hz TB GB MB KB kB PB TiB GiB MiB KiB "
    "Tbps Gbps Mbps Kbps kbps bps km cm mm nm m kg mg g lbs lb oz ms µs ns min hours hour h "
    "days day weeks week months month years year °C °F ℃ % dBm dB rpm fps px L ml mL cores core "
    "inches inch ft"
).split()
_CN_UNITS = (
    "千瓦 瓦 伏 毫安 安 赫兹 公里 千米 厘米 毫米 米 公斤 千克 克 吨 小时 分钟 秒 天 个月 岁 元 美元 核 英寸"
).split()
_UNIT = "|".join(re.escape(u) for u in sorted(_UNITS + _CN_UNITS, key=len, reverse=True))
_QUANTITY = re.compile(
    rf"(?<![A-Za-z0-9_.,])(?P<num>\d{{1,3}}(?:,\d{{3}})+|\d+(?:\.\d+)?)\s*(?P<unit>{_UNIT})"
    r"(?![A-Za-z0-9_])"
)
_PLURALS = {"hours": "hour", "days": "day", "weeks": "week", "months": "month", "years": "year"}
_PLURALS |= {"cores": "core", "inches": "inch", "lbs": "lb", "℃": "°C", "千米": "公里"}


def quantities(text: str) -> list[Mention]:
    """``500 W``, ``1.5 GHz``, ``10 Gbps``, ``3 years``, ``200 米``."""
    out = []
    for m in _QUANTITY.finditer(text):
        value = float(m.group("num").replace(",", ""))
        number = f"{value:g}" if value < 1e15 else m.group("num")
        unit = _PLURALS.get(m.group("unit"), m.group("unit"))
        norm = f"{number} {unit}"
        out.append(Mention("quantity", norm, f"quantity:{unit}", m.span(), m.group(0)))
    return out


_NOT_PLACES = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday english chinese french german
    spanish japanese python java javascript rust go""".split()
)
_PLACE_EN = re.compile(
    r"\b(?:in|at|near)\s+(?:the\s+)?(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2})(?![A-Za-z0-9-])"
)
_CJK = re.compile(r"[\u4e00-\u9fff]")


def places(text: str) -> list[Mention]:
    """Place names: ``in Paris``, ``near Lake Geneva``; Chinese ``ns`` words (``北京``)."""
    out = []
    for m in _PLACE_EN.finditer(text):
        name = m.group("name")
        if name.split()[0].lower() not in _NOT_PLACES:
            span = m.span("name")
            out.append(Mention("place", name.casefold(), "place", span, name))
    if _CJK.search(text):
        out += _cjk_places(text)
    return out


def _cjk_places(text: str) -> list[Mention]:
    import logging

    import jieba
    import jieba.posseg as pseg

    jieba.setLogLevel(logging.WARNING)
    out, at = [], 0
    for pair in pseg.lcut(text):
        word = pair.word
        start = text.find(word, at)
        at = start + len(word) if start >= 0 else at
        if pair.flag == "ns" and len(word) >= 2 and _CJK.search(word) and start >= 0:
            out.append(Mention("place", word, "place", (start, start + len(word)), word))
    return out
