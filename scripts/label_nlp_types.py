"""A labelled sample of NLPExtractor entities, and its precision per type.

Usage::

    # pick the snippets (fixed seed) and add the entities the extractor gives
    # on them to the sample, keeping every label already there
    python scripts/label_nlp_types.py build --column after

    # precision of "is a name" and per type, before (stored) and now (re-run)
    python scripts/label_nlp_types.py score

The snippets come from ``../shared/data``: token windows of *A Christmas
Carol* cut like the chunker cuts (mid-line at both ends), whole HotpotQA
passages (title line first, as ``scripts/eval_recall.py`` indexes them)
and the opening sentences of CMRC 2018 paragraphs. The sample file holds
the snippets and, per (snippet, name): a context excerpt, the type the
extractor assigned before the fixes (``before_type``) and after them
(``after_type``; ``null`` where that extractor did not give the name),
and the labels ``is_name`` (a proper name or title, exactly delimited)
and ``correct_type`` (``null`` when not a name). Labels are written by
hand; ``build`` leaves them ``null`` for new rows and ``score --todo``
lists what is unlabelled.

``score`` needs no ``../shared``: it re-runs the extractor on the stored
snippets (``tests/offline/test_nlp_type_sample.py`` does the same).
Precision of "is a name" is the share of extracted entities labelled
names; the precision of a type is the share of entities given that type
that are names of that type. Unlabelled entities count as wrong.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SAMPLE = ROOT / "tests" / "offline" / "data" / "nlp_type_sample.json"
TYPES = ("Person", "Organization", "Location", "Event", "Content", "Artifact", "Concept")
COUNTS = {"christmas_carol": 22, "hotpotqa": 9, "cmrc": 6}
WINDOW_TOKENS = 160
CMRC_CHARS = 220
NOTE = (
    "Built by scripts/label_nlp_types.py; labels by hand. is_name: a proper name or title, "
    "exactly delimited; correct_type: its kgrag type (null when not a name)."
)


def carol_snippets(data: Path, rng: random.Random, n: int) -> list[str]:
    """``n`` distinct token windows of A Christmas Carol, cut where a token chunker would cut."""
    from kgrag.llm.tokenizer import get_tokenizer

    tokenizer = get_tokenizer()
    tokens = tokenizer.encode(
        (data / "christmas_carol" / "book.txt").read_text(encoding="utf-8-sig")
    )
    starts = sorted(rng.sample(range(0, len(tokens) - WINDOW_TOKENS, WINDOW_TOKENS), n))
    return [tokenizer.decode(tokens[s : s + WINDOW_TOKENS]) for s in starts]


def hotpot_snippets(data: Path, rng: random.Random, n: int) -> list[str]:
    """``n`` HotpotQA passages as the recall evaluation indexes them (title, newline, text)."""
    corpus = json.loads((data / "hotpotqa" / "hotpotqa_train_corpus.json").read_text())
    passages = [f"{t}\n{''.join(s)}" for t, s in corpus.items()]
    return [passages[i] for i in sorted(rng.sample(range(len(passages)), n))]


def cmrc_snippets(data: Path, rng: random.Random, n: int) -> list[str]:
    """The opening sentences (up to ``CMRC_CHARS``) of ``n`` CMRC 2018 paragraphs."""
    articles = json.loads((data / "zh" / "cmrc2018_trial.squad.json").read_text())["data"]
    paragraphs = [p["context"] for a in articles for p in a["paragraphs"]]
    out = []
    for i in sorted(rng.sample(range(len(paragraphs)), n)):
        text = paragraphs[i][:CMRC_CHARS]
        out.append(text[: text.rfind("。") + 1] or text)
    return out


def pick_snippets(data: Path, seed: int) -> list[dict[str, str]]:
    """The sample's snippets, drawn with ``seed`` (one generator per source): ids, sources and texts."""
    makers = {"christmas_carol": carol_snippets, "hotpotqa": hotpot_snippets, "cmrc": cmrc_snippets}
    return [
        {"id": f"{source}-{i}", "source": source, "text": text}
        for source, make in makers.items()
        for i, text in enumerate(make(data, random.Random(f"{seed}-{source}"), COUNTS[source]))
    ]


def extract(snippets: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Entities of the current extractor per (snippet id, name): type and description."""
    from kgrag.extract.nlp import NLPExtractor
    from kgrag.types import Chunk

    extractor = NLPExtractor()
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for snip in snippets:
        chunk = Chunk(
            id=snip["id"],
            doc_id="sample",
            content=snip["text"],
            tokens=0,
            order=0,
            file_path=snip["source"],
        )
        for e in extractor.extract_sync(chunk).entities:
            found[(snip["id"], e.name)] = {"type": e.type, "description": e.description}
    return found


def context(text: str, name: str, description: str, width: int = 80) -> str:
    """About ``2 * width`` characters of ``text`` around the first ``name``, else the description."""
    at = text.find(name)
    if at < 0:
        return " ".join(description.split())[: 2 * width]
    return " ".join(text[max(0, at - width) : at + len(name) + width].split())


def merge(sample: dict[str, Any], found: dict[tuple[str, str], dict[str, Any]], column: str) -> int:
    """Write ``column`` (before_type or after_type) from ``found`` into the rows, adding rows for
    new (snippet, name) pairs and dropping rows neither extractor gives; the number added."""
    texts = {s["id"]: s["text"] for s in sample["snippets"]}
    rows = {(r["snippet"], r["name"]): r for r in sample["entities"]}
    for row in rows.values():
        row[column] = None
    added = 0
    for (sid, name), got in found.items():
        if (sid, name) not in rows:
            rows[(sid, name)] = {
                "snippet": sid,
                "name": name,
                "context": context(texts[sid], name, got["description"]),
                "before_type": None,
                "after_type": None,
                "is_name": None,
                "correct_type": None,
            }
            added += 1
        rows[(sid, name)][column] = got["type"]
    sample["entities"] = [r for r in rows.values() if r["before_type"] or r["after_type"]]
    return added


def precision(assigned: list[tuple[str, dict[str, Any] | None]]) -> dict[str, Any]:
    """Name precision and per-type precision of (assigned type, label row or None) pairs."""

    def good_name(row: dict[str, Any] | None) -> bool:
        """A labelled row that is a name."""
        return bool(row and row["is_name"])

    out: dict[str, Any] = {
        "entities": len(assigned),
        "unlabelled": sum(r is None or r["is_name"] is None for _, r in assigned),
    }
    out["name_precision"] = _percent(sum(good_name(r) for _, r in assigned), len(assigned))
    per_type: dict[str, Any] = {}
    for kind in TYPES:
        rows = [r for t, r in assigned if t == kind]
        if rows:
            right = sum(good_name(r) and r["correct_type"] == kind for r in rows)
            per_type[kind] = {"n": len(rows), "precision": _percent(right, len(rows))}
    out["types"] = per_type
    typed = sum(good_name(r) and r["correct_type"] == t for t, r in assigned)
    out["type_precision"] = _percent(typed, len(assigned))
    return out


def _percent(part: int, whole: int) -> float:
    """``part`` of ``whole`` in percent, one decimal (0 for an empty whole)."""
    return round(100 * part / whole, 1) if whole else 0.0


def score(
    sample: dict[str, Any], found: dict[tuple[str, str], dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Precision before the fixes (stored ``before_type``) and now (the extractor re-run)."""
    rows = {(r["snippet"], r["name"]): r for r in sample["entities"]}
    labelled = {k: r for k, r in rows.items() if r["is_name"] is not None}
    before = [(r["before_type"], labelled.get(k)) for k, r in rows.items() if r["before_type"]]
    found = extract(sample["snippets"]) if found is None else found
    now = [(got["type"], labelled.get(k)) for k, got in found.items()]
    return {
        "before": precision(before),
        "now": precision(now),
        "unlabelled_now": sorted(f"{k[0]}: {k[1]}" for k, _ in found.items() if k not in labelled),
    }


def table(result: dict[str, Any]) -> str:
    """The two precision columns as a plain-text table."""
    b, n = result["before"], result["now"]
    lines = [
        f"{'':<22}{'before':>16}{'now':>16}",
        f"{'entities':<22}{b['entities']:>16}{n['entities']:>16}",
        f"{'is a name':<22}{b['name_precision']:>15}%{n['name_precision']:>15}%",
        f"{'name and type right':<22}{b['type_precision']:>15}%{n['type_precision']:>15}%",
    ]
    for kind in TYPES:
        cells = [
            f"{c['types'][kind]['precision']}% of {c['types'][kind]['n']}"
            if kind in c["types"]
            else "-"
            for c in (b, n)
        ]
        lines.append(f"{kind:<22}{cells[0]:>16}{cells[1]:>16}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``build`` or ``score``, as in the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("build", "score"))
    ap.add_argument(
        "--column",
        choices=("before", "after"),
        default="after",
        help="build: which extractor this is (before or after the fixes)",
    )
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--sample", default=str(SAMPLE))
    ap.add_argument("--seed", type=int, default=2018)
    ap.add_argument("--todo", action="store_true", help="score: list the unlabelled entities")
    args = ap.parse_args(argv)
    path = Path(args.sample)
    sample = json.loads(path.read_text()) if path.exists() else None
    if args.command == "build":
        if sample is None:
            sample = {
                "seed": args.seed,
                "note": NOTE,
                "snippets": pick_snippets(Path(args.data), args.seed),
                "entities": [],
            }
        added = merge(sample, extract(sample["snippets"]), f"{args.column}_type")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(sample, indent=1, ensure_ascii=False) + "\n")
        print(
            f"{path}: {len(sample['snippets'])} snippets, {len(sample['entities'])} entities, {added} new"
        )
        return 0
    if sample is None:
        raise SystemExit(f"{path} does not exist; run build first")
    result = score(sample)
    print(table(result))
    if args.todo:
        print("\n".join(result["unlabelled_now"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
