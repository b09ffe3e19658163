"""The Chinese items of the chain set: the same relations, stated and asked in Chinese."""

from __future__ import annotations

import random

from tests.chains.shapes import Pattern, Relation, _h

FOUNDED = Relation(
    "founded",
    "person",
    "company",
    ("{s}于{y}年创立了{o}。", "{o}由{s}于{y}年创办。", "{o}的创始人是{s}。"),
)
ACQUIRED = Relation(
    "acquired",
    "company",
    "company",
    ("{s}于{y}年收购了{o}。", "{y}年，{o}被{s}收购。", "{o}在{y}年被{s}收购后保留了原名。"),
)
CEO_OF = Relation(
    "CEO of",
    "person",
    "company",
    ("{s}是{o}的首席执行官。", "{o}的首席执行官是{s}。", "{o}现任首席执行官{s}很少接受采访。"),
)
LOCATED_IN = Relation(
    "located in",
    "company",
    "city",
    ("{s}总部位于{o}。", "{s}的总部设在{o}。", "总部在{o}的{s}有数百名员工。"),
)

ZH_PATTERNS = (
    Pattern((_h(FOUNDED), _h(LOCATED_IN)), "{a}创立的公司总部在哪个城市？"),
    Pattern((_h(ACQUIRED), _h(CEO_OF, False)), "被{a}收购的公司的首席执行官是谁？"),
    Pattern(
        (_h(FOUNDED), _h(ACQUIRED), _h(CEO_OF, False)),
        "{a}创立的公司所收购的公司的首席执行官是谁？",
    ),
    Pattern((_h(FOUNDED), _h(ACQUIRED), _h(LOCATED_IN)), "{a}创立的公司所收购的公司总部在哪里？"),
    Pattern((_h(CEO_OF), _h(ACQUIRED)), "{a}担任首席执行官的公司收购了哪家公司？"),
    Pattern((_h(ACQUIRED), _h(LOCATED_IN)), "被{a}收购的公司总部位于哪个城市？"),
)
FILLER_ZH = (
    "此事当时没有引起太多关注。",
    "分析人士预计此后几年会稳步增长。",
    "当地报纸在财经版报道了此事。",
)

SURNAME = ("林", "顾", "沈", "韩", "陆", "苏", "唐", "萧", "程", "叶")
GIVEN = ("墨远", "清岚", "知微", "若川", "景行", "思齐", "望舒", "南星", "怀瑾", "云帆")
STEM = ("星河", "远航", "青禾", "澜图", "北辰", "云杉", "明石", "天衡", "恒岳", "赤霄")
SUFFIX = ("科技", "机器人", "动力", "智能", "电子")
CITY = ("临川", "江屿", "雁州", "青阳", "沧浦", "白沙", "云陵", "泉安")


class ZhNames:
    """Invented Chinese names of each kind, never the same one twice within an item."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.used = rng, set[str]()

    def draw(self, kind: str) -> str:
        while True:
            name = self._one(kind)
            if name not in self.used and name[:2] not in {u[:2] for u in self.used}:
                self.used.add(name)
                return name

    def _one(self, kind: str) -> str:
        r = self.rng
        if kind == "person":
            return r.choice(SURNAME) + r.choice(GIVEN)
        if kind == "company":
            return r.choice(STEM) + r.choice(SUFFIX)
        return r.choice(CITY)
