"""The LLM-free extractor on small English and Chinese paragraphs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    return Chunk(
        id="chunk-test", doc_id="doc-test", content=text, tokens=100, order=0, file_path="story.txt"
    )


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
        "Yesterday Mr. Jacob Marley went to the Bank of England. He met Scrooge there."
    )
    names = {m.name: m.type for s in sentences for m in s.mentions}
    assert names["Jacob Marley"] == "Person"
    assert "Bank of England" in names and "Scrooge" in names
    assert "Yesterday" not in names and "He" not in names


def test_helpers():
    assert normalise_name("  “Scrooge’s”  ") == "Scrooge"
    assert normalise_name("the Cratchits'") == "Cratchits"
    assert normalise_name("SCROOGE") == "Scrooge"
    assert normalise_name("MARLEY'S GHOST") == "Marley's Ghost"
    assert (
        normalise_name("Big Hero 6 (film)") == "Big Hero 6 (film)"
    )  # a bracket with its partner stays
    assert normalise_name('Dick" Humbert') == normalise_name('"Dick" Humbert') == "Dick Humbert"
    assert normalise_name("(Pterocarya") == "Pterocarya"
    assert normalise_name("《三国演义》") == "三国演义"
    assert is_cjk(ZH) and not is_cjk(EN)


def test_a_title_line_does_not_run_into_the_first_sentence(extractor):
    text = (
        'Dick Humbert\nRichard Elmer "Dick" Humbert was an American football player for the '
        "Philadelphia Eagles.\nHe was born in\nRichmond, Virginia."
    )
    names = set(by_name(extractor.extract_sync(chunk(text))))
    assert {"Dick Humbert", "Philadelphia Eagles"} <= names
    assert not any("\n" in n or '"' in n or n.startswith("Dick Humbert ") for n in names)


def test_text_blocks_keep_every_line_and_wrapped_prose_together():
    from hypothesis import given
    from hypothesis import strategies as st

    from kgrag.extract.nlp_analyzers import text_blocks

    assert text_blocks("Cotula\nCotula is a genus of plants.") == [
        "Cotula",
        "Cotula is a genus of plants.",
    ]
    wrapped = (
        "Marley was dead, to begin with. There is no doubt whatever about\nthat. The register of"
    )
    assert text_blocks(wrapped) == [wrapped]

    @given(st.lists(st.text(alphabet="ab .\n", max_size=80), max_size=6))
    def lines_kept_in_order(parts):
        text = "\n".join(parts)
        kept = [ln for b in text_blocks(text) for ln in b.split("\n")]
        assert kept == [ln for ln in text.split("\n") if ln.strip()]

    lines_kept_in_order()


def test_a_title_becomes_an_entity_tied_to_the_lead_sentence(extractor):
    text = (
        "Pterocarya (genus)\nPterocarya is a genus of deciduous trees in the walnut family, native to Asia.\n\n"
        "Habitat and range\nThey grow along rivers."
    )
    result = extractor.extract_sync(chunk(text))
    names = by_name(result)
    assert (
        "Pterocarya (genus)" in names and "walnut family" in names["Pterocarya (genus)"].description
    )
    assert ("Pterocarya (genus)", "Asia") in {(r.source, r.target) for r in result.relations}
    assert "Habitat and range" in names  # a section heading, with nothing after it to pair with
    caption = extractor.extract_sync(
        chunk("[Illustration: Scrooge and the Ghost]\nThey flew over London.")
    )
    assert not any(n.startswith("Illustration") for n in by_name(caption))
    plain = NLPExtractor(headings=False).extract_sync(chunk(text))
    assert "Habitat and range" not in by_name(plain)


MARKDOWN = """# Zephyr Robotics

## History

Zephyr Robotics was founded by *Tomas Becker* and **Ana Lima** in 2014. The company is based in Lisbon.

| Product | Year | Purpose |
|---------|------|---------|
| Falcon | 2016 | Drone inspection |

```python
def preflight(robot):
    return robot.check()
```

Call `preflight(robot)` before each flight. See [the manual](https://example.com/manual) by _Maria Souza_.

<div class="note">Write to Acme Labs for support.</div>
"""


def relation_pairs(result):
    return {frozenset((r.source, r.target)) for r in result.relations}


def test_markdown_emphasis_does_not_split_the_founders(extractor):
    result = extractor.extract_sync(
        chunk("Zephyr Robotics was founded by *Tomas Becker* and **Ana Lima** in 2014.")
    )
    names = by_name(result)
    assert names["Zephyr Robotics"].type == "Organization"
    assert names["Tomas Becker"].type == names["Ana Lima"].type == "Person"
    for founder in ("Tomas Becker", "Ana Lima"):
        assert frozenset(("Zephyr Robotics", founder)) in relation_pairs(result)


def test_no_entity_name_holds_markup(extractor):
    result = extractor.extract_sync(chunk(MARKDOWN))
    names = by_name(result)
    assert not [n for n in names if any(c in n for c in "#|*`<>[]_") or "(" in n]
    assert {"Zephyr Robotics", "Tomas Becker", "Ana Lima", "Lisbon", "Maria Souza"} <= set(names)
    assert "History" in names  # a section heading, without its hashes
    assert not any("Product" in n or "preflight" in n or "robot" in n for n in names)
    assert frozenset(("Zephyr Robotics", "Ana Lima")) in relation_pairs(result)


NAME_PARTS = st.sampled_from(["Tomas Becker", "Ana Lima", "Zephyr Robotics", "Lisbon", "Acme Labs"])
WRAPS = st.sampled_from(
    [
        "*{}*",
        "**{}**",
        "_{}_",
        "`{}`",
        "[{}](http://x.org/a_b)",
        "<b>{}</b>",
        "| {} | 2014 |",
        "# {}",
        "## {} history",
        "{}(robot",
        "~~{}~~",
        "{}",
    ]
)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(WRAPS, NAME_PARTS), min_size=1, max_size=6))
def test_names_never_carry_markup_whatever_the_markdown(extractor, parts):
    lines = [
        wrap.format(name) + (" met the team." if i % 2 else "")
        for i, (wrap, name) in enumerate(parts)
    ]
    names = by_name(extractor.extract_sync(chunk("\n".join(lines))))
    for name in names:
        assert not any(c in name for c in "#|*`<>_~") and name.count("(") == name.count(")"), name


CAROL = """Title: A Christmas Carol

Author: Charles Dickens

  "How now?" said Scrooge, caustic
    and cold as ever. "What do you
    want with me?"

Sometimes people new to the business called Scrooge Scrooge, and sometimes
Marley, but he answered to both names. Scrooge muttered, with an unusual
catching in his voice, that it was a pimple. Mr. Fezziwig laughed.
"""


def test_clause_fragments_and_labels_are_no_entities(extractor):
    names = by_name(extractor.extract_sync(chunk(CAROL)))
    assert {"Scrooge", "Marley", "Charles Dickens", "Christmas Carol"} <= set(names)
    assert names["Charles Dickens"].type == "Person"
    bad = [
        n
        for n in names
        if ":" in n
        or "?" in n
        or "," in n
        or n.startswith(("Author", "Title"))
        or n in ("Scrooge Scrooge", "Scrooge muttered", "What do you")
    ]
    assert not bad, bad


def test_the_cut_edges_of_a_token_window_are_no_headings(extractor):
    window = (
        " for Scrooge quite as hardily as this\n"
        "The fog came pouring in at every chink and keyhole, and was so dense without.\n"
        "In half a minute Mrs. Cratchit"
    )
    names = by_name(extractor.extract_sync(chunk(window)))
    assert "Scrooge" in names
    assert not [n for n in names if n.startswith(("for ", "In half")) or " quite" in n]


def test_type_corrections_in_context(extractor):
    text = (
        "Zephyr Robotics sells drones to the Faroe Islands and the Azores Archipelago. "
        "Mrs. Cratchit met Dr. Watson at Acme Labs Inc."
    )
    names = by_name(extractor.extract_sync(chunk(text)))
    assert names["Zephyr Robotics"].type == "Organization"
    assert names["Faroe Islands"].type == names["Azores Archipelago"].type == "Location"
    assert names["Acme Labs Inc"].type == "Organization"


def test_a_glued_bracket_name_is_kept_and_inline_code_is_not(extractor):
    text = (
        "Sulli was a South Korean actress and model. She is a former member of South Korean girl "
        "group f(x). On August 7, 2015 she left.\nCall `Robot(x)` before each flight."
    )
    names = by_name(extractor.extract_sync(chunk(text)))
    assert "Sulli" in names
    assert not [n for n in names if "Robot" in n or (n.startswith("f(") and n != "f(x)")]
