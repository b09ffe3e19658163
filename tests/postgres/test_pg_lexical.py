"""The PostgreSQL lexical index beyond the conformance suite: it ranks as SQLite's FTS5 does."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from kgrag.storage.postgres import lexical
from kgrag.storage.sqlite import SQLiteStorage
from kgrag.storage.sqlite.lexical import tokenize

DATA = Path(__file__).resolve().parents[1] / "eval" / "data"
ODD_QUERIES = [
    "the of a",  # only terms in half the entries or more
    "the zhuangzi",  # one common term, one that is nowhere
    "what is the name of the film",  # mostly common terms
    "a",
    "Café naïve ÉCOLE",
]


def english() -> tuple[dict[str, str], list[str]]:
    """50 HotpotQA passages and the 20 questions of the evaluation sample."""
    corpus = json.loads((DATA / "hotpotqa" / "hotpotqa_train_corpus.json").read_text())
    texts = {
        f"en-{i:02d}": f"{title}. {''.join(lines)}"
        for i, (title, lines) in enumerate(list(corpus.items())[:50])
    }
    questions = json.loads((DATA / "hotpotqa" / "hotpotqa_train.json").read_text())
    return texts, [q["question"] for q in questions]


def chinese() -> tuple[dict[str, str], list[str]]:
    """The 8 CMRC paragraphs cut into 24 chunks, and two questions of each paragraph."""
    data = json.loads((DATA / "zh" / "cmrc2018_trial.squad.json").read_text())
    paragraphs = [p for article in data["data"] for p in article["paragraphs"]]
    texts: dict[str, str] = {}
    for i, paragraph in enumerate(paragraphs):
        sentences = [s for s in re.split(r"(?<=。)", paragraph["context"]) if s.strip()]
        third = max(1, len(sentences) // 3)
        for j in range(3):
            part = sentences[j * third :] if j == 2 else sentences[j * third : (j + 1) * third]
            if part:
                texts[f"zh-{i}-{j}"] = "".join(part)
    questions = [q["question"] for p in paragraphs for q in p["qas"][:2]]
    return texts, questions


@pytest.fixture
async def sqlite_storage(tmp_path):
    storage = SQLiteStorage(tmp_path / "sqlite")
    await storage.open()
    yield storage
    await storage.close()


async def test_pg_lexical_ranks_as_the_sqlite_index(pg_storage, sqlite_storage, monkeypatch):
    en_texts, en_questions = english()
    zh_texts, zh_questions = chinese()
    assert len(en_texts) == 50 and len(zh_texts) >= 20
    pruned: list[bool] = []
    real = lexical._pruned

    async def spy(*args):
        hits = await real(*args)
        pruned.append(hits is not None)
        return hits

    monkeypatch.setattr(lexical, "_pruned", spy)
    for index in (pg_storage.lexical, sqlite_storage.lexical):
        await index.add(en_texts)
        await index.add(zh_texts)
    for query in [*en_questions, *zh_questions, *ODD_QUERIES]:
        want = await sqlite_storage.lexical.search(query, 5)
        got = await pg_storage.lexical.search(query, 5)
        assert [i for i, _ in got] == [i for i, _ in want], query
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9), query
    # the shortcut for common terms was taken, and so was the full scoring it falls back to
    assert any(pruned) and not all(pruned)


def fts5_terms(texts: list[str]) -> list[list[str]]:
    """What SQLite's FTS5 (the embedded backend's tokenizer settings) makes of ``texts``."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    for i, text in enumerate(texts):
        db.execute("INSERT INTO f(rowid, body) VALUES (?, ?)", (i, tokenize(text)))
    sql = "SELECT term FROM v WHERE doc = ? ORDER BY offset"
    return [[row[0] for row in db.execute(sql, (i,))] for i in range(len(texts))]


def test_pg_lexical_terms_are_fts5_tokens():
    texts = [
        "Café naïve Ångström ŒUVRE Straße façade",
        "İstanbul ΣΟΦΟΣ σοφός Ελληνικά µ",
        "e\u0301te\u0301 a\u0305b",  # combining marks: some FTS5 drops, others end a term
        "snake_case_name x2 3.14 ½ ①",
        "ภาษาไทย हिन्दी",
        "\ue000private\ue001 ǡ Ǡ ŀ ĳ ſ",
        "刘备与孙权联合，在赤壁大败曹操的军队。Café ÉTÉ",
        "",
        "...",
    ]
    assert [lexical.terms(t) for t in texts] == fts5_terms(texts)


async def _totals(conn) -> dict[str, int]:
    cur = await conn.execute(
        "SELECT (SELECT COALESCE(max(n), 0) FROM lexical_totals), "
        "(SELECT COALESCE(max(total), 0) FROM lexical_totals), "
        "(SELECT count(*) FROM lexical_docs), (SELECT COALESCE(sum(len), 0) FROM lexical_docs), "
        "(SELECT count(*) FROM lexical_terms), (SELECT COALESCE(sum(tf), 0) FROM lexical_terms), "
        "(SELECT COALESCE(sum(cardinality(terms)), 0) FROM lexical_docs)"
    )
    keys = ("n", "total", "docs", "lens", "postings", "tfs", "distinct")
    return dict(zip(keys, map(int, await cur.fetchone()), strict=True))


async def _check_totals(storage, docs: int, terms: int) -> None:
    got = await storage.db.read(_totals)
    assert got["n"] == got["docs"] == docs and await storage.lexical.count() == docs
    assert got["total"] == got["lens"] == got["tfs"] == terms
    assert got["postings"] == got["distinct"]


async def test_pg_lexical_totals_follow_adds_replaces_and_deletes(pg_storage):
    index = pg_storage.lexical
    await index.add({"a": "one two two", "b": "three", "c": "four five six"})
    await _check_totals(pg_storage, 3, 7)
    await index.add({"a": "seven", "d": "eight nine"})  # a replaced, d new
    await _check_totals(pg_storage, 4, 7)
    await index.delete(["b", "missing", "b"])
    await _check_totals(pg_storage, 3, 6)
    await index.add({"e": "", "f": "... !!"})  # entries without a term
    await _check_totals(pg_storage, 5, 6)
    assert await index.ids() == ["a", "c", "d", "e", "f"]
    assert [i for i, _ in await index.search("two seven", 5)] == ["a"]
    await index.delete(await index.ids())
    await _check_totals(pg_storage, 0, 0)
    assert await index.search("seven", 5) == []


async def test_pg_lexical_rolled_back_add_leaves_nothing(pg_storage):
    index = pg_storage.lexical
    await index.add({"a": "kept words"})
    with pytest.raises(RuntimeError):
        async with pg_storage.transaction():
            await index.add({"a": "replaced", "b": "added words"})
            assert {i for i, _ in await index.search("added replaced", 5)} == {"a", "b"}
            raise RuntimeError("roll back")
    await _check_totals(pg_storage, 1, 2)
    assert [i for i, _ in await index.search("kept replaced added", 5)] == ["a"]
