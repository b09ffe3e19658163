"""Chunkers: examples plus Hypothesis properties."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgrag.config.settings import Settings
from kgrag.errors import ConfigError
from kgrag.ingest.chunking import (
    chunk_by_tokens,
    chunk_recursive,
    make_chunks,
    make_chunks_for_settings,
    token_windows,
)
from kgrag.ingest.ids import chunk_id, doc_id
from kgrag.ingest.recursive import split_recursive
from kgrag.llm.tokenizer import get_tokenizer
from kgrag.types import Document

TOK = get_tokenizer()
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

texts = st.text(
    alphabet=st.sampled_from(list("abc xyz\n\n。，！？；中文字 Éé🙂.,-1")) | st.characters(),
    max_size=600,
)
sizes = st.integers(min_value=8, max_value=80)


def _no_ws(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_windows_step_by_size_minus_overlap():
    assert token_windows(2500, 1200, 100) == [(0, 1200), (1100, 2300), (2200, 2500)]
    assert token_windows(0, 10, 2) == []
    # a last window wholly inside the previous one is not emitted
    assert token_windows(1150, 1200, 100) == [(0, 1150)]


def test_bad_sizes_raise_config_error():
    with pytest.raises(ConfigError):
        chunk_by_tokens("abc", TOK, size=10, overlap=10)
    with pytest.raises(ConfigError):
        make_chunks(Document("d", "abc"), TOK, method="nope")


def test_split_by_character_resplits_oversize_unless_only():
    text = "short one\n\n" + "word " * 100 + "\n\nlast"
    pieces = chunk_by_tokens(text, TOK, size=30, overlap=5, split_by_character="\n\n")
    assert pieces[0].content == "short one" and pieces[-1].content == "last"
    assert all(p.tokens <= 30 for p in pieces) and len(pieces) > 3
    assert [p.order for p in pieces] == list(range(len(pieces)))
    only = chunk_by_tokens(
        text, TOK, size=30, overlap=5, split_by_character="\n\n", split_by_character_only=True
    )
    assert [p.content for p in only] == ["short one", ("word " * 100).strip(), "last"]
    assert only[1].tokens > 30


def test_make_chunks_ids_dedupe_and_metadata():
    text = "same paragraph\n\nother\n\nsame paragraph"
    doc = Document(id=doc_id(text), content=text, file_path="f.txt")
    chunks = make_chunks(doc, TOK, size=50, overlap=0, split_by_character="\n\n")
    assert [c.content for c in chunks] == ["same paragraph", "other"]
    assert [c.order for c in chunks] == [0, 1]
    assert chunks[0].id == chunk_id("same paragraph")
    assert all(c.doc_id == doc.id and c.file_path == "f.txt" for c in chunks)


def test_make_chunks_for_settings_uses_recursive():
    s = Settings(chunker="recursive", chunk_size=16, chunk_overlap=0)
    text = "第一句话。第二句话很长很长很长很长。第三句话！" * 5
    chunks = make_chunks_for_settings(Document("d", text), s, TOK)
    assert len(chunks) > 1 and all(c.tokens <= 16 for c in chunks)


def test_recursive_prefers_cjk_sentence_boundaries():
    text = "甲乙丙丁戊己庚辛。" * 12
    pieces = chunk_recursive(text, TOK, size=20, overlap=0)
    assert all(p.content.endswith("。") and p.tokens <= 20 for p in pieces)
    assert [p.order for p in pieces] == list(range(len(pieces)))


def test_empty_text_gives_no_chunks():
    assert chunk_by_tokens("  \n ", TOK, 10, 2) == []
    assert chunk_recursive("  \n ", TOK, 10, 2) == []


@PROPS
@given(n=st.integers(0, 5000), size=st.integers(1, 300), data=st.data())
def test_windows_cover_everything_in_order(n, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    windows = token_windows(n, size, overlap)
    covered = 0
    for a, b in windows:
        assert a <= covered and b > covered and b - a <= size
        assert covered - a <= overlap
        covered = b
    assert covered == n


@PROPS
@given(text=texts, size=sizes, data=st.data())
def test_token_chunks_bounded_and_reconstruct_tokens(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    pieces = chunk_by_tokens(text, TOK, size, overlap)
    assert all(0 < p.tokens <= size and p.content == p.content.strip() for p in pieces)
    tokens = TOK.encode(text)
    rebuilt: list[int] = []
    for a, b in token_windows(len(tokens), size, overlap):
        rebuilt.extend(tokens[a:b][len(rebuilt) - a :])
    assert rebuilt == tokens
    assert pieces == chunk_by_tokens(text, TOK, size, overlap)  # deterministic


@PROPS
@given(text=texts, size=sizes)
def test_recursive_loses_nothing_without_overlap(text, size):
    pieces = split_recursive(text, TOK, size, 0)
    assert all(p and p == p.strip() and TOK.count(p) <= size for p in pieces)
    assert _no_ws("".join(pieces)) == _no_ws(text)
    assert pieces == split_recursive(text, TOK, size, 0)


@PROPS
@given(text=texts, size=sizes, data=st.data())
def test_recursive_with_overlap_stays_within_text(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    pieces = split_recursive(text, TOK, size, overlap)
    flat = _no_ws(text)
    assert all(TOK.count(p) <= size and _no_ws(p) in flat for p in pieces)
    if pieces:
        assert flat.startswith(_no_ws(pieces[0])) and flat.endswith(_no_ws(pieces[-1]))
