"""Sentences and terms behind the extractive answer: English, Chinese, titles, markup."""

from __future__ import annotations

from kgrag.retrieval.answer.sentences import context_sentences, needs_antecedent, split_sentences
from kgrag.retrieval.answer.terms import names, terms


def test_chinese_text_splits_at_full_stops_and_after_closing_quotes():
    text = "李白出生于碎叶城。他说：“我要去长安。”然后他离开了！你知道为什么吗？杜甫是诗人；王维也是诗人"
    assert split_sentences(text) == [
        "李白出生于碎叶城。",
        "他说：“我要去长安。”",
        "然后他离开了！",
        "你知道为什么吗？",
        "杜甫是诗人；",
        "王维也是诗人",
    ]


def test_english_splits_keep_abbreviations_and_quoted_speech_together():
    text = (
        "Mr. Fezziwig gave a ball. 'Hear me!' cried the Ghost. He lived in St. Louis, "
        "Missouri until 1901."
    )
    assert split_sentences(text) == [
        "Mr. Fezziwig gave a ball.",
        "'Hear me!' cried the Ghost.",
        "He lived in St. Louis, Missouri until 1901.",
    ]


def test_a_title_line_and_markup_are_kept_but_never_quotable():
    pieces = context_sentences(
        [
            "Boston Beer Company\nThe Boston Beer Company is a brewer founded in 1984.",
            "[Illustration: Scrooge at his desk]\n\nScrooge sat at his desk all day long.",
        ],
        100,
    )
    assert [(p.text, p.kind, p.chunk, p.position) for p in pieces] == [
        ("Boston Beer Company", "heading", 0, 0),
        ("The Boston Beer Company is a brewer founded in 1984.", "sentence", 0, 1),
        ("[Illustration: Scrooge at his desk]", "markup", 1, 0),
        ("Scrooge sat at his desk all day long.", "sentence", 1, 1),
    ]
    assert split_sentences("Boston Beer Company\nThe Boston Beer Company is a brewer.") == [
        "The Boston Beer Company is a brewer."
    ]


def test_wrapped_prose_is_not_taken_for_a_title():
    text = "Scrooge was very much dismayed to hear\nthe spectre going on at this rate."
    assert split_sentences(text) == [
        "Scrooge was very much dismayed to hear the spectre going on at this rate."
    ]


def test_a_sentence_seen_in_an_earlier_chunk_is_a_repeat():
    kinds = [p.kind for p in context_sentences(["The firm was Scrooge and Marley."] * 2, 10)]
    assert kinds == ["sentence", "repeat"]


def test_pronouns_and_quoted_speakers_need_the_sentence_before():
    for sentence in (
        "She resigned to become a lobbyist.",
        "It is headquartered in Canton.",
        "'I am here to-night to warn you.'",
        "他出生于碎叶城。",
        "这座城很古老。",
    ):
        assert needs_antecedent(sentence), sentence
    for sentence in ("Scrooge shivered.", "I went home.", "Italy is a country.", "李白出生了。"):
        assert not needs_antecedent(sentence), sentence


def test_terms_stem_and_drop_stopwords_and_chinese_gives_bigrams():
    assert terms("What does Marley's ghost warn Scrooge about?") == [
        "marley",
        "ghost",
        "warn",
        "scroog",
    ]
    assert terms("warned warning warns") == ["warn"] * 3
    assert terms("themes theme") == ["theme", "theme"]
    assert terms("李白出生") == ["李白", "白出", "出生"]
    assert names("Was Ada Lovelace born in London?") == {"ada", "lovelac", "london"}
