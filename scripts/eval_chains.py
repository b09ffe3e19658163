"""Do offline answers follow a chain to its last hop? The generated chain set (tests/chains/).

Usage::

    .venv/bin/python scripts/eval_chains.py --out runs/eval/chains.json
    .venv/bin/python scripts/eval_chains.py --limit 3 --modes path,naive

Each item of :mod:`tests.chains.generate` (a two- or three-hop question, its
true chain and a distractor chain sharing the relation names) is indexed on
its own, offline, in a temporary folder: the NLP extractor and the fake
embedder (no chat model, so answers are extractive). Then the question is
asked in every mode through the public API, once for the answer
(``rag.query``) and once for the retrieved chunks (``rag.query_data``).

A quote *holds* a sentence when, whitespace-normalised, it contains it whole
or is a piece of at least half of it. Reported per mode, as shares of the
items: ``final_first`` (a quote holds the final hop's sentence and no
earlier quote holds a distractor sentence: the figure of issue 22),
``final_quoted`` (the final hop is quoted at all), ``final_in_context``
(the final hop's chunk was retrieved: the ceiling), ``distractor_end``
(the distractor's final hop is quoted); and how often each label opens the
answer. Each item's *order* lists its quotes' labels (``t2``: the true
chain's second hop, ``d3``: the distractor's third, ``-``: neither).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]  # tests.chains (kgrag itself comes from the venv)

from tests.chains.generate import ChainItem, generate  # noqa: E402

from kgrag import KGRag, Settings  # noqa: E402

MODES = ("path", "ppr", "mix", "hybrid", "local", "naive")
QUOTE = re.compile(r'^\d+\. "(.*)" \[(\d+)[^\]]*\]$')
REFERENCE = re.compile(r"^\[(\d+)\] (\S+)\.txt")
MEASURES = ("final_first", "final_quoted", "final_in_context", "distractor_end")


@dataclass
class Outcome:
    """One item asked in one mode."""

    order: list[str]  # each quote's hops, joined by "+"; "~t2": no hop, from t2's document
    final_first: bool
    final_quoted: bool
    final_in_context: bool
    distractor_end: bool


@dataclass
class ModeTally:
    counts: Counter[str] = field(default_factory=Counter)
    openers: Counter[str] = field(default_factory=Counter)
    items: int = 0
    errors: int = 0  # queries that raised
    by_hops: Counter[int] = field(default_factory=Counter)  # items per hop count
    first_by_hops: Counter[int] = field(default_factory=Counter)  # final_first per hop count

    def add(self, o: Outcome, hops: int) -> None:
        self.items += 1
        self.by_hops[hops] += 1
        self.first_by_hops[hops] += o.final_first
        self.counts.update(m for m in MEASURES if getattr(o, m))
        self.openers[o.order[0] if o.order else "(no quote)"] += 1
        self.errors += bool(o.order and o.order[0].startswith("error"))

    def summary(self) -> dict[str, object]:
        shares = {m: round(self.counts[m] / max(self.items, 1), 3) for m in MEASURES}
        first = dict(self.openers.most_common())
        hops = {
            f"final_first_{h}hop": round(self.first_by_hops[h] / n, 3)
            for h, n in self.by_hops.items()
        }
        return {**shares, **hops, "items": self.items, "errors": self.errors, "first_quote": first}


def norm(text: str) -> str:
    return " ".join(text.split())


def holds(quote: str, sentence: str) -> bool:
    """Whether ``quote`` holds ``sentence`` whole, or is at least half of it."""
    q, s = norm(quote), norm(sentence)
    return bool(s) and (s in q or (q in s and len(q) >= len(s) / 2))


def quotes(answer: str) -> list[tuple[str, str]]:
    """(quoted text, the document it cites) of each quote of an extractive answer, in order."""
    lines = [line.strip() for line in answer.splitlines()]
    docs = {m.group(1): m.group(2) for line in lines if (m := REFERENCE.match(line))}
    return [(m.group(1), docs.get(m.group(2), "?")) for line in lines if (m := QUOTE.match(line))]


def labels(item: ChainItem, quote: str, doc: str) -> str:
    """The hops ``quote`` holds (``t2+d1``), or ``~t2``: none, from the document of ``t2``."""
    found = [f"t{k + 1}" for k, s in enumerate(item.chain) if holds(quote, s)]
    found += [f"d{k + 1}" for k, s in enumerate(item.distractor) if holds(quote, s)]
    return "+".join(found) or f"~{doc}"


def judge(item: ChainItem, answer: str, chunks: list[str]) -> Outcome:
    """Score one answer and its retrieved chunks against ``item``'s chains."""
    order = [labels(item, q, doc) for q, doc in quotes(answer)]
    final = f"t{item.hops}"
    at = next((i for i, o in enumerate(order) if final in o.split("+")), None)
    wrong = next((i for i, o in enumerate(order) if o.startswith("d") or "+d" in o), None)
    return Outcome(
        order=order,
        final_first=at is not None and (wrong is None or at < wrong),
        final_quoted=at is not None,
        final_in_context=any(holds(c, item.final) for c in chunks),
        distractor_end=any(f"d{item.hops}" in o.split("+") for o in order),
    )


def settings(workdir: str) -> Settings:
    """Offline: no chat model, the NLP extractor, the fake embedder the tests use."""
    return Settings(
        workdir=workdir, llm_provider="none", embedding_provider="fake", extractor="nlp"
    )


async def ask_item(item: ChainItem, modes: list[str]) -> dict[str, Outcome]:
    """Index ``item``'s corpus in a fresh folder and ask its question in every mode."""
    ids, texts = zip(*item.documents, strict=True)
    with tempfile.TemporaryDirectory(prefix="kgrag-chains-") as workdir:
        async with KGRag(settings(workdir)) as rag:
            await rag.insert(list(texts), ids=list(ids), file_paths=[f"{i}.txt" for i in ids])
            out = {}
            for mode in modes:
                try:
                    result = await rag.query(item.question, mode=mode)
                    data = await rag.query_data(item.question, mode=mode)
                except Exception as exc:  # a failing query is a finding, not the end of the run
                    out[mode] = Outcome([f"error: {type(exc).__name__}: {exc}"], *[False] * 4)
                    continue
                chunks = [str(c["content"]) for c in data["chunks"]]
                out[mode] = judge(item, result.answer, chunks)
    return out


async def run(items: list[ChainItem], modes: list[str]) -> dict[str, object]:
    tallies = {m: ModeTally() for m in modes}
    rows = []
    for n, item in enumerate(items, 1):
        outcomes = await ask_item(item, modes)
        for mode, outcome in outcomes.items():
            tallies[mode].add(outcome, item.hops)
        rows.append(
            {"id": item.id, "question": item.question, "answer": item.answer}
            | {m: " ".join(o.order) or "(no quote)" for m, o in outcomes.items()}
        )
        if n % 10 == 0:
            print(f"  {n}/{len(items)} items", file=sys.stderr)
    return {"modes": {m: t.summary() for m, t in tallies.items()}, "items": rows}


def table(report: dict[str, object], title: str) -> str:
    """The per-mode figures as a Markdown table (percent)."""
    modes = report["modes"]
    assert isinstance(modes, dict)
    lines = [
        f"{title}",
        "",
        "| mode | final hop first | final hop quoted | final hop in context | distractor end quoted "
        "| first, 2 hops | first, 3 hops | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for mode, s in modes.items():
        cells = " | ".join(f"{100 * s[m]:.1f}" for m in MEASURES)
        by_hops = " | ".join(f"{100 * s.get(f'final_first_{h}hop', 0):.1f}" for h in (2, 3))
        lines.append(f"| {mode} | {cells} | {by_hops} | {s['errors']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--limit", type=int, default=None, help="the first N items only")
    parser.add_argument("--lang", choices=("en", "zh", "all"), default="all")
    parser.add_argument("--out", default=None, help="write the report as JSON here")
    args = parser.parse_args(argv)
    items = [i for i in generate() if args.lang in ("all", i.lang)][: args.limit]
    start = time.perf_counter()
    report = asyncio.run(run(items, args.modes.split(",")))
    report["seconds"] = round(time.perf_counter() - start, 1)
    print(table(report, f"{len(items)} items ({args.lang}), {report['seconds']} s"))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, ensure_ascii=False, indent=1))
    return report


if __name__ == "__main__":
    main()
