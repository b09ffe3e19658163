"""Items judged against a question's constraints; coverage and the note on what is missing."""

from __future__ import annotations

import pytest

from kgrag.retrieval.conditions import judge, missing_note, rule_constraints
from kgrag.retrieval.conditions.coverage import coverage


def verdicts(question, items, keywords=()):
    asked = rule_constraints(question, list(keywords))
    return {key: judge(asked, "chunk", key, text).verdict for key, text in items.items()}


def report(question, items, keywords=()):
    """(coverage by constraint value, note) with every item in the context."""
    asked = rule_constraints(question, list(keywords))
    judged = [judge(asked, "chunk", key, text) for key, text in items.items()]
    cov = coverage(asked, judged, {("chunk", key) for key in items})
    chinese = any("\u4e00" <= ch <= "\u9fff" for ch in question)
    return {e.constraint.value: e for e in cov}, missing_note(cov, judged, chinese)


def test_two_products_of_one_kind_with_the_same_attribute():
    items = {
        "a": "FW-A sends alerts over TLS.",
        "b": "FW-B sends alerts over TLS.",
        "both": "FW-A and FW-B both send alerts over TLS.",
    }
    assert verdicts("Does FW-A send alerts over TLS?", items) == {
        "a": "applies",
        "b": "conflicts",
        "both": "applies",
    }


def test_two_versions():
    items = {
        "v1": "Firmware v1 of FW-A supports TLS.",
        "v2": "FW-A firmware version 2.0 supports TLS.",
        "v21": "FW-A v2.1 fixed the TLS handshake.",
    }
    assert verdicts("Does firmware v2 of FW-A support TLS?", items) == {
        "v1": "conflicts",
        "v2": "applies",
        "v21": "applies",  # 2.1 is a release of version 2
    }


def test_two_years():
    items = {
        "2020": "In 2020, Acme shipped 400 units of the X200.",
        "2021": "Acme shipped 650 units of the X200 in 2021.",
        "march": "Sales of the X200 rose in March 2021.",
    }
    assert verdicts("How many X200 did Acme ship in 2021?", items, ["Acme", "X200"]) == {
        "2020": "conflicts",
        "2021": "applies",
        "march": "applies",
    }


def test_a_year_beside_no_model_or_version_does_not_make_items_conflict():
    # In a multi-hop question the year qualifies one hop; the other hop's page has its own dates.
    q = "The Curse of the Jade Scorpion is a 2001 film featuring an American actress who starred in what?"
    asked = rule_constraints(q, ["Curse of the Jade Scorpion", "American"])
    (year,) = [c for c in asked if c.kind == "year"]
    assert not year.exclusive and year.to_dict()["exclusive"] is False
    j = judge(asked, "chunk", "hunt", "Helen Hunt (born June 15, 1963) is an American actress.")
    assert j.verdict == "unknown" and j.reasons == ["names 1963-06-15, not 2001"]


def test_a_statement_without_a_version_is_unknown_for_a_versioned_question():
    items = {"plain": "FW-A supports TLS.", "other": "The Log Platform stores alerts."}
    assert verdicts("Does firmware v2 of FW-A support TLS?", items) == {
        "plain": "unknown",
        "other": "unknown",
    }
    assert verdicts("Does FW-A support TLS?", items) == {"plain": "applies", "other": "unknown"}


def test_a_question_that_needs_two_conditions():
    q = "Which license does FW-A need for TLS on firmware v2?"
    items = {
        "good": "With firmware v2, the TLS output of FW-A requires License L.",
        "old": "With firmware v1, the TLS output of FW-A requires License K.",
        "other": "With firmware v2, the TLS output of FW-B requires License M.",
        "plain": "The TLS output of FW-A is licensed.",
    }
    assert verdicts(q, items) == {
        "good": "applies",
        "old": "conflicts",
        "other": "conflicts",
        "plain": "unknown",
    }
    cov, note = report(q, items)
    assert {v: e.status for v, e in cov.items()} == {
        "FW-A": "covered",
        "TLS": "covered",
        "v2": "covered",
    }
    assert cov["v2"].items == ["good"] and note == ""


def test_one_of_two_conditions_missing_is_said():
    q = "Which license does FW-B need for TLS on firmware v2?"
    items = {
        "a2": "With firmware v2, the TLS output of FW-A requires License L.",
        "b": "The TLS output of FW-B requires License M.",
    }
    assert verdicts(q, items) == {"a2": "conflicts", "b": "unknown"}
    cov, note = report(q, items)
    assert cov["FW-B"].status == "missing" and cov["FW-B"].unknown == ["b"]
    assert cov["v2"].status == "conflicting-only" and cov["v2"].conflicting == ["a2"]
    assert note == "The sources describe TLS and firmware v2 for FW-A only, not for FW-B."


def test_the_missing_version_is_named_with_what_the_sources_describe():
    q = "Does firmware v2 of FW-A support TLS?"
    items = {"v1": "Firmware v1 of FW-A sends alerts over TLS.", "plain": "FW-A is a firewall."}
    cov, note = report(q, items)
    assert cov["v2"].status == "missing" and cov["TLS"].status == "conflicting-only"
    assert note == "The sources describe TLS for firmware v1 only, not for firmware v2."


def test_a_merged_description_applies_but_covers_only_its_own_statements():
    q = "Does firmware v2 of FW-A support TLS?"
    merged = "Firmware v1 of FW-A sends alerts over TLS.\nFirmware v2 of FW-A adds a web console."
    asked = rule_constraints(q, [])
    j = judge(asked, "entity", "FW-A", merged)
    assert j.verdict == "applies"
    assert ("protocol", "tls") in j.matched and ("protocol", "tls") not in j.covers
    assert ("version", "2") in j.covers


def test_nothing_in_the_sources_is_said_plainly():
    cov, note = report("What changed in 2019?", {"x": "The plant opened a new line."})
    assert cov["2019"].status == "missing" and note == "Nothing in the sources covers 2019."


def test_plain_objects_never_make_a_note():
    cov, note = report("Who is Scrooge?", {"x": "Marley was dead."}, ["Scrooge"])
    assert cov["Scrooge"].status == "missing" and note == ""


def test_protocol_versions_conflict_protocol_families_do_not():
    items = {
        "12": "FW-A offers TLS 1.2 only.",
        "udp": "FW-A also speaks UDP.",
        "tls": "FW-A has TLS.",
    }
    assert verdicts("Does FW-A offer TLS 1.3?", items) == {
        "12": "conflicts",
        "udp": "applies",
        "tls": "applies",
    }


def test_quantities_and_places_never_conflict():
    items = {"650": "The X200 draws 650 W in Paris.", "500": "The X200 draws 500 W."}
    assert verdicts("Does the X200 draw 500 W in Lyon?", items) == {
        "650": "applies",
        "500": "applies",
    }
    cov, note = report("Does the X200 draw 500 W in Lyon?", items)
    assert cov["500 W"].items == ["500"] and cov["Lyon"].status == "missing"
    assert note == "Nothing in the sources covers Lyon."


@pytest.mark.parametrize(
    "question, items, expected",
    [
        (
            "FW-A 固件第二版支持 TLS 吗？",
            {
                "v1": "FW-A 固件 v1 支持 TLS。",
                "v2": "FW-A 第二版增加了网页控制台。",
                "plain": "FW-A 是一款防火墙。",
            },
            {"v1": "conflicts", "v2": "applies", "plain": "unknown"},
        ),
        (
            "型号 X200 支持 HTTP/2 吗？",
            {"x200": "型号X200支持HTTP/2。", "x300": "型号X300也支持HTTP/2。"},
            {"x200": "applies", "x300": "conflicts"},
        ),
        (
            "2021年 X200 的销量是多少？",
            {"2020": "2020年 X200 销量为 500 台。", "2021": "X200 在2021年3月的销量翻倍。"},
            {"2020": "conflicts", "2021": "applies"},
        ),
    ],
)
def test_chinese_items(question, items, expected):
    assert verdicts(question, items) == expected


def test_a_chinese_question_gets_a_chinese_note():
    q = "FW-A 固件第二版支持 TLS 吗？"
    _, note = report(q, {"v1": "FW-A 固件 v1 支持 TLS。", "plain": "FW-A 是一款防火墙。"})
    assert note == "资料只描述了固件v1的TLS，没有涉及固件第二版。"
