"""Markup stripping, span trimming, headings and type corrections of the LLM-free extractor."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.extract.nlp_markup import (
    has_markup,
    is_code_line,
    strip_emphasis,
    strip_markup,
    table_row,
)
from kgrag.extract.nlp_names import (
    collapse_repeat,
    corrected_type,
    heading_shape,
    is_clause,
    reads_as_title,
    split_label,
    trim_span,
)

MARKUP = "#|*`<>{}=\\~"


def test_strip_markup_keeps_the_text_of_markdown():
    md = (
        "# Zephyr Robotics\n\n## History\n\nFounded by *Tomas Becker* and **Ana Lima**, see "
        "[the manual](https://example.com/m) and ![logo](logo.png).\n\n"
        "| Product | Year |\n|---------|------|\n| Falcon | 2016 |\n\n"
        "```python\ndef preflight(robot):\n    return robot.check()\n```\n"
        '> quoted _Maria Souza_\n- a list item\n<div class="x">Acme&amp;Co</div>\n---\n'
    )
    text = strip_markup(md)
    assert "Founded by Tomas Becker and Ana Lima, see the manual and logo." in text
    assert "\nZephyr Robotics\n" in text and "\nHistory\n" in text
    assert (
        "Falcon, 2016." in text and "Product" not in text
    )  # a header row goes, a body row is a sentence
    assert "preflight" not in text and "def " not in text
    assert "quoted Maria Souza" in text and "a list item" in text and "Acme&Co" in text
    assert not any(c in text for c in "#|*`<>") and "---" not in text


def test_gutenberg_italics_and_decoration():
    assert strip_emphasis("_IN COLOUR_") == "IN COLOUR"
    assert strip_emphasis("When _I_ have learned") == "When I have learned"
    assert (
        strip_emphasis('_"How now?" said Scrooge,\n  "What?"_]')
        == '"How now?" said Scrooge,\n  "What?"]'
    )
    assert "*" not in strip_markup("*** START OF THE PROJECT GUTENBERG EBOOK ***")
    assert strip_emphasis("snake_case_name and a_b") == "snake_case_name and a_b"
    assert strip_emphasis("no\n\n_open across a blank line") == "no\n\n_open across a blank line"


def test_code_lines_and_table_rows():
    for line in (
        "def preflight(robot):",
        "import os",
        "x = compute(3)",
        "robot.check()",
        "}",
        "$ pip install x",
        "if (a == b) {",
    ):
        assert is_code_line(line), line
    for line in (
        "Scrooge was his sole executor; his sole friend;",
        'Tim Cratchit ("Tiny Tim"), a cripple.',
        "return to London, as he did",
        "STAVE ONE--MARLEY'S GHOST",
        "刘备（字玄德）",
    ):
        assert not is_code_line(line), line
    assert table_row("| Falcon | 2016 | Drone |") == "Falcon, 2016, Drone."
    assert table_row("Falcon | 2016 | Drone") == "Falcon, 2016, Drone."
    assert table_row("a plain line") is None


PLAIN = st.text(alphabet="ABCDEFGH abcdefgh.,'\n", max_size=200)


@given(PLAIN)
def test_plain_text_passes_through_unchanged(text):
    assert strip_markup(text) == text


@given(st.text(max_size=60))
def test_strip_markup_never_fails_or_grows(text):
    assert len(strip_markup(text)) <= len(text) + 2 * text.count(
        "#"
    )  # a heading gets its own lines


@given(
    st.sampled_from(["*", "**", "_", "__", "~~", "***"]),
    st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=1, max_size=3),
    st.sampled_from(["", ".", ",", ")"]),
)
def test_emphasis_markers_go_and_their_words_stay(marker, words, after):
    phrase = " ".join(words)
    assert strip_emphasis(f"by {marker}{phrase}{marker}{after} and") == f"by {phrase}{after} and"


def test_has_markup():
    for name in (
        "## History",
        "| Product | Year | Purpose |",
        "preflight(robot",
        "*Tomas Becker*",
        "`code`",
        "<div>",
        "manual](https://example.com",
        "a_b",
        "Acme [Labs",
        "f()",
    ):
        assert has_markup(name), name
    for name in (
        "Tomas Becker",
        "Big Hero 6 (film)",
        "U.S",
        "J. B. Lippincott Company",
        "苹果(中国)",
        "Jean-Charles Cazin",
        "Marley's Ghost",
    ):
        assert not has_markup(name), name


@settings(max_examples=200)
@given(st.text(alphabet="ab #|*`<>", min_size=1, max_size=12))
def test_any_markup_character_flags_a_name(name):
    assert has_markup(name) == any(c in name for c in MARKUP)


def tok(words: str, pos: str) -> list[tuple[str, str, bool]]:
    """Tokens from space-separated words and a space-separated POS string."""
    ws, ps = words.split(), pos.split()
    return [(w, p, i < len(ws) - 1) for i, (w, p) in enumerate(zip(ws, ps, strict=True))]


def span(tokens, lo_hi):
    return " ".join(t[0] for t in tokens[slice(*lo_hi)])


def test_trim_span_cases():
    cases = [
        ("In half a minute Mrs. Cratchit", "ADP DET DET NOUN PROPN PROPN", "Mrs. Cratchit"),
        ("Scrooge muttered", "PROPN VERB", "Scrooge"),
        ("for Scrooge quite", "ADP PROPN ADV", "Scrooge"),
        ("Roger de Coverley", "PROPN X PROPN", "Roger de Coverley"),
        ("Bank of England", "PROPN ADP PROPN", "Bank of England"),
        ("Will Smith", "AUX PROPN", "Will Smith"),
        ("the niece", "DET NOUN", ""),
    ]
    for words, pos, want in cases:
        tokens = tok(words, pos)
        assert span(tokens, trim_span(tokens)) == want, words
    hyphen = [
        ("Chan", "PROPN", True),
        ("Wen", "PROPN", False),
        ("-", "PUNCT", False),
        ("ting", "NOUN", False),
    ]
    assert trim_span(hyphen) == (0, 4)
    bracket = tok("American Football League ( AFL", "PROPN PROPN PROPN PUNCT PROPN")
    assert span(bracket, trim_span(bracket)) == "American Football League"


POS = st.sampled_from(["PROPN", "NOUN", "VERB", "ADP", "DET", "ADV", "PUNCT", "AUX", "ADJ"])
WORD = st.sampled_from(
    ["Scrooge", "quite", "of", "In", "Mrs.", "muttered", "2014", ",", "(", "Labs"]
)


@given(st.lists(st.tuples(WORD, POS, st.booleans()), max_size=8))
def test_trim_span_is_a_stable_subrange(tokens):
    lo, hi = trim_span(tokens)
    assert 0 <= lo <= hi <= len(tokens)
    if hi > lo:
        inner = tokens[lo:hi]
        assert trim_span(inner) == (0, hi - lo)
        assert inner[0][1] != "PUNCT" and inner[-1][1] != "PUNCT"


def test_clauses_labels_and_repeats():
    assert is_clause(tok("How now ? said Scrooge", "ADV ADV PUNCT VERB PROPN"), "PERSON")
    assert is_clause(tok("Sabyasachi played Feluda", "PROPN VERB PROPN"), "ORG")
    assert is_clause(tok("Kauai , Maui", "PROPN PUNCT PROPN"), "ORG")
    assert not is_clause(tok("Leland , North Carolina", "PROPN PUNCT PROPN PROPN"), "GPE")
    assert not is_clause(
        tok("Scrooge ?", "PROPN PUNCT"), "PERSON"
    )  # punctuation at the end is trimmed later
    assert split_label("Author: Charles Dickens") == "Charles Dickens"
    assert split_label("Release date: December 24, 2007") == "December 24, 2007"
    assert split_label("Star Wars: A New Hope") == "Star Wars: A New Hope"
    assert split_label("Alien: Resurrection") == "Alien: Resurrection"
    assert collapse_repeat("Scrooge Scrooge") == "Scrooge"
    assert collapse_repeat("Jacob Marley Jacob Marley") == "Jacob Marley"
    assert collapse_repeat("Scrooge and Marley") == "Scrooge and Marley"


@given(st.text(alphabet="abcXYZ", min_size=1, max_size=8))
def test_collapse_repeat_of_a_doubled_word(word):
    assert collapse_repeat(f"{word} {word}") == word
    assert collapse_repeat(word) == word


def test_headings_read_as_names_or_clauses():
    def title(text, tags):
        return reads_as_title(
            text, [(w, p, t) for w, (p, t) in zip(text.split(), tags, strict=False)]
        )

    assert title("Habitat and range", [("NOUN", "NN"), ("CCONJ", "CC"), ("NOUN", "NN")])
    assert not title("What do you", [("PRON", "WP"), ("AUX", "VBP"), ("PRON", "PRP")])
    assert not title("Suddenly a man", [("ADV", "RB"), ("DET", "DT"), ("NOUN", "NN")])
    assert not title("In half a minute Mrs. Cratchit", [("ADP", "IN")] + [("NOUN", "NN")] * 5)
    assert title("Pick Me Up (magazine)", [("VERB", "VB"), ("PRON", "PRP"), ("ADP", "RP")])
    assert title("STAVE ONE", [("VERB", "VB"), ("NUM", "CD")])
    assert not title("IN COLOUR", [("ADP", "IN"), ("PROPN", "NNP")])
    assert heading_shape("Leland, North Carolina") and heading_shape("Tarzan, the Ape Man")
    for line in (
        "How now? said Scrooge, caustic",
        "em down, rings and all",
        "in a suspicious attitude",
    ):
        assert not heading_shape(line), line


def test_type_corrections():
    assert corrected_type("Zephyr Robotics", "Person") == "Organization"
    assert corrected_type("Acme Labs Inc", "Person") == "Organization"
    assert corrected_type("University of Texas", "Location") == "Organization"
    assert corrected_type("Faroe Islands", "Person") == "Location"
    assert corrected_type("Azores Archipelago", "Organization") == "Location"
    assert corrected_type("River Tagus", "Organization") == "Location"
    assert corrected_type("Pratt County", "Person") == "Location"
    assert corrected_type("Manchester City", "Organization") == "Organization"
    assert corrected_type("Mrs. Cratchit", "Organization") == "Person"
    assert corrected_type("Lake Placid", "Content") == "Content"
    assert corrected_type("华为公司", "Person") == "Organization"
    assert corrected_type("荆州", "Person") == "Location"
    assert corrected_type("孙中山", "Person") == "Person"
    assert corrected_type("泰山", "Concept") == "Location"
    assert corrected_type("Ebenezer Scrooge", "Person") == "Person"


@given(st.text(max_size=30), st.sampled_from(["Content", "Event"]))
def test_works_and_events_keep_their_type(name, kind):
    assert corrected_type(name, kind) == kind
