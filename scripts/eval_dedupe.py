"""Precision and recall of ``kgrag dedupe`` on the labelled set, per group type.

    .venv/bin/python scripts/eval_dedupe.py [--min-score 0.6] [--llm] [--errors]
    .venv/bin/python scripts/eval_dedupe.py --bench 100000   # time and memory at scale

The set is tests/resolution/data/*.json (built by scripts/build_dedupe_set.py,
described in docs/resolution.md). ``--llm`` adds the judgement of the
built-in fake chat model (the mechanics: calls, cache hits; its verdicts
are a word-overlap rule, not a model's). ``--bench N`` times resolution
over a synthetic graph of N entities with vectors and reports peak memory.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from pathlib import Path

import numpy as np

from kgrag.curation.resolution.engine import Options, resolve_view
from kgrag.curation.resolution.evaluate import evaluate, load_fixture, merge, table
from kgrag.curation.resolution.view import Entity, GraphView
from kgrag.llm.cache import LLMCache
from kgrag.llm.fake import FakeChatProvider
from kgrag.llm.ledger import Ledger
from kgrag.llm.limiter import PriorityLimiter
from kgrag.llm.service import ChatService

DATA = Path(__file__).resolve().parent.parent / "tests" / "resolution" / "data"


class DictKV:
    """The part of a key-value namespace the LLM cache uses, in memory."""

    namespace = "llm_cache"

    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}

    async def get(self, key: str) -> dict | None:
        return self.rows.get(key)

    async def upsert(self, items: dict[str, dict]) -> None:
        self.rows.update(items)

    async def delete(self, keys) -> None:  # type: ignore[no-untyped-def]
        for k in keys:
            self.rows.pop(k, None)


def fake_chat() -> ChatService:
    """The fake chat model behind kgrag's cache and ledger."""
    return ChatService(
        FakeChatProvider(),
        cache=LLMCache(DictKV()),  # type: ignore[arg-type]
        limiter=PriorityLimiter(4),
        ledger=Ledger(),
    )


async def run_eval(min_score: float, llm: bool, errors: bool) -> None:
    chat = fake_chat() if llm else None
    scores = []
    for path in sorted(DATA.glob("*.json")):
        view, pairs = load_fixture(path)
        scores.append(await evaluate(view, pairs, Options(min_score=min_score), chat=chat))
    total = merge(scores)
    print(table(total))
    if chat is not None:
        print("\nLLM judgements:", chat.ledger.snapshot().get("resolve", {}))
    if errors:
        for e in total.errors:
            print(f"  {e['label']:9} {e['type']:22} {e['a']} | {e['b']}")


SYLLABLES = "ba ko ri ten sha vol mi dru ek lan po zu har nim ost ca fe gil jo wy".split()


def _words(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` distinct made-up names of two to four syllables (initials spread out)."""
    out: set[str] = set()
    while len(out) < count:
        k = int(rng.integers(2, 5))
        out.add("".join(SYLLABLES[int(i)] for i in rng.integers(0, len(SYLLABLES), k)).title())
    return sorted(out)


def synthetic(n: int, dim: int = 384) -> GraphView:
    """``n`` person names: given names and surnames recombined, surnames alone, spelling twins.

    Hard on blocking: every surname alone is contained in many full names.
    One name in a hundred has a spelling twin ("...e") whose vector is its
    own plus a little noise, so the vector rule has real neighbours to find.
    """
    rng = np.random.default_rng(0)
    given, family = _words(rng, 2000), _words(rng, max(10, n // 20))
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < n:
        last = family[int(rng.integers(len(family)))]
        name = last if rng.random() < 0.1 else f"{given[int(rng.integers(len(given)))]} {last}"
        if name not in seen:
            seen.add(name)
            names.append(name)
    vectors = {name: rng.standard_normal(dim).astype(np.float32) for name in names}
    for name in names[: n // 100]:
        twin = name + "e"
        vectors[twin] = vectors[name] + 0.05 * rng.standard_normal(dim).astype(np.float32)
    ents = []
    for i, name in enumerate(sorted(vectors)):
        hood = frozenset(names[int(j)] for j in rng.integers(0, n, 3))
        src = frozenset({f"c{i // 3}", f"c{int(rng.integers(n))}"})
        ents.append(Entity(name, "Person", frozenset({"Person"}), f"{name} text", src, hood))
    view = GraphView.of(ents, {})
    view.vectors = vectors
    return view


async def run_bench(n: int) -> None:
    view = synthetic(n)
    started = time.perf_counter()
    report = await resolve_view(view, Options())
    took = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{len(view.entities)} entities: {took:.1f} s, {report.stats['candidates']} candidates, "
        f"{len(report.groups)} groups, peak RSS {peak:.0f} MiB"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-score", type=float, default=0.6)
    ap.add_argument("--llm", action="store_true", help="add the fake LLM judgement")
    ap.add_argument("--errors", action="store_true", help="list the pairs resolved wrongly")
    ap.add_argument("--bench", type=int, default=0, help="time N synthetic entities instead")
    args = ap.parse_args()
    if args.bench:
        asyncio.run(run_bench(args.bench))
    else:
        asyncio.run(run_eval(args.min_score, args.llm, args.errors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
