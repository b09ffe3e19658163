"""Build the labelled entity-resolution set in tests/resolution/data/ (docs/resolution.md).

    .venv/bin/python scripts/build_dedupe_set.py --shared ../shared/data --work /tmp/dedupe-set

Indexes each corpus with the NLP extractor (no LLM) and the fake embedder,
proposes labelled pairs from rules that use what the resolver does not
(the passage a title owns, the novel's own 姓X名Y字Z statements, the types
the extractor gave), and writes, per corpus, a small graph fixture: the
labelled entities and their rivals (every name sharing a word with them),
with types, descriptions, neighbours, sources and the sentences of the
chunks each pair shares. The pairs were then read through by hand
(``--show``) and the wrong ones listed in ``EXCLUDE``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from itertools import combinations
from pathlib import Path

from kgrag.api.facade import KGRag
from kgrag.config.settings import Settings
from kgrag.curation.resolution.names import Name, is_distinguishing, parse, spelling_only
from kgrag.curation.resolution.statements import sentences, stated_aliases
from kgrag.curation.resolution.view import Entity, GraphView, load_view

OUT = Path(__file__).resolve().parent.parent / "tests" / "resolution" / "data"
ZH_CHARS = 300_000  # the first chapters of the novel
PER_TYPE = 60  # pairs kept per (corpus, group type), in a fixed order
# pairs a reading found mislabelled by the rules (nicknames, spelling variants of one person)
EXCLUDE: set[frozenset[str]] = {
    frozenset(p)
    for p in [
        ("Bill Clinton", "William J. Clinton"),
        ("Anthony Chandris", "Antony Chandris"),
        ("Carl Philipp Emanuel Bach", "Karl Philipp Emmanuel Bach"),
        ("Hilli-ho", "Yo ho"),
        ("Tim", "Tim Cratchit"),
        ("Seattle Coffee Company", "Seattle Coffee Holdings"),
        ("Rank", "Rank Group"),
        ("Germanic", "Old Germanic"),
    ]
}
NICKNAMES = {frozenset(p) for p in [("bill", "william"), ("bob", "robert"), ("tim", "tiny")]}
# pairs read off the graph by hand where no rule reaches (the book names no titles)
HAND = {
    "christmas_carol": [
        ("Bob", "Bob Cratchit", "same", "containment"),
        ("Jacob", "Jacob Marley", "same", "containment"),
        ("Marley", "Jacob Marley", "same", "containment"),
        ("Scrooge", "Ebenezer Scrooge", "same", "containment"),
        ("Ebenezer", "Ebenezer Scrooge", "same", "containment"),
        ("Tim", "Tiny Tim", "same", "containment"),
        ("Tim's", "Tiny Tim", "same", "possessive"),
        ("Tim", "Tim's", "same", "possessive"),
        ("Peter", "Peter Cratchit", "same", "containment"),
        ("Martha", "Martha Cratchit", "same", "containment"),
        ("Dick", "Dick Wilkins", "same", "containment"),
        ("Joe", "Joe Miller", "different", "shared given name"),
        ("Fezziwig", "Fezziwigs", "different", "family member"),
        ("Bob Cratchit", "Cratchit", "different", "family member"),
        ("Evil Spirit", "Good Spirit", "different", "numbered variant"),
    ],
}


def documents(shared: Path, corpus: str) -> list[tuple[str, str]]:
    if corpus == "hotpotqa":
        data = json.loads((shared / "hotpotqa/hotpotqa_train_corpus.json").read_text())
        return [(t, t + "\n\n" + "".join(s)) for t, s in data.items()]
    if corpus == "musique":
        rows = json.loads((shared / "musique/musique_train_corpus.json").read_text())
        return list(
            {r["title"]: (r["title"], r["title"] + "\n\n" + r["text"]) for r in rows}.values()
        )
    if corpus == "christmas_carol":
        return [("christmas_carol", (shared / "christmas_carol/book.txt").read_text())]
    text = (shared / "zh/sanguoyanyi.txt").read_text(encoding="utf-8").replace("\r\n", "\n")
    return [("sanguoyanyi", text[:ZH_CHARS])]


async def index(shared: Path, work: Path, corpus: str) -> tuple[GraphView, dict[str, str]]:
    s = Settings(
        workdir=str(work / corpus), llm_provider="none", embedding_provider="fake", extractor="nlp"
    )
    if corpus == "sanguoyanyi":
        s = s.with_overrides(language="Chinese")
    async with KGRag(s) as rag:
        if await rag.storage.graph.node_count() == 0:
            docs = documents(shared, corpus)
            await rag.insert([d[1] for d in docs], ids=[d[0] for d in docs])
        view = await load_view(rag.storage, with_vectors=False)
        ids = sorted({c for e in view.entities.values() for c in e.sources})
        texts = {}
        for i in range(0, len(ids), 500):
            texts.update(await view.texts(ids[i : i + 500]))
        return view, texts


def person(e: Entity) -> bool:
    return "Person" in e.types or e.type == "Person"


def _shares(a: Entity, b: Entity) -> bool:
    return bool(a.sources & b.sources)


def alias_pairs(view: GraphView, names: dict[str, Name], titles: set[str]) -> list[tuple]:
    """(a, b, group type) pairs for one thing."""
    ents, out = view.entities, []
    by_key: dict[str, list[str]] = {}
    for raw, n in names.items():
        by_key.setdefault(n.key, []).append(raw)
    for members in by_key.values():
        for a, b in combinations(sorted(members), 2):
            na, nb = names[a], names[b]
            if na.gender == "f" or nb.gender == "f" or na.qualifier != nb.qualifier:
                continue
            kind = _same_key_kind(na, nb, ents[a], ents[b])
            if kind:
                out.append((a, b, kind))
    for t in sorted(titles & set(ents)):
        toks = names[t].tokens
        if person(ents[t]) and len(toks) >= 2 and not names[t].cjk:
            short = [s for s in ents if names[s].tokens == toks[-1:] and person(ents[s])]
            # the surname alone stands for the title's person only where it never appears without it
            out += [(t, s, "containment") for s in short if ents[s].sources <= ents[t].sources]
    return out


def _same_key_kind(na: Name, nb: Name, ea: Entity, eb: Entity) -> str | None:
    """The group type of two names with one key, or None where the rules cannot tell."""
    a, b = na.raw, nb.raw
    if na.corporate != nb.corporate:
        return None if person(ea) or person(eb) else "corporate suffix"
    if re.sub(r"['’]s\b", "", a) == b or re.sub(r"['’]s\b", "", b) == a:
        return "possessive"
    if na.words != nb.words:  # a title dropped: only between two people met together
        return "honorific" if person(ea) and person(eb) and _shares(ea, eb) else None
    return "spelling" if spelling_only(na, nb) else "acronym vs word"


def acronym_pairs(view: GraphView, texts: dict[str, str]) -> list[tuple]:
    out = []
    for text in texts.values():
        for m in re.finditer(r"((?:[A-Z][\w&.-]*\s+){1,6}[A-Z][\w.-]*)\s+\(([A-Z]{2,8})\)", text):
            long, short = m.group(1).strip(), m.group(2)
            long = re.sub(r"^The\s+", "", long)
            words = [w for w in long.split() if w.lower() not in ("of", "the", "and", "for", "&")]
            if "".join(w[0] for w in words).upper() != short:
                continue
            if long in view.entities and short in view.entities:
                out.append((long, short, "acronym"))
    return out


def courtesy_pairs(view: GraphView, texts: dict[str, str], said: dict[str, str]) -> list[tuple]:
    """Courtesy names the novel states (姓刘，名备，字玄德); ``said`` gets the statements' chunks."""
    out = []
    for cid, text in texts.items():
        for name, alias, sentence in stated_aliases(text):
            if name in view.entities and alias in view.entities and name != alias:
                if name[0] not in "名字姓" and alias[0] not in "名字姓":
                    out.append((name, alias, "courtesy name"))
                    said[cid] = (said.get(cid, "") + "\n" + sentence).strip()
    return out


def negative_pairs(
    view: GraphView, names: dict[str, Name], aliases: set[frozenset[str]]
) -> list[tuple]:
    """(a, b, group type) pairs for different things."""
    ents, out = view.entities, []
    people = sorted(n for n, e in ents.items() if person(e))
    by_last: dict[str, list[str]] = {}
    for p in people:
        n = names[p]
        if n.cjk and 2 <= len(n.key) <= 3:
            by_last.setdefault("zh:" + n.key[0], []).append(p)
        elif len(n.tokens) >= 2:
            by_last.setdefault(n.tokens[-1], []).append(p)
    for group in by_last.values():
        for a, b in combinations(group, 2):
            na, nb = names[a], names[b]
            first = (na.key[1:], nb.key[1:]) if na.cjk else (na.tokens[0], nb.tokens[0])
            if frozenset((a, b)) in aliases or _same_person(na, nb, first):
                continue
            out.append((a, b, "family member" if _shares(ents[a], ents[b]) else "shared surname"))
    for p in people:
        if names[p].gender == "f" and len(names[p].tokens) == 1:
            full = [
                q
                for q in people
                if len(names[q].tokens) >= 2 and names[q].tokens[-1] == names[p].tokens[0]
            ]
            out += [(p, q, "family member") for q in full if names[q].gender != "f"]
            bare = [q for q in people if names[q].key == names[p].key and names[q].gender == ""]
            out += [(p, q, "family member") for q in bare]
    out += variant_pairs(names)
    out += company_pairs(view, names, people)
    return out


def _same_person(na: Name, nb: Name, first: tuple[str, str]) -> bool:
    """Name pairs that may well be one person: initials, nicknames, one spelling apart."""
    x, y = first
    if x.startswith(y) or y.startswith(x) or frozenset(first) in NICKNAMES:
        return True
    if set(na.tokens) <= set(nb.tokens) or set(nb.tokens) <= set(na.tokens):
        return True
    return (len(x) == len(y) and sum(c != d for c, d in zip(x, y, strict=True)) <= 1) or (
        abs(len(x) - len(y)) == 1 and (x in y or y in x or _one_insert(x, y))
    )


def _one_insert(x: str, y: str) -> bool:
    short, long = sorted((x, y), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def variant_pairs(names: dict[str, Name]) -> list[tuple]:
    stems: dict[tuple, list[str]] = {}
    for raw, n in names.items():
        if n.cjk or len(n.tokens) < 2:
            continue
        stem = tuple(t for t in n.tokens if not is_distinguishing(t))
        if stem and len(stem) < len(n.tokens):
            stems.setdefault(stem, []).append(raw)
    out = []
    for members in stems.values():
        for a, b in combinations(sorted(members), 2):
            if names[a].key != names[b].key:
                out.append((a, b, "numbered variant"))
    return out


def company_pairs(view: GraphView, names: dict[str, Name], people: list[str]) -> list[tuple]:
    orgs = [n for n, e in view.entities.items() if "Organization" in e.types and not person(e)]
    out = []
    for p in people:
        toks = names[p].tokens
        if len(toks) < 2 or names[p].cjk:
            continue
        for o in orgs:
            ot = names[o].tokens
            if len(ot) > len(toks) and ot[: len(toks)] == toks:
                out.append((p, o, "person vs company"))
    return out


def traditional(view: GraphView, names: dict[str, Name], count: int) -> list[tuple]:
    """Traditional-script twins of the best-supported Chinese persons (half their sources each)."""
    import opencc

    conv = opencc.OpenCC("s2t")
    people = [
        n for n, e in view.entities.items() if names[n].cjk and person(e) and len(e.sources) >= 4
    ]
    people.sort(key=lambda n: (-view.entities[n].support, n))
    out = []
    for name in people:
        twin = conv.convert(name)
        if twin == name or twin in view.entities:
            continue
        e = view.entities[name]
        srcs = sorted(e.sources)
        view.entities[twin] = Entity(
            twin, e.type, e.types, conv.convert(e.description), frozenset(srcs[1::2]), e.neighbours
        )
        view.entities[name] = Entity(
            name, e.type, e.types, e.description, frozenset(srcs[::2]), e.neighbours
        )
        out.append((name, twin, "traditional/simplified"))
        if len(out) >= count:
            break
    return out


def cap(pairs: list[tuple], label: str) -> list[dict]:
    seen, kept, per = set(), [], {}
    for a, b, kind in sorted(pairs, key=lambda p: (p[2], p[0], p[1])):
        key = frozenset((a, b))
        if key in seen or key in EXCLUDE or len(key) < 2:
            continue
        seen.add(key)
        per[kind] = per.get(kind, 0) + 1
        if per[kind] <= PER_TYPE:
            kept.append({"a": a, "b": b, "label": label, "type": kind})
    return kept


def rivals(view: GraphView, names: dict[str, Name], labelled: set[str]) -> set[str]:
    """Labelled names and the names sharing a word (or, in Chinese, a character) with them."""
    postings: dict[str, int] = {}
    for n in names.values():
        for t in set(n.tokens):
            postings[t] = postings.get(t, 0) + 1
    words = {t for n in labelled for t in names[n].tokens if not names[n].cjk and postings[t] <= 10}
    chars = {names[n].key[0] for n in labelled if names[n].cjk}
    keep = set(labelled)
    for raw, n in names.items():
        if not n.cjk and words & set(n.tokens):
            keep.add(raw)
        elif n.cjk and n.key[:1] in chars and len(n.key) <= 3 and person(view.entities[raw]):
            keep.add(raw)  # a Chinese name's rivals: the people sharing its surname
    return keep


def fixture(
    view: GraphView, keep: set[str], pairs: list[dict], texts: dict[str, str], said: dict[str, str]
) -> dict:
    ents = {}
    for n in sorted(keep):
        e = view.entities[n]
        ents[n] = {
            "type": e.type,
            "types": sorted(e.types),
            "description": e.description[:160],
            "sources": sorted(e.sources),
            "neighbours": sorted(e.neighbours)[:40],
        }
    chunks: dict[str, str] = dict(said)
    for p in pairs:
        a, b = view.entities[p["a"]], view.entities[p["b"]]
        for cid in sorted(a.sources & b.sources)[:4]:
            said = [s for s in sentences(texts.get(cid, "")) if p["a"] in s and p["b"] in s]
            chunks[cid] = "\n".join(dict.fromkeys(chunks.get(cid, "").split("\n") + said)).strip()
    return _short_ids({"entities": ents, "chunks": chunks, "pairs": pairs})


def _short_ids(data: dict) -> dict:
    """Chunk ids as c1, c2... in first-seen order (the fixture's size is mostly ids)."""
    short: dict[str, str] = {}
    for e in data["entities"].values():
        e["sources"] = [short.setdefault(c, f"c{len(short)}") for c in e["sources"]]
    data["chunks"] = {short.setdefault(c, f"c{len(short)}"): t for c, t in data["chunks"].items()}
    return data


async def build(shared: Path, work: Path, corpus: str) -> dict:
    view, texts = await index(shared, work, corpus)
    said: dict[str, str] = {}
    names = {n: parse(n) for n in view.entities}
    titles = (
        {t for t, _ in documents(shared, corpus)} if corpus in ("hotpotqa", "musique") else set()
    )
    aliases = alias_pairs(view, names, titles) + acronym_pairs(view, texts)
    if corpus == "sanguoyanyi":
        aliases += courtesy_pairs(view, texts, said) + traditional(view, names, PER_TYPE)
        names = {n: parse(n) for n in view.entities}
    negatives = negative_pairs(view, names, {frozenset(p[:2]) for p in aliases})
    hand = [p for p in HAND.get(corpus, []) if p[0] in view.entities and p[1] in view.entities]
    negatives += [(a, b, kind) for a, b, label, kind in hand if label == "different"]
    aliases += [(a, b, kind) for a, b, label, kind in hand if label == "same"]
    negatives += [p for p in aliases if p[2] == "acronym vs word"]
    aliases = [p for p in aliases if p[2] != "acronym vs word"]
    pairs = cap(aliases, "same") + cap(negatives, "different")
    labelled = {n for p in pairs for n in (p["a"], p["b"])}
    return fixture(view, rivals(view, names, labelled), pairs, texts, said)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=Path("../shared/data"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/dedupe-set"))
    ap.add_argument(
        "--corpus", nargs="*", default=["christmas_carol", "hotpotqa", "musique", "sanguoyanyi"]
    )
    ap.add_argument("--show", action="store_true", help="print the pairs for reading")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for corpus in args.corpus:
        data = asyncio.run(build(args.shared, args.work, corpus))
        path = OUT / f"{corpus}.json"
        path.write_text(json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True) + "\n")
        print(
            corpus,
            len(data["entities"]),
            "entities",
            len(data["pairs"]),
            "pairs",
            path.stat().st_size,
        )
        if args.show:
            for p in data["pairs"]:
                print(f"  {p['label']:9} {p['type']:22} {p['a']} | {p['b']}")


if __name__ == "__main__":
    main()
