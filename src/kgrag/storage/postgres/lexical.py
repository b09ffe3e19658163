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
- ``lexical_totals``: one row, the number of entries and of terms, changed
  by the same write as the entries (no ``COUNT(*)`` per query). Writers
  queue on that row until they commit; the commits of changes run one at a
  time inside ``serial()`` anyway.

Scores are FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, an idf of at least
1e-6), positive, summed in SQL over the postings of the query's terms. A
term in half the entries or more has that floor idf, so it adds less than
``(k1 + 1) * 1e-6`` to any score: when the other terms alone give
``top_k`` entries scoring above what the common terms could add, the
common terms are scored only on the entries that could still make the
top (their postings are counted, not read twice). The result is the same
as scoring every posting, at a fraction of the work for questions full
of "what", "the" and "of". All statements of a search read one snapshot.
"""

from __future__ import annotations

import asyncio
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from kgrag.storage.postgres.db import Conn, Database, chunked, scalar
from kgrag.storage.sqlite.lexical import MAX_QUERY_TERMS, query_terms, tokenize

K1, B = 1.2, 0.75
_MIN_IDF = 1e-6

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

# combining marks FTS5 drops from inside a term (others end the term)
_DROPPED = (
    *range(0x300, 0x305), *range(0x306, 0x30D), 0x30F, 0x311, 0x31B,
    *range(0x323, 0x329), 0x32D, 0x32E, 0x330, 0x331,
)  # fmt: skip
_ASCII_TERM = re.compile(r"[a-zA-Z0-9]+")
# letters, digits, private-use characters and the dropped marks (folded away afterwards);
# "_" is a separator too, replaced by a space first (a class with \w and without "_" is slow)
_TERM = re.compile("[\\w\ue000-\uf8ff" + "".join(map(chr, _DROPPED)) + "]+")
_UNFOLDED = {0x1E0, 0x1E1}  # Latin letters FTS5 keeps as they are
# Cherokee and the old Cyrillic letter forms: case folds newer than FTS5's tables
_NO_FOLDS = (range(0x13A0, 0x1400), range(0x1C80, 0x1C90))


@cache
def _fold_table() -> dict[int, int | None]:
    """``str.translate`` table: FTS5's diacritic removal and case folds."""
    table: dict[int, int | None] = dict.fromkeys(_DROPPED)
    for cp in range(0x80, 0x2200):
        if cp in table or cp in _UNFOLDED or any(cp in r for r in _NO_FOLDS):
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
    return _split(tokenize(text))


def search_terms(query: str) -> list[str]:
    """Distinct terms of ``query`` (at most :data:`MAX_QUERY_TERMS`)."""
    out: dict[str, None] = {}
    for word in query_terms(query):  # already tokenized: FTS5 only splits the quoted word
        out.update(dict.fromkeys(_split(word)))
    return list(out)[:MAX_QUERY_TERMS]


def _split(tokens: str) -> list[str]:
    """FTS5's unicode61 terms of tokenized text."""
    if tokens.isascii():
        return _ASCII_TERM.findall(tokens)
    table = _fold_table()
    found = _TERM.findall(tokens.replace("_", " "))
    return [t for t in (w if w.isascii() else w.translate(table) for w in found) if t]


@dataclass(frozen=True, slots=True)
class _Weights:
    """BM25 of one query: each found term's weight, (k1 + 1) * idf, and the length terms."""

    w: dict[str, float]
    a: float  # k1 * (1 - b)
    c: float  # k1 * b / average length

    def split(self) -> tuple[list[str], list[str]]:
        """(rare, common): common terms are in half the entries or more (the idf floor)."""
        floor = (K1 + 1.0) * _MIN_IDF
        rare = [t for t, w in self.w.items() if w > floor]
        return rare, [t for t in self.w if self.w[t] <= floor]

    def params(self, terms: list[str], **more: object) -> dict[str, object]:
        return {"a": self.a, "c": self.c, "terms": terms, "ws": [self.w[t] for t in terms], **more}


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
ORDER BY p.term, new.doc
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

_FREQUENCIES = """
SELECT n, total, f.terms, f.dfs FROM lexical_totals, (
    SELECT array_agg(term) AS terms, array_agg(df) AS dfs FROM (
        SELECT term, count(*) AS df FROM lexical_terms WHERE term = ANY(%s) GROUP BY term
    ) AS g
) AS f
"""

# BM25 sums over the postings of the given terms, each term weighted by (k1 + 1) * idf
_SUMS = """
SELECT t.doc, sum(q.w * t.tf / (t.tf + %(a)s + %(c)s * t.len)) AS score
FROM unnest(%(terms)s::text[], %(ws)s::float8[]) AS q(term, w)
CROSS JOIN LATERAL (
    SELECT doc, tf, len FROM lexical_terms t WHERE t.term = q.term {docs}
) AS t
GROUP BY t.doc
"""

_TOP = f"""
SELECT d.id, s.score FROM ({_SUMS.format(docs="")} ORDER BY score DESC, t.doc LIMIT %(k)s) AS s
JOIN lexical_docs d ON d.doc = s.doc ORDER BY s.score DESC, d.id
"""

_CANDIDATES = f"""
WITH r AS ({_SUMS.format(docs="")}),
kth AS (SELECT score FROM r ORDER BY score DESC OFFSET %(k)s - 1 LIMIT 1)
SELECT r.doc, r.score, kth.score FROM r, kth WHERE r.score >= kth.score - %(margin)s
"""

_PROBE = _SUMS.format(docs="AND t.doc = ANY(%(docs)s)")


async def _add(conn: Conn, batch: _Batch) -> None:
    gone, gone_terms = await _remove(conn, batch.ids)
    await conn.execute(_INSERT, (batch.ids, batch.lens, batch.terms, batch.tfs))
    await conn.execute(_TOTALS, (len(batch.ids) - gone, sum(batch.lens) - gone_terms))


async def _delete(conn: Conn, ids: list[str]) -> None:
    gone, gone_terms = await _remove(conn, ids)
    if gone:
        await conn.execute(_TOTALS, (-gone, -gone_terms))


async def _remove(conn: Conn, ids: list[str]) -> tuple[int, int]:
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
        postings = sorted((term, row[0]) for row in rows for term in row[2])  # index order
        for block in chunked(postings, 50_000):
            await conn.execute(_REMOVE_POSTINGS, ([t for t, _ in block], [d for _, d in block]))
    return gone, gone_terms


async def _search(conn: Conn, wanted: list[str], top_k: int) -> list[tuple[str, float]]:
    weights = await _weights(conn, wanted)
    if weights is None:
        return []
    rare, common = weights.split()
    if rare and common:
        hits = await _pruned(conn, weights, (rare, common), top_k)
        if hits is not None:
            return hits
    cur = await conn.execute(_TOP, weights.params(list(weights.w), k=top_k))
    return [(id_, float(score)) for id_, score in await cur.fetchall()]


async def _weights(conn: Conn, wanted: list[str]) -> _Weights | None:
    """The query's weights, or ``None`` when no entry holds any of its terms."""
    row = await (await conn.execute(_FREQUENCIES, (wanted,))).fetchone()
    if row is None or not row[2] or not row[0]:
        return None
    n, total, found, dfs = row
    ratio = {t: (n - df + 0.5) / (df + 0.5) for t, df in zip(found, dfs, strict=True)}
    w = {t: (K1 + 1.0) * max(math.log(max(r, 1.0)), _MIN_IDF) for t, r in ratio.items()}
    return _Weights(w, K1 * (1.0 - B), K1 * B * n / max(total, 1))


async def _pruned(
    conn: Conn, weights: _Weights, split: tuple[list[str], list[str]], top_k: int
) -> list[tuple[str, float]] | None:
    """The top ``top_k`` scoring the common terms on candidates only (``None``: not sure)."""
    rare, common = split
    margin = sum(weights.w[t] for t in common)  # more than common terms add to any score
    cur = await conn.execute(_CANDIDATES, weights.params(rare, k=top_k, margin=margin))
    rows = await cur.fetchall()
    if not rows or rows[0][2] < margin:
        return None  # entries holding only common terms could make the top
    scores = {doc: score for doc, score, _ in rows}
    cur = await conn.execute(_PROBE, weights.params(common, docs=sorted(scores)))
    for doc, score in await cur.fetchall():
        scores[doc] += score
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:top_k]
    cur = await conn.execute(
        "SELECT doc, id FROM lexical_docs WHERE doc = ANY(%s)", ([doc for doc, _ in best],)
    )
    ids: dict[int, str] = dict(await cur.fetchall())
    return sorted(((ids[doc], float(score)) for doc, score in best), key=lambda h: (-h[1], h[0]))


async def _ids(conn: Conn) -> list[str]:
    cur = await conn.execute("SELECT id FROM lexical_docs ORDER BY id")
    return [row[0] for row in await cur.fetchall()]


async def _count(conn: Conn) -> int:
    return await scalar(await conn.execute("SELECT COALESCE(max(n), 0) FROM lexical_totals"))
