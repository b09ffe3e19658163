"""Constraints read from a question: rules for English and Chinese, the chat model, fallbacks."""

from __future__ import annotations

import pytest

from kgrag.errors import ModelServerError
from kgrag.llm.fake import FakeChatProvider
from kgrag.retrieval import QueryParam
from kgrag.retrieval.conditions import parse_conditions, read_conditions, rule_constraints, scan
from kgrag.retrieval.conditions.constraint import compatible
from kgrag.retrieval.keywords.source import KeywordSet
from kgrag.storage.sqlite import memory_storage
from tests.retrieval.corpus import make_parts


def kinds(constraints):
    return {(c.kind, c.norm) for c in constraints}


def test_english_question_versions_models_protocols_with_spans():
    q = "Does firmware v2 of FW-A support TLS 1.3?"
    found = rule_constraints(q, ["FW-A", "TLS"])
    assert kinds(found) == {("version", "2"), ("model", "FWA"), ("protocol", "tls 1.3")}
    by_kind = {c.kind: c for c in found}
    assert [q[slice(*c.span)] for c in found] == ["v2", "FW-A", "TLS 1.3"]
    assert by_kind["version"].describe() == "firmware v2"


def test_objects_come_from_keywords_and_named_entities_not_from_qualifiers():
    q = "What did Acme Networks report for March 2021 in Berlin, at 500 W?"
    found = rule_constraints(q, ["Acme Networks", "Berlin"], entity_names=["Acme Networks", "Mars"])
    assert kinds(found) == {
        ("date", "2021-03"),
        ("place", "berlin"),
        ("quantity", "500 W"),
        ("object", "acme networks"),
    }


@pytest.mark.parametrize(
    "text, kind, norm",
    [
        ("the second release", "version", "2"),
        ("version 2.0", "version", "2"),
        ("V2", "version", "2"),
        ("Python 3.12", "version", "3.12"),
        ("released on 5 March 2021", "date", "2021-03-05"),
        ("HTTP/2", "protocol", "http 2"),
        ("SNMPv3", "protocol", "snmp 3"),
        ("RTX-4090", "model", "RTX4090"),
        ("X200", "model", "X200"),
        ("1,500 W", "quantity", "1500 W"),
        ("in 2019, sales rose", "year", "2019"),
    ],
)
def test_english_qualifiers(text, kind, norm):
    assert [(m.kind, m.norm) for m in scan(text)] == [(kind, norm)]


@pytest.mark.parametrize(
    "text",
    ["it handles 2000 connections", "UTF-8 text", "the IPv6 stack", "a v2x sensor"],
)
def test_numbers_and_codes_that_are_no_qualifier_of_the_kind_guessed(text):
    assert all(m.kind == "protocol" for m in scan(text))  # IPv6 is a protocol, nothing else


@pytest.mark.parametrize(
    "text, expected",
    [
        ("FW-A 固件第二版支持 TLS 吗？", {("model", "FWA"), ("version", "2"), ("protocol", "tls")}),
        (
            "2021年3月发布的型号X200支持HTTP/2吗？",
            {("date", "2021-03"), ("model", "X200"), ("protocol", "http 2")},
        ),
        ("版本 3.0 在2020年发布", {("version", "3"), ("year", "2020")}),
        ("北京的门店用的是 2.1 版", {("place", "北京"), ("version", "2.1")}),
        ("功率为 500 瓦的型号", {("quantity", "500 瓦")}),
    ],
)
def test_chinese_qualifiers(text, expected):
    assert kinds(rule_constraints(text, [])) == expected


def test_chinese_version_keeps_its_product_word():
    (version,) = [c for c in rule_constraints("固件第二版支持什么？", []) if c.kind == "version"]
    assert version.value == "第二版" and version.describe() == "固件第二版"


def test_versions_and_dates_agree_by_prefix():
    assert compatible("version", "2", "2.1") and compatible("version", "2.1", "2")
    assert not compatible("version", "2", "1.2") and not compatible("version", "2.1", "2.2")
    assert compatible("year", "2021", "2021-03-05") and not compatible("year", "2021", "2020-12")
    assert compatible("protocol", "tls 1.3", "tls") and not compatible(
        "protocol", "tls 1.3", "tls 1.2"
    )


def test_a_model_reply_is_parsed_through_fences_and_prose():
    q = "Is TLS on for firmware 2.0 of X200 in 2021?"
    reply = (
        'Sure. ```json\n{"objects": ["X200"], "qualifiers": [{"kind": "version", '
        '"value": "2.0"}, {"kind": "year", "value": "2021"}, {"kind": "nonsense", '
        '"value": "x"}]}\n```'
    )
    found = parse_conditions(q, reply)
    assert kinds(found) == {("model", "X200"), ("version", "2"), ("year", "2021")}
    version = next(c for c in found if c.kind == "version")
    assert version.describe() == "firmware 2.0" and q[slice(*version.span)] == "2.0"


@pytest.mark.parametrize("reply", ["no JSON here", "[1, 2]", '{"answer": 42}', ""])
def test_replies_without_the_object_are_unusable(reply):
    assert parse_conditions("Does v2 support TLS?", reply) is None


def test_an_empty_reply_object_means_no_constraints():
    assert parse_conditions("Hello?", '{"objects": [], "qualifiers": []}') == []


class Garbling(FakeChatProvider):
    """The fake model, answering the conditions prompt with prose."""

    async def chat(self, request):
        result = await super().chat(request)
        if request.role == "conditions":
            result.text = "I think the question is about firmware."
        return result


class Failing(FakeChatProvider):
    async def chat(self, request):
        if request.role == "conditions":
            raise ModelServerError("503 from the model")
        return await super().chat(request)


async def _conditions(tmp_path, provider, question, **param):
    storage = memory_storage(tmp_path)
    await storage.open()
    try:
        parts = make_parts(storage, provider)
        kws = KeywordSet(low=["FW-A"], source="caller")
        return await read_conditions(question, kws, QueryParam(**param), parts.chat)
    finally:
        await storage.close()


async def test_the_fake_model_answers_the_conditions_prompt(tmp_path):
    found = await _conditions(
        tmp_path, None, "Does firmware v2 of FW-A support TLS in 2021?", conditions="llm"
    )
    assert found.source == "llm" and found.error is None
    assert kinds(found.asked) == {
        ("model", "FWA"),
        ("version", "2"),
        ("year", "2021"),
        ("protocol", "tls"),
    }


@pytest.mark.parametrize(
    "provider, error",
    [(Garbling(), "conditions reply unusable"), (Failing(), "conditions call failed")],
)
async def test_a_bad_or_failed_reply_falls_back_to_the_rules(tmp_path, provider, error):
    found = await _conditions(
        tmp_path, provider, "Does firmware v2 of FW-A support TLS?", conditions="llm"
    )
    assert found.source == "rules" and error in found.error
    assert kinds(found.asked) == {("model", "FWA"), ("version", "2"), ("protocol", "tls")}


async def test_rules_by_default_and_nothing_when_off(tmp_path):
    q = "Does firmware v2 of FW-A support TLS?"
    assert (await _conditions(tmp_path, Failing(), q)).source == "rules"
    off = await _conditions(tmp_path, Failing(), q, conditions="off")
    assert off.asked == [] and not off.active


async def test_the_conditions_call_is_cached_like_any_chat_call(parts):
    engine = parts.engine()
    q, param = "Does FW-A need License L on v2?", QueryParam(conditions="llm", ll_keywords=["FW-A"])
    first = await engine.query_data(q, param)
    second = await engine.query_data(q, param)
    assert first["conditions"]["source"] == "llm" and second["conditions"]["source"] == "cache"
    assert parts.chat_provider.roles() == ["conditions"]


def test_an_unknown_extractor_is_refused():
    from kgrag.errors import QueryError

    with pytest.raises(QueryError, match="conditions must be rules, llm or off"):
        QueryParam(conditions="magic").validate()
