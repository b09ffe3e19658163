"""The LLM-free extractor on small English and Chinese paragraphs."""

from __future__ import annotations

import pytest

from kgrag.extract.nlp import NLPExtractor, is_cjk
from kgrag.extract.nlp_analyzers import RegexAnalyzer, normalise_name
from kgrag.types import Chunk

EN = (
    "Ebenezer Scrooge ran a counting-house in London with his clerk Bob Cratchit. "
    "On Christmas Eve, Scrooge's nephew Fred invited him to dinner, but Scrooge refused. "
    "That night the ghost of Jacob Marley visited Scrooge and warned him. "
    "Microsoft and the United Nations were not founded yet."
)
ZH = (
    "刘备、关羽和张飞在桃园结义。后来刘备去了荆州，诸葛亮辅佐刘备建立了蜀汉。"
    "曹操在许昌挟天子以令诸侯。"
)


def chunk(text: str) -> Chunk:
    return Chunk(id="chunk-test", doc_id="doc-test", content=text, tokens=100, order=0,
                 file_path="story.txt")


@pytest.fixture(scope="module")
def extractor() -> NLPExtractor:
    return NLPExtractor()


def by_name(extraction):
    return {e.name: e for e in extraction.entities}


def test_english_entities_and_types(extractor):
    import spacy  # noqa: F401  (a declared dependency: failing to import is a failure)
    result = extractor.extract_sync(chunk(EN))
    names = by_name(result)
    for name in ("Ebenezer Scrooge", "Scrooge", "Bob Cratchit", "Jacob Marley", "London", "Fred"):
        assert name in names, sorted(names)
    assert names["London"].type == "Location"
    assert names["Bob Cratchit"].type == "Person"
    assert names["United Nations"].type == "Organization"  # leading "the" dropped
    assert "Christmas Eve" not in names  # DATE is dropped
    assert "Scrooge's" not in names
    assert names["Fred"].description.startswith("On Christmas Eve")
    assert all(e.chunk_id == "chunk-test" and e.file_path == "story.txt" for e in result.entities)


def test_english_relations(extractor):
    import spacy  # noqa: F401  (a declared dependency: failing to import is a failure)
    result = extractor.extract_sync(chunk(EN))
    pairs = {frozenset((r.source, r.target)): r for r in result.relations}
    rel = pairs[frozenset(("Jacob Marley", "Scrooge"))]
    assert "visited" in rel.keywords
    assert rel.description.startswith("That night")
    assert rel.weight == 1.0 and rel.chunk_id == "chunk-test"
    assert frozenset(("Ebenezer Scrooge", "London")) in pairs


def test_chinese_entities_and_relations(extractor):
    result = extractor.extract_sync(chunk(ZH))
    names = by_name(result)
    for name in ("刘备", "关羽", "张飞", "诸葛亮", "曹操"):
        assert names[name].type == "Person", names.get(name)
    assert names["荆州"].type == "Location"
    assert "桃园结义" in names["关羽"].description
    pairs = {frozenset((r.source, r.target)) for r in result.relations}
    assert frozenset(("刘备", "关羽")) in pairs
    assert frozenset(("诸葛亮", "刘备")) in pairs


async def test_async_extract_matches_sync(extractor):
    sync = extractor.extract_sync(chunk(ZH))
    result = await extractor.extract(chunk(ZH))
    assert result == sync


def test_regex_fallback():
    sentences = RegexAnalyzer().analyze(
        "Yesterday Mr. Jacob Marley went to the Bank of England. He met Scrooge there.")
    names = {m.name: m.type for s in sentences for m in s.mentions}
    assert names["Jacob Marley"] == "Person"
    assert "Bank of England" in names and "Scrooge" in names
    assert "Yesterday" not in names and "He" not in names


def test_helpers():
    assert normalise_name("  “Scrooge’s”  ") == "Scrooge"
    assert normalise_name("the Cratchits'") == "Cratchits"
    assert normalise_name("SCROOGE") == "Scrooge"
    assert normalise_name("MARLEY'S GHOST") == "Marley's Ghost"
    assert normalise_name("Big Hero 6 (film)") == "Big Hero 6 (film)"  # a bracket with its partner stays
    assert normalise_name('Dick" Humbert') == normalise_name('"Dick" Humbert') == "Dick Humbert"
    assert normalise_name("(Pterocarya") == "Pterocarya"
    assert normalise_name("《三国演义》") == "三国演义"
    assert is_cjk(ZH) and not is_cjk(EN)


def test_a_title_line_does_not_run_into_the_first_sentence(extractor):
    text = ('Dick Humbert\nRichard Elmer "Dick" Humbert was an American football player for the '
            "Philadelphia Eagles.\nHe was born in\nRichmond, Virginia.")
    names = set(by_name(extractor.extract_sync(chunk(text))))
    assert {"Dick Humbert", "Philadelphia Eagles"} <= names
    assert not any("\n" in n or '"' in n or n.startswith("Dick Humbert ") for n in names)


def test_text_blocks_keep_every_line_and_wrapped_prose_together():
    from hypothesis import given, strategies as st

    from kgrag.extract.nlp_analyzers import text_blocks

    assert text_blocks("Cotula\nCotula is a genus of plants.") == ["Cotula", "Cotula is a genus of plants."]
    wrapped = "Marley was dead, to begin with. There is no doubt whatever about\nthat. The register of"
    assert text_blocks(wrapped) == [wrapped]

    @given(st.lists(st.text(alphabet="ab .\n", max_size=80), max_size=6))
    def lines_kept_in_order(parts):
        text = "\n".join(parts)
        kept = [ln for b in text_blocks(text) for ln in b.split("\n")]
        assert kept == [ln for ln in text.split("\n") if ln.strip()]

    lines_kept_in_order()


def test_a_title_becomes_an_entity_tied_to_the_lead_sentence(extractor):
    text = ("Pterocarya (genus)\nPterocarya is a genus of deciduous trees in the walnut family, native to Asia.\n\n"
            "Habitat and range\nThey grow along rivers.")
    result = extractor.extract_sync(chunk(text))
    names = by_name(result)
    assert "Pterocarya (genus)" in names and "walnut family" in names["Pterocarya (genus)"].description
    assert ("Pterocarya (genus)", "Asia") in {(r.source, r.target) for r in result.relations}
    assert "Habitat and range" in names  # a section heading, with nothing after it to pair with
    caption = extractor.extract_sync(chunk("[Illustration: Scrooge and the Ghost]\nThey flew over London."))
    assert not any(n.startswith("Illustration") for n in by_name(caption))
    plain = NLPExtractor(headings=False).extract_sync(chunk(text))
    assert "Habitat and range" not in by_name(plain)
