"""Recall of mode ``auto`` beside each single mode: HotpotQA, MuSiQue, CMRC and A Christmas Carol.

Usage::

    python scripts/eval_auto.py --sets hotpotqa,musique,cmrc,carol \\
        --modes naive,mix,ppr,path,auto --workdir runs/eval --out runs/eval/auto.json

HotpotQA, MuSiQue and CMRC run exactly as ``scripts/eval_recall.py`` runs
them (its loaders, settings, cached indexes and recall: the offline
defaults, MiniLM for English and e5-small for Chinese).

*A Christmas Carol* has no gold passages: ``scripts/data/
christmas_carol_questions.jsonl`` holds questions written about the book,
each with a short verbatim ``quote`` that answers it. The book
(``data/christmas_carol.txt``) is indexed with the default chunking
(1,200-token windows) and the offline defaults; a question is a hit at k
when one of the first k chunks the mode returns contains its quote
(whitespace runs counted as one space).

Beside recall, each set reports the index's name reach, how ``auto``
routed its questions (``chunks``, ``walk+path``...; see
``kgrag.retrieval.modes.auto``) and the gap between ``auto`` and the best
single mode. ``--chunk-size N`` indexes the book at another chunk size
(its own cached index), to see the routes follow the book, not its chunks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_recall  # the script beside this one

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "scripts" / "data" / "christmas_carol_questions.jsonl"
BOOK = ROOT / "data" / "christmas_carol.txt"
SETS = ("hotpotqa", "musique", "cmrc", "carol")
KS = (2, 5)
_SPACE = re.compile(r"\s+")


def squash(text: str) -> str:
    """``text`` with every whitespace run made one space."""
    return _SPACE.sub(" ", text).strip()


def carol_questions(path: Path, book: str) -> list[tuple[str, str]]:
    """(question, quote) pairs; a quote the book does not hold stops the run."""
    from kgrag.evaluation.files import jsonl_objects, read_text

    out = []
    for number, row in jsonl_objects(path, read_text(path)):
        question, quote = str(row.get("question") or ""), squash(str(row.get("quote") or ""))
        if not question or not quote:
            raise SystemExit(f"{path}:{number}: a question and a quote are needed")
        if quote not in book:
            raise SystemExit(f"{path}:{number}: the quote is not in the book: {quote!r}")
        out.append((question, quote))
    return out


def quote_rank(chunks: list[dict[str, Any]], quote: str) -> int | None:
    """The 0-based rank of the first chunk holding ``quote``, None when none does."""
    for rank, chunk in enumerate(chunks):
        if quote in squash(str(chunk.get("content") or "")):
            return rank
    return None


async def route_counts(rag: Any, questions: list[str]) -> dict[str, Any]:
    """The index's name reach and how many of ``questions`` take each route of ``auto``."""
    from kgrag.knowledge.walk.matrix import cached_graph
    from kgrag.retrieval.modes.auto import choose_route
    from kgrag.retrieval.modes.auto_signals import Signals, index_reach

    graph, _ = await cached_graph(rag.storage)
    reach = index_reach(rag.storage, graph)
    names = [tuple(graph.entities[i] for i in graph.match_names(q)) for q in questions]
    routes = Counter(choose_route(Signals(n, reach)).name for n in names)
    return {"reach": round(reach, 4), "routes": dict(sorted(routes.items()))}


async def carol_mode(rag: Any, items: list[tuple[str, str]], mode: str) -> dict[str, Any]:
    """Hit@k (percent) of ``mode`` over the book's questions, seconds per query, misses at 5."""
    param = rag.query_param(mode=mode)
    hits = {k: 0 for k in KS}
    missed = []
    start = time.perf_counter()
    for question, quote in items:
        rank = quote_rank((await rag.query_data(question, param))["chunks"], quote)
        for k in KS:
            hits[k] += rank is not None and rank < k
        if rank is None or rank >= max(KS):
            missed.append(question)
    n = max(len(items), 1)
    out: dict[str, Any] = {f"recall@{k}": round(100 * h / n, 1) for k, h in hits.items()}
    out["s_per_query"] = round((time.perf_counter() - start) / n, 3)
    out["missed@5"] = missed
    return out


def carol_settings(args: argparse.Namespace) -> tuple[Any, Path]:
    """The book's settings and index folder: eval_recall's English ones, at ``--chunk-size``."""
    rec_args = recall_args(args, "hotpotqa")
    workdir = eval_recall.index_dir(rec_args, eval_recall.Dataset("carol", {}, []))
    settings = eval_recall.settings_for(rec_args, workdir, "carol")
    if args.chunk_size:
        workdir = workdir.with_name(workdir.name.replace("carol", f"carol{args.chunk_size}", 1))
        overlap = min(settings.chunking.overlap, args.chunk_size // 6)
        update = {"workdir": workdir, "chunk_size": args.chunk_size, "chunk_overlap": overlap}
        settings = settings.with_overrides(**update)
    return settings, workdir


async def run_carol(args: argparse.Namespace) -> dict[str, Any]:
    """Index the book (once; unchanged afterwards) and evaluate every mode on its questions."""
    from kgrag.api.facade import KGRag

    text = await asyncio.to_thread(Path(args.book).read_text, encoding="utf-8")
    items = carol_questions(Path(args.carol_questions), squash(text))
    settings, workdir = carol_settings(args)
    async with KGRag(settings) as rag:
        start = time.perf_counter()
        report = await rag.insert([text], [Path(args.book).name])
        if report.failed:
            raise SystemExit(f"the book failed to index: {report.failed[0]}")
        seconds = round(time.perf_counter() - start, 1)
        graph = (await rag.status())["graph"]
        eval_recall.log(f"carol: {len(items)} questions; index {graph} ({seconds} s)")
        modes = {}
        for mode in args.modes:
            modes[mode] = await carol_mode(rag, items, mode)
            eval_recall.log(f"carol {mode}: {modes[mode]}")
        routes = await route_counts(rag, [q for q, _ in items])
    return {"questions": len(items), "workdir": str(workdir), "index": graph} | {
        "modes": modes,
        "auto": routes,
    }


def recall_args(args: argparse.Namespace, name: str) -> argparse.Namespace:
    """The arguments ``eval_recall`` would run ``name`` with."""
    argv = ["--datasets", name, "--modes", ",".join(args.modes), "--workdir", args.workdir]
    argv += ["--data", args.data, "--questions", str(args.questions)]
    return eval_recall.parse_args(argv)


async def run_gold(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """One of eval_recall's sets, as it runs it, with auto's routes counted."""
    from kgrag.api.facade import KGRag

    rec_args = recall_args(args, name)
    result = await eval_recall.run_dataset(rec_args, name)
    limit = rec_args.questions or (rec_args.cmrc_questions if name == "cmrc" else None)
    ds = eval_recall.load(name, Path(rec_args.data), limit)
    async with KGRag(eval_recall.settings_for(rec_args, Path(result["workdir"]), name)) as rag:
        result["auto"] = await route_counts(rag, [q for q, _ in ds.questions])
    return result


def with_gaps(results: dict[str, Any]) -> dict[str, Any]:
    """Each set's best single mode at recall@5 and auto's distance from it."""
    for res in results.values():
        single = {m: r["recall@5"] for m, r in res["modes"].items() if m != "auto"}
        if single and "auto" in res["modes"]:
            best = max(single, key=lambda m: single[m])
            res["best_single"] = best
            res["auto_gap@5"] = round(res["modes"]["auto"]["recall@5"] - single[best], 1)
    return results


def table(results: dict[str, Any], modes: list[str]) -> str:
    """Markdown: one row per set, recall@2 / recall@5 per mode, auto's gap and routes."""
    head = "| set | " + " | ".join(modes) + " | auto - best | reach | auto's routes |"
    lines = [head, "|" + " --- |" * (len(modes) + 4)]
    for name, res in results.items():
        cells = [f"{res['modes'][m]['recall@2']} / {res['modes'][m]['recall@5']}" for m in modes]
        gap = f"{res.get('auto_gap@5', '')} ({res.get('best_single', '')})"
        auto = res.get("auto", {})
        routes = ", ".join(f"{r} {n}" for r, n in auto.get("routes", {}).items())
        lines.append(
            f"| {name} | " + " | ".join(cells) + f" | {gap} | {auto.get('reach')} | {routes} |"
        )
    lines.append("")
    lines.append(
        "s/query: "
        + "; ".join(
            f"{name} " + ", ".join(f"{m} {res['modes'][m]['s_per_query']}" for m in modes)
            for name, res in results.items()
        )
    )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--modes", default="naive,mix,ppr,path,auto")
    ap.add_argument("--workdir", default="runs/eval")
    ap.add_argument("--data", default=eval_recall.parse_args([]).data)
    ap.add_argument("--questions", type=int, default=0, help="first N questions (0: all)")
    ap.add_argument("--carol-questions", default=str(QUESTIONS))
    ap.add_argument("--book", default=str(BOOK))
    ap.add_argument(
        "--chunk-size", type=int, default=0, help="index the book at this chunk size (0: default)"
    )
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    args.sets = [s for s in args.sets.split(",") if s]
    args.modes = [m for m in args.modes.split(",") if m]
    for bad in set(args.sets) - set(SETS):
        ap.error(f"unknown set {bad!r}")
    return args


async def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    results = {}
    for name in args.sets:
        results[name] = await (run_carol(args) if name == "carol" else run_gold(args, name))
    with_gaps(results)
    print(table(results, args.modes))
    if args.out:
        payload = {"config": vars(args), "results": results}
        text = json.dumps(payload, indent=1, ensure_ascii=False)
        await asyncio.to_thread(Path(args.out).write_text, text)
    return results


if __name__ == "__main__":
    asyncio.run(main())
