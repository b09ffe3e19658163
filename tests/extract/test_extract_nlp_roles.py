"""Whole names, titles kept as aliases, and role statements as relations (the LLM-free extractor)."""

from __future__ import annotations

import pytest

from kgrag.extract.nlp import NLPExtractor
from kgrag.extract.nlp_roles import Span, Tok, find_roles, name_spans
from kgrag.types import Chunk, Extraction

TESSALINE = "The chief executive officer (CEO) of Tessaline Robotics is Oren Valdt."


@pytest.fixture(scope="module")
def extractor() -> NLPExtractor:
    return NLPExtractor()


def run(extractor: NLPExtractor, text: str) -> Extraction:
    chunk = Chunk(id="chunk-roles", doc_id="doc-roles", content=text, tokens=40, order=0)
    return extractor.extract_sync(chunk)


def relation(extraction: Extraction, source: str, target: str) -> str:
    """The keywords of the relation ``source`` -> ``target`` (fails when there is none)."""
    found = [r for r in extraction.relations if (r.source, r.target) == (source, target)]
    assert found, [(r.source, r.target, r.keywords) for r in extraction.relations]
    return found[0].keywords


def test_copular_role_gives_the_whole_name_and_the_relation(extractor: NLPExtractor) -> None:
    out = run(extractor, TESSALINE)
    types = {e.name: e.type for e in out.entities}
    assert types.get("Oren Valdt") == "Person"
    assert "Valdt" not in types
    keywords = relation(out, "Oren Valdt", "Tessaline Robotics")
    assert "chief executive officer" in keywords and "CEO" in keywords


@pytest.mark.parametrize(
    "text",
    [
        "Oren Valdt is the chief executive officer of Tessaline Robotics.",
        "Oren Valdt, CEO of Tessaline Robotics, opened the fair.",
        "Tessaline Robotics's CEO, Oren Valdt, opened the fair.",
        "Tessaline Robotics's CEO is Oren Valdt.",
    ],
)
def test_other_role_shapes_give_the_same_relation(extractor: NLPExtractor, text: str) -> None:
    out = run(extractor, text)
    assert {e.name: e.type for e in out.entities}.get("Oren Valdt") == "Person"
    keywords = relation(out, "Oren Valdt", "Tessaline Robotics")
    assert "CEO" in keywords or "chief executive officer" in keywords
    assert not [r for r in out.relations if r.source == "Tessaline Robotics"]


def test_founder_and_place_roles(extractor: NLPExtractor) -> None:
    assert (
        relation(
            run(extractor, "The founder of Halvard Systems is Mira Solen."),
            "Mira Solen",
            "Halvard Systems",
        )
        == "founder"
    )
    assert relation(run(extractor, "Paris is the capital of France."), "Paris", "France") == (
        "capital"
    )


def test_a_title_is_kept_as_an_alias_of_the_bare_name(extractor: NLPExtractor) -> None:
    out = run(extractor, "Mr. Scrooge said nothing to the clerk.")
    scrooge = {e.name: e for e in out.entities}["Scrooge"]
    assert scrooge.type == "Person"
    assert scrooge.description.startswith("Also called Mr. Scrooge.")


def test_plain_sentences_keep_their_names(extractor: NLPExtractor) -> None:
    out = run(
        extractor, "Ebenezer Scrooge ran a counting-house in London with his clerk Bob Cratchit."
    )
    assert {e.name for e in out.entities} == {"Ebenezer Scrooge", "London", "Bob Cratchit"}
    assert all("Also called" not in e.description for e in out.entities)


def toks(*tagged: str) -> list[Tok]:
    """Tokens from "word/POS" strings, one space apart."""
    out, pos = [], 0
    for item in tagged:
        word, tag = item.rsplit("/", 1)
        out.append(Tok(word, tag, pos, pos + len(word)))
        pos += len(word) + 1
    return out


def test_name_spans_widen_over_proper_nouns_but_not_titles_or_roles() -> None:
    sentence = toks(
        "Mr./PROPN",
        "Oren/PROPN",
        "Valdt/PROPN",
        ",/PUNCT",
        "CEO/PROPN",
        "of/ADP",
        "Tessaline/PROPN",
        "Robotics/PROPN",
    )
    assert name_spans(sentence, [Span(2, 3)], []) == [Span(1, 3), Span(6, 8)]


def test_find_roles_reads_the_appositive() -> None:
    sentence = toks(
        "Oren/PROPN",
        "Valdt/PROPN",
        ",/PUNCT",
        "CEO/PROPN",
        "of/ADP",
        "Tessaline/PROPN",
        "Robotics/PROPN",
    )
    roles = find_roles(sentence, [Span(0, 2), Span(5, 7)])
    assert [(r.holder, r.role, r.of) for r in roles] == [(Span(0, 2), "CEO", Span(5, 7))]


def test_no_role_without_a_role_noun() -> None:
    sentence = toks(
        "Oren/PROPN", "Valdt/PROPN", "spoke/VERB", "of/ADP", "Tessaline/PROPN", "Robotics/PROPN"
    )
    assert find_roles(sentence, [Span(0, 2), Span(4, 6)]) == []


@pytest.mark.parametrize(
    "text", ["泰萨林机器人公司的首席执行官是王明远。", "王明远是泰萨林机器人公司的首席执行官。"]
)
def test_chinese_role_statements(extractor: NLPExtractor, text: str) -> None:
    out = run(extractor, text)
    types = {e.name: e.type for e in out.entities}
    assert types == {"王明远": "Person", "泰萨林机器人公司": "Organization"}
    assert relation(out, "王明远", "泰萨林机器人公司") == "首席执行官"


def test_chinese_role_keeps_jieba_types(extractor: NLPExtractor) -> None:
    out = run(extractor, "北京是中国的首都。")
    assert {e.name: e.type for e in out.entities} == {"北京": "Location", "中国": "Location"}
    assert relation(out, "北京", "中国") == "首都"


def test_chinese_role_needs_a_name_on_each_side(extractor: NLPExtractor) -> None:
    out = run(extractor, "继室是松平信定的女儿。")
    assert "继室" not in {e.name for e in out.entities}
