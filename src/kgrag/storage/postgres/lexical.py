"""BM25 full-text search over chunk texts, in plain tables.

The embedded backend's FTS5 index decides what a term is; this module
cuts texts the same way, so both backends rank the same texts alike:
:func:`~kgrag.storage.sqlite.lexical.tokenize` (lowercase; jieba for Han
text), then FTS5's ``unicode61 remove_diacritics 2`` rules: a term is a run
of letters, digits and private-use characters, with Latin diacritics
removed and the few case folds FTS5 adds (``ς`` is ``σ``). Characters newer
than SQLite's Unicode tables (recent emoji) may be cut differently. A
query is an OR of its distinct terms (a query word with ``_`` counts as
its parts, where FTS5 would want them adjacent).

Tables:

- ``lexical_docs``: one row per entry: its id, a number (``doc``) for the
  postings, its length in terms, and its distinct terms (to find its
  postings again when it is removed);
- ``lexical_terms``: the postings, (term, doc) with the term's count in
  the entry and the entry's length, so scoring needs no other table;
- ``lexical_totals``: one row, the number of entries and of terms, kept
  in the same statement batch as every change (no ``COUNT(*)`` per query).
  Writers queue on it; commits of a change run inside ``serial()`` anyway.

Scores are FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, an idf of at least
1e-6), positive, computed in one statement.
"""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from kgrag.storage.postgres.db import Database, chunked
from kgrag.storage.sqlite.lexical import MAX_QUERY_TERMS, query_terms, tokenize

K1, B = 1.2, 0.75

DDL = """
CREATE TABLE IF NOT EXISTS lexical_docs (
    id    TEXT COLLATE "C" PRIMARY KEY,
    doc   BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    len   INTEGER NOT NULL,
    terms TEXT[] NOT NULL
);
CREATE TABLE IF NOT EXISTS lexical_terms (
    term TEXT COLLATE "C" NOT NULL,
    doc  BIGINT NOT NULL,
    tf   INTEGER NOT NULL,
    len  INTEGER NOT NULL,
    PRIMARY KEY (term, doc)
);
CREATE TABLE IF NOT EXISTS lexical_totals (
    one   BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    n     BIGINT NOT NULL,
    total BIGINT NOT NULL
);
"""

_ASCII_TERM = re.compile(r"[^\W_]+")
_TERM = re.compile(r"[\w\ue000-\uf8ff]+")  # after _fold_table(): "_" is a space
# combining marks FTS5 drops from inside a term (others end the term)
_DROPPED = (
    *range(0x300, 0x305), *range(0x306, 0x30D), 0x30F, 0x311, 0x31B,
    *range(0x323, 0x329), 0x32D, 0x32E, 0x330, 0x331,
)  # fmt: skip
_UNFOLDED = {0x1E0, 0x1E1}  # Latin letters FTS5 keeps as they are


@cache
def _fold_table() -> dict[int, int | None]:
    """``str.translate`` table: FTS5's diacritic removal and case folds."""
    table: dict[int, int | None] = dict.fromkeys(_DROPPED)
    table[ord("_")] = ord(" ")
    for cp in range(0x80, 0x2200):
        if cp in table or cp in _UNFOLDED or 0x13A0 <= cp < 0x1400 or 0x1C80 <= cp < 0x1C90:
            continue
        folded = _fold(chr(cp))
        if folded != chr(cp):
            table[cp] = ord(folded)
    return table


def _fold(char: str) -> str:
    single = char.casefold()
    single = single if len(single) == 1 else char
    parts = unicodedata.normalize("NFD", single)
    base, marks = parts[0], parts[1:]
    if base.isascii() and base.isalpha() and all(unicodedata.combining(m) for m in marks):
        return base
    return single


def terms(text: str) -> list[str]:
    """The terms of ``text``, in order, as the FTS5 index of the embedded backend sees them."""
    tokens = tokenize(text)
    if tokens.isascii():
        return _ASCII_TERM.findall(tokens)
    return _TERM.findall(tokens.translate(_fold_table()))


def search_terms(query: str) -> list[str]:
    """Distinct terms of ``query`` (at most :data:`MAX_QUERY_TERMS`)."""
    out: dict[str, None] = {}
    for word in query_terms(query):
        out.update(dict.fromkeys(terms(word)))
    return list(out)[:MAX_QUERY_TERMS]


@dataclass(slots=True)
class _Batch:
    """Entries to add, in id order, as the array parameters of one statement."""

    ids: list[str] = field(default_factory=list)
    lens: list[int] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)  # distinct terms, space-separated
    tfs: list[str] = field(default_factory=list)  # their counts, space-separated


def _batch(items: Mapping[str, str]) -> _Batch:
    batch = _Batch()
    for id_ in sorted(items):
        found = terms(items[id_])
        counts = Counter(found)
        batch.ids.append(id_)
        batch.lens.append(len(found))
        batch.terms.append(" ".join(counts))
        batch.tfs.append(" ".join(map(str, counts.values())))
    return batch


class PgLexicalIndex:
    """BM25 search over (id, text) entries; adding an id again replaces it."""

    def __init__(self, db: Database):
        self._db = db

    async def add(self, items: Mapping[str, str]) -> None:
        if items:
            batch = await asyncio.to_thread(_batch, dict(items))
            await self._db.write(_add, batch)

    async def delete(self, ids: Iterable[str]) -> None:
        wanted = sorted(set(ids))
        if wanted:
            await self._db.write(_delete, wanted)

    async def search(self, query: str, top_k: int) -> list[tuple[str, float]]:
        """(id, score) pairs, best first; higher scores are better."""
        if top_k <= 0:
            return []
        wanted = await asyncio.to_thread(search_terms, query)
        if not wanted:
            return []
        return await self._db.read(_search, wanted, int(top_k))

    async def ids(self) -> list[str]:
        """Every indexed id, sorted."""
        return await self._db.read(_ids)

    async def count(self) -> int:
        """Number of indexed entries."""
        return await self._db.read(_count)


# -- SQL -----------------------------------------------------------------------

_INSERT = """
WITH u AS (
    SELECT * FROM unnest(%s::text[], %s::int[], %s::text[], %s::text[]) AS u(id, len, terms, tfs)
), new AS (
    INSERT INTO lexical_docs (id, len, terms)
    SELECT id, len, string_to_array(terms, ' ') FROM u ORDER BY id
    RETURNING doc, id, len, terms
)
INSERT INTO lexical_terms (term, doc, tf, len)
SELECT p.term, new.doc, p.tf::int, new.len
FROM new JOIN u USING (id), unnest(new.terms, string_to_array(u.tfs, ' ')) AS p(term, tf)
"""

_REMOVE_POSTINGS = """
DELETE FROM lexical_terms t USING unnest(%s::text[], %s::bigint[]) AS o(term, doc)
WHERE t.term = o.term AND t.doc = o.doc
"""

_TOTALS = """
INSERT INTO lexical_totals (one, n, total) VALUES (TRUE, %s, %s)
ON CONFLICT (one) DO UPDATE
SET n = lexical_totals.n + EXCLUDED.n, total = lexical_totals.total + EXCLUDED.total
"""

_SEARCH = f"""
WITH tot AS (
    SELECT n::float8 AS n, total::float8 / NULLIF(n, 0) AS avgdl FROM lexical_totals
), p AS (
    SELECT doc, tf, len, count(*) OVER (PARTITION BY term) AS df
    FROM lexical_terms WHERE term = ANY(%s)
), s AS (
    SELECT p.doc, sum(
        GREATEST(ln(GREATEST((tot.n - p.df + 0.5) / (p.df + 0.5), 1.0)), 1e-6)
        * p.tf * {K1 + 1.0}::float8
        / (p.tf + {K1}::float8 * ({1.0 - B}::float8 + {B}::float8 * p.len / tot.avgdl))
    ) AS score
    FROM p CROSS JOIN tot GROUP BY p.doc ORDER BY score DESC NULLS LAST, p.doc LIMIT %s
)
SELECT d.id, s.score FROM s JOIN lexical_docs d ON d.doc = s.doc ORDER BY s.score DESC, d.id
"""


async def _add(conn: Any, batch: _Batch) -> None:
    gone, gone_terms = await _remove(conn, batch.ids)
    await conn.execute(_INSERT, (batch.ids, batch.lens, batch.terms, batch.tfs))
    await conn.execute(_TOTALS, (len(batch.ids) - gone, sum(batch.lens) - gone_terms))


async def _delete(conn: Any, ids: list[str]) -> None:
    gone, gone_terms = await _remove(conn, ids)
    if gone:
        await conn.execute(_TOTALS, (-gone, -gone_terms))


async def _remove(conn: Any, ids: list[str]) -> tuple[int, int]:
    """Delete the entries ``ids`` and their postings; (entries, terms) removed."""
    gone = gone_terms = 0
    for part in chunked(ids):
        cur = await conn.execute(
            "DELETE FROM lexical_docs WHERE id = ANY(%s) RETURNING doc, len, terms", (part,)
        )
        rows = await cur.fetchall()
        if not rows:
            continue
        gone, gone_terms = gone + len(rows), gone_terms + sum(row[1] for row in rows)
        postings = [(term, row[0]) for row in rows for term in row[2]]
        for block in chunked(postings, 50_000):
            await conn.execute(_REMOVE_POSTINGS, ([t for t, _ in block], [d for _, d in block]))
    return gone, gone_terms


async def _search(conn: Any, wanted: list[str], top_k: int) -> list[tuple[str, float]]:
    cur = await conn.execute(_SEARCH, (wanted, top_k))
    return [(id_, float(score)) for id_, score in await cur.fetchall()]


async def _ids(conn: Any) -> list[str]:
    cur = await conn.execute("SELECT id FROM lexical_docs ORDER BY id")
    return [row[0] for row in await cur.fetchall()]


async def _count(conn: Any) -> int:
    cur = await conn.execute("SELECT COALESCE(max(n), 0) FROM lexical_totals")
    return int((await cur.fetchone())[0])
