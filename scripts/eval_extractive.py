"""Does the extractive answer quote the sentences that answer? HotpotQA's gold sentences.

Usage::

    python scripts/eval_extractive.py --modes ppr,mix,naive \\
        --index runs/eval/hotpotqa-nlp-local-minilm --out runs/eval/extractive.json

The index is the one ``scripts/eval_recall.py`` caches for HotpotQA (NLP
extractor, local minilm embedder, every passage its own document named by
its title); it is copied to a temporary folder first, so the cached one is
never written. Each question is retrieved as the engine does (no chat
model: heuristic keywords), then the extractive answer alone is timed.

A quote *hits* a gold sentence (HotpotQA's ``supporting_facts``) when,
whitespace-normalised, it holds the gold sentence whole (a quote may join a
sentence with its neighbour) or is a piece of at least half of it (the
splitter may cut a gold sentence at an abbreviation). Reported per mode:
the share of questions with at least one gold sentence quoted
(``any``), with all of them quoted (``all``), the share whose gold
sentences were in the retrieved chunks at all (``reachable``: the ceiling),
the mean characters quoted, and p50 / p95 milliseconds of the answer step,
wall clock and CPU (all threads; on a busy shared machine the CPU time is
the steadier figure).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
QUOTE = re.compile(r'^\d+\. "(.*)" \[[^\]]+\]$')


@dataclass
class Question:
    """A HotpotQA question and its gold sentences."""

    text: str
    answer: str
    gold: list[str]


def norm(text: str) -> str:
    return " ".join(text.split())


def load_questions(data: Path, limit: int | None) -> list[Question]:
    """HotpotQA questions with the sentences ``supporting_facts`` names."""
    corpus = json.loads((data / "hotpotqa" / "hotpotqa_train_corpus.json").read_text())
    rows = json.loads((data / "hotpotqa" / "hotpotqa_train.json").read_text())[:limit]
    out = []
    for row in rows:
        gold = [norm(corpus[t][i]) for t, i in row["supporting_facts"] if i < len(corpus[t])]
        out.append(Question(row["question"], row["answer"], gold))
    return out


def quotes(answer: str) -> list[str]:
    """The quoted sentences of an extractive answer."""
    return [m.group(1) for line in answer.splitlines() if (m := QUOTE.match(line.strip()))]


def hits(quote: str, gold: str) -> bool:
    """Whether ``quote`` holds ``gold`` whole, or is at least half of it."""
    q, g = norm(quote), norm(gold)
    return bool(g) and (g in q or (q in g and len(q) >= len(g) / 2))


def settings(workdir: Path) -> Any:
    from kgrag.config.settings import Settings

    return Settings(
        workdir=workdir,
        extractor="nlp",
        llm_provider="none",
        embedding_provider="local",
        embedding_model="minilm",
        language="English",
        top_k=40,
        chunk_top_k=20,
    )


@dataclass
class Answered:
    """One extractive answer, the wall and CPU seconds of its step, the chunks it read."""

    text: str
    seconds: float
    cpu_seconds: float
    chunks: list[str]


async def answer(rag: Any, question: str, mode: str) -> Answered:
    """Retrieve as the engine does, then time the extractive answer alone."""
    from kgrag.retrieval.answer.extractive import extractive_answer
    from kgrag.retrieval.assemble import assemble
    from kgrag.retrieval.modes.registry import get_mode
    from kgrag.retrieval.trace import NO_TRACE

    engine = rag.engine
    param = rag.query_param(mode=mode)
    asm = await assemble(engine.services, question, param, get_mode(mode), NO_TRACE)
    if asm.status != "ok":
        return Answered("", 0.0, 0.0, [])
    # Earlier versions of the extractive answer were not given the question.
    given = inspect.signature(extractive_answer).parameters
    extra = {"question": question} if "question" in given else {}
    start, cpu = time.perf_counter(), time.process_time()
    text = await extractive_answer(
        asm.vectors["query"],
        asm.chunks,
        asm.chunk_refs,
        asm.references,
        engine.services.embed,
        (asm.entities, asm.relations),
        **extra,
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return Answered(text, wall, cpu, [c.content for c in asm.chunks])


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else 0.0


async def evaluate(rag: Any, questions: list[Question], mode: str) -> dict[str, Any]:
    """``any`` / ``all`` / ``reachable`` shares and answer-step times for one mode."""
    n_any = n_all = n_reach = 0
    times: list[float] = []
    cpu: list[float] = []
    rows = []
    for q in questions:
        got = await answer(rag, q.text, mode)
        times.append(got.seconds)
        cpu.append(got.cpu_seconds)
        said = quotes(got.text)
        found = [g for g in q.gold if any(hits(s, g) for s in said)]
        context = norm(" ".join(got.chunks))
        n_reach += any(g in context for g in q.gold)
        n_any += bool(found)
        n_all += len(found) == len(q.gold)
        rows.append({"question": q.text, "gold": q.gold, "quotes": said, "found": len(found)})
    n = max(len(questions), 1)
    return {
        "any": round(n_any / n, 3),
        "all": round(n_all / n, 3),
        "reachable": round(n_reach / n, 3),
        "answer_ms_p50": round(1000 * percentile(times, 0.5), 1),
        "answer_ms_p95": round(1000 * percentile(times, 0.95), 1),
        "answer_cpu_ms_p50": round(1000 * percentile(cpu, 0.5), 1),
        "answer_cpu_ms_p95": round(1000 * percentile(cpu, 0.95), 1),
        "quoted_chars": round(sum(len(s) for r in rows for s in r["quotes"]) / n),
        "quotes_per_answer": round(sum(len(r["quotes"]) for r in rows) / n, 2),
        "rows": rows,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from kgrag.api.facade import KGRag

    questions = load_questions(Path(args.data), args.questions or None)
    with tempfile.TemporaryDirectory(prefix="kgrag-extractive-") as tmp:
        work = Path(tmp) / "index"
        shutil.copytree(args.index, work)
        async with KGRag(settings(work)) as rag:
            await answer(rag, questions[0].text, args.modes[0])  # loads the model
            out = {}
            for mode in args.modes:
                out[mode] = await evaluate(rag, questions, mode)
                brief = {k: v for k, v in out[mode].items() if k != "rows"}
                print(f"{mode}: {brief}", file=sys.stderr, flush=True)
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", default="ppr,mix,naive")
    ap.add_argument("--index", default=str(ROOT / "runs" / "eval" / "hotpotqa-nlp-local-minilm"))
    ap.add_argument("--data", default=str(DATA if DATA.is_dir() else Path("/work/shared/data")))
    ap.add_argument("--questions", type=int, default=0, help="first N questions (0: all 100)")
    ap.add_argument("--out", default=None, help="write the results (with every answer) as JSON")
    args = ap.parse_args(argv)
    args.modes = [m for m in args.modes.split(",") if m]
    if not Path(args.index, "kgrag.db").exists():
        ap.error(f"no index at {args.index}: build it with scripts/eval_recall.py first")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    results = asyncio.run(run(args))
    print(
        f"{'mode':<7} {'any':>6} {'all':>6} {'reach':>6} {'chars':>6} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'cpu p50':>8} {'cpu p95':>8}"
    )
    for mode, r in results.items():
        print(
            f"{mode:<7} {r['any']:>6} {r['all']:>6} {r['reachable']:>6} {r['quoted_chars']:>6} "
            f"{r['answer_ms_p50']:>7} {r['answer_ms_p95']:>7} "
            f"{r['answer_cpu_ms_p50']:>8} {r['answer_cpu_ms_p95']:>8}"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1, ensure_ascii=False))
    return results


if __name__ == "__main__":
    main()
