"""BM25 full-text search over chunk texts with SQLite FTS5.

FTS5's ``unicode61`` tokenizer splits on spaces and punctuation, which
leaves a Chinese sentence as one huge token. So texts are segmented
before they reach FTS5: text containing Han characters is cut with
``jieba`` (search mode, which adds the short words inside long ones) and
the tokens are joined with spaces; other text only needs lowercasing.
jieba's dictionary takes about a second to load, so it is imported and
initialised on the first text that needs it, off the event loop.

The FTS table is contentless (``content=''``): it holds the inverted
index only. The token string of each entry is kept zlib-compressed in
``lexical_docs`` (it is needed to remove the entry again), which costs
about half of what FTS5's own content copy would.

Queries are an OR of the query's distinct terms, each quoted, and scores
are ``-bm25()`` so that higher is better.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from typing import Protocol

from kgrag.storage.sqlite import codec
from kgrag.storage.sqlite.db import Database, chunked, marks

MAX_QUERY_TERMS = 64
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_TERM = re.compile(r"\w+")


class Segmenter(Protocol):
    """What is used of jieba (which ships no types)."""

    def lcut_for_search(self, text: str) -> list[str]: ...


_jieba: Segmenter | None = None
_jieba_lock = threading.Lock()


def _segmenter() -> Segmenter:
    """The jieba module, imported and initialised once (quietly)."""
    global _jieba
    with _jieba_lock:
        if _jieba is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            _jieba = jieba
    return _jieba


def tokenize(text: str) -> str:
    """``text`` as lowercase, space-separated tokens for FTS5."""
    text = text.lower()
    if not _HAN.search(text):
        return text
    words: list[str] = _segmenter().lcut_for_search(text)
    return " ".join(w for w in words if not w.isspace())


def query_terms(query: str) -> list[str]:
    """Distinct terms of ``query`` (at most :data:`MAX_QUERY_TERMS`)."""
    terms = dict.fromkeys(_TERM.findall(tokenize(query)))
    return list(terms)[:MAX_QUERY_TERMS]


def match_expression(terms: list[str]) -> str:
    """An FTS5 MATCH expression: the quoted terms joined by OR."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


async def _tokenize_all(texts: list[str]) -> list[str]:
    if any(_HAN.search(t) for t in texts):
        return await asyncio.to_thread(lambda: [tokenize(t) for t in texts])
    return [t.lower() for t in texts]


class SQLiteLexicalIndex:
    """BM25 search over (id, text) entries; adding an id again replaces it."""

    def __init__(self, db: Database):
        self._db = db

    async def add(self, items: Mapping[str, str]) -> None:
        ids = list(items)
        if not ids:
            return
        tokens = await _tokenize_all([items[i] for i in ids])
        await self._db.write(_add, list(zip(ids, tokens, strict=False)))

    async def delete(self, ids: Iterable[str]) -> None:
        ids = list(dict.fromkeys(ids))
        if ids:
            await self._db.write(_delete, ids)

    async def search(self, query: str, top_k: int) -> list[tuple[str, float]]:
        """(id, score) pairs, best first; higher scores are better."""
        terms = (
            await asyncio.to_thread(query_terms, query)
            if _HAN.search(query)
            else query_terms(query)
        )
        if not terms or top_k <= 0:
            return []
        return await self._db.read(_search, match_expression(terms), int(top_k))

    async def ids(self) -> list[str]:
        """Every indexed id, sorted."""
        return await self._db.read(
            lambda c: [row[0] for row in c.execute("SELECT id FROM lexical_docs ORDER BY id")]
        )

    async def count(self) -> int:
        """Number of indexed entries."""
        return await self._db.read(
            lambda c: c.execute("SELECT COUNT(*) FROM lexical_docs").fetchone()[0]
        )


def _remove(conn: sqlite3.Connection, ids: list[str]) -> None:
    for part in chunked(ids):
        sql = f"SELECT rowid, tokens FROM lexical_docs WHERE id IN ({marks(len(part))})"
        old = conn.execute(sql, part).fetchall()
        conn.executemany(
            "INSERT INTO lexical_fts(lexical_fts, rowid, body) VALUES ('delete', ?, ?)",
            ((rowid, codec.unpack_text(blob)) for rowid, blob in old),
        )
        conn.executemany("DELETE FROM lexical_docs WHERE rowid=?", ((r,) for r, _ in old))


def _add(conn: sqlite3.Connection, entries: list[tuple[str, str]]) -> None:
    _remove(conn, [id_ for id_, _ in entries])
    for id_, tokens in entries:
        cur = conn.execute(
            "INSERT INTO lexical_docs(id, tokens) VALUES (?, ?)", (id_, codec.pack_text(tokens))
        )
        conn.execute("INSERT INTO lexical_fts(rowid, body) VALUES (?, ?)", (cur.lastrowid, tokens))


def _delete(conn: sqlite3.Connection, ids: list[str]) -> None:
    _remove(conn, ids)


def _search(conn: sqlite3.Connection, expression: str, top_k: int) -> list[tuple[str, float]]:
    sql = (
        "SELECT d.id, -f.rank FROM (SELECT rowid, rank FROM lexical_fts "
        "WHERE lexical_fts MATCH ? ORDER BY rank LIMIT ?) AS f "
        "JOIN lexical_docs d ON d.rowid = f.rowid ORDER BY f.rank, d.id"
    )
    return [(id_, float(score)) for id_, score in conn.execute(sql, (expression, top_k))]
