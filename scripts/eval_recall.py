"""Recall@k of gold passages per query mode on HotpotQA, MuSiQue and CMRC 2018.

Usage::

    python scripts/eval_recall.py --datasets hotpotqa,musique,cmrc \\
        --modes naive,local,mix,ppr --embedding local --embedding-model default \\
        --extractor nlp --workdir runs/eval --out runs/eval.json

Every passage is indexed as its own document whose ``file_path`` is the
passage key (HotpotQA: the title; MuSiQue: ``<index> <title>``, as titles
repeat; CMRC: the paragraph id), so each chunk maps back to its passage.
For each mode, recall@k is the share of a question's gold passages among
the first ``k`` distinct passages in the order ``query_data`` lists its
chunks, averaged over the questions.

Indexes are cached per (dataset, extractor, embedder, slice) under
``--workdir``; a re-run only queries. Without ``--llm-base-url`` no chat
model is used: keywords come from the engine's heuristic and ``--extractor
llm`` is refused. ``--questions N`` takes the first N questions; with
``--slice`` the corpus is cut down to the passages those questions list
(their gold passages and distractors), for quick checks.

``--dedupe`` also measures the index after ``kgrag dedupe --apply``: the
cached index is copied (``<index>-dedupe<score>``), ``resolve_entities(
apply=True)`` merges its groups there (once; the report is kept as
``dedupe_report.json``), and every mode is asked again. The output gives
both recalls, the groups and merges applied, and for each question whose
recall@5 dropped: its gold and retrieved passages before and after, and
the merged groups whose names come from those passages.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgrag.evaluation.datasets import load_dataset
from kgrag.evaluation.recall import ranked_keys, recall_at

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DATASETS = ("hotpotqa", "musique", "cmrc")
MODES = ("naive", "local", "global", "hybrid", "mix", "ppr")
KS = (2, 5)


@dataclass
class Dataset:
    """Passages (key -> text) and questions with their gold passage keys."""

    name: str
    passages: dict[str, str]
    questions: list[tuple[str, set[str]]]
    note: str = ""


def load(name: str, data: Path, limit: int | None = None, sliced: bool = False) -> Dataset:
    """The dataset ``name`` read from ``data`` (the readers of :mod:`kgrag.evaluation.datasets`)."""
    gold = load_dataset(name, data, limit, sliced)
    questions = [(q.question, set(q.gold)) for q in gold.questions]
    return Dataset(name, gold.passages, questions, gold.note)


def settings_for(args: argparse.Namespace, workdir: Path, dataset: str):
    """The kgrag Settings of one index (no chat model unless ``--llm-base-url``)."""
    from kgrag.config.settings import Settings

    chat = bool(args.llm_base_url)
    if args.extractor == "llm" and not chat:
        raise SystemExit("--extractor llm needs --llm-base-url")
    given = {
        k: v
        for k, v in (
            ("llm_base_url", args.llm_base_url),
            ("llm_api_key", args.llm_api_key),
            ("embedding_base_url", args.embedding_base_url),
        )
        if v
    }
    return Settings(
        workdir=workdir,
        extractor=args.extractor,
        llm_provider="openai" if chat else "none",
        llm_model=args.llm_model,
        embedding_provider=args.embedding,
        embedding_model=args.embedding_model,
        language="Chinese" if dataset == "cmrc" else "English",
        top_k=args.top_k,
        chunk_top_k=args.chunk_top_k,
        **given,
    )


def index_dir(args: argparse.Namespace, ds: Dataset) -> Path:
    """Where the index of ``ds`` under this configuration is cached."""
    model = args.embedding_model
    if (
        args.embedding == "local"
    ):  # "default": the model the settings pick for the dataset's language
        from kgrag.llm.local import local_model_for

        model = local_model_for(model, "Chinese" if ds.name == "cmrc" else "English").name
    model = model.replace("/", "_")
    part = f"-slice{len(ds.questions)}" if args.slice else ""
    llm = "-" + args.llm_model.replace("/", "_") if args.extractor == "llm" else ""
    return Path(args.workdir) / f"{ds.name}{part}-{args.extractor}{llm}-{args.embedding}-{model}"


async def embed_rate(rag: Any, ds: Dataset, n: int = 16) -> float:
    """Passages embedded per second, ``n`` of ``ds``'s passages in one call (after a warm-up)."""
    texts = list(ds.passages.values())[:n]
    await rag.models.embed.embed(texts[:1])
    start = time.perf_counter()
    await rag.models.embed.embed(texts)
    return round(len(texts) / (time.perf_counter() - start), 1)


async def ensure_index(rag: Any, ds: Dataset, workdir: Path) -> dict[str, Any]:
    """Index ``ds`` unless a finished index is cached; its build statistics.

    ``texts_per_s`` is every embedded text (chunks, entities, relations)
    over the whole index time, extraction included; ``passages_per_s``
    is the embedder alone on 16 passages, measured on every run.
    """
    stats_file = workdir / "eval_index.json"
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
    cached = stats.get("passages") == len(ds.passages)
    if not cached:
        keys = list(ds.passages)
        start = time.perf_counter()
        report = await rag.insert([ds.passages[k] for k in keys], keys)
        seconds = time.perf_counter() - start
        if report.failed:
            raise SystemExit(
                f"{ds.name}: {len(report.failed)} documents failed, e.g. {report.failed[0]}"
            )
        graph = (await rag.status())["graph"]
        texts = graph["chunks"] + graph["entities"] + graph["relations"]
        stats = {
            "passages": len(keys),
            "index_s": round(seconds, 1),
            **graph,
            "embedded_texts": texts,
            "texts_per_s": round(texts / seconds, 1),
        }
        stats_file.write_text(json.dumps(stats, indent=1))
    return {**stats, "passages_per_s": await embed_rate(rag, ds), "cached": cached}


async def evaluate_mode(
    rag: Any, ds: Dataset, mode: str, ks: tuple[int, ...] = KS
) -> dict[str, Any]:
    """Mean recall@k (in percent) of ``mode`` over ``ds``'s questions, and seconds per query."""
    param = rag.query_param(mode=mode)
    sums = {k: 0.0 for k in ks}
    start = time.perf_counter()
    top: list[list[str]] = []  # per question: its first max(ks) distinct passages
    for question, gold in ds.questions:
        data = await rag.query_data(question, param)
        ranked = ranked_keys(data["chunks"], gold)
        top.append(ranked[: max(ks)])
        for k in ks:
            sums[k] += recall_at(ranked, gold, k)
    n = max(len(ds.questions), 1)
    out: dict[str, Any] = {f"recall@{k}": round(100 * s / n, 1) for k, s in sums.items()}
    out["s_per_query"] = round((time.perf_counter() - start) / n, 3)
    out["top"] = top
    return out


async def run_dataset(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """Index (or reuse) one dataset and evaluate every mode on it."""
    from kgrag.api.facade import KGRag

    ds = load(
        name,
        Path(args.data),
        args.questions or (args.cmrc_questions if name == "cmrc" else None),
        args.slice,
    )
    workdir = index_dir(args, ds)
    async with KGRag(settings_for(args, workdir, name)) as rag:
        stats = await ensure_index(rag, ds, workdir)
        log(f"{name}: {len(ds.passages)} passages, {len(ds.questions)} questions; index {stats}")
        modes = await evaluate_modes(rag, ds, args.modes)
    result = {
        "passages": len(ds.passages),
        "questions": len(ds.questions),
        "note": ds.note,
        "workdir": str(workdir),
        "index": stats,
        "modes": modes,
    }
    if args.dedupe:
        result["dedupe"] = await run_deduped(args, ds, workdir, modes)
    for row in modes.values():
        row.pop("top")
    return result


async def evaluate_modes(rag: Any, ds: Dataset, modes: list[str]) -> dict[str, Any]:
    """``evaluate_mode`` for each of ``modes``, logged as it goes."""
    out = {}
    for mode in modes:
        out[mode] = await evaluate_mode(rag, ds, mode)
        log(f"{ds.name} {mode}: { {k: v for k, v in out[mode].items() if k != 'top'} }")
    return out


# -- after dedupe --apply ----------------------------------------------------------


async def dedupe_copy(args: argparse.Namespace, ds: Dataset, workdir: Path) -> Path:
    """A copy of the index at ``workdir`` with ``resolve_entities(apply=True)`` applied (cached)."""
    from kgrag.api.facade import KGRag

    target = workdir.with_name(f"{workdir.name}-dedupe{args.dedupe_min_score:g}")
    if (target / "dedupe_report.json").exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    await asyncio.to_thread(shutil.copytree, workdir, target)
    async with KGRag(settings_for(args, target, ds.name)) as rag:
        start = time.perf_counter()
        report = await rag.resolve_entities(min_score=args.dedupe_min_score, apply=True)
        seconds = time.perf_counter() - start
        graph = (await rag.status())["graph"]
    out = {**report.to_dict(), "apply_seconds": round(seconds, 1), "graph_after": graph}
    (target / "dedupe_report.json").write_text(json.dumps(out, indent=1, ensure_ascii=False))
    return target


async def group_passages(args: argparse.Namespace, ds: Dataset, workdir: Path, groups: list):
    """For each group (as in the report): the passages its names come from (original index)."""
    from kgrag.api.facade import KGRag

    async with KGRag(settings_for(args, workdir, ds.name)) as rag:
        out = []
        for g in groups:
            nodes = await rag.storage.graph.get_nodes([g["target"], *g["members"]])
            paths = {p for d in nodes.values() for p in _as_list(d.get("file_paths"))}
            out.append(paths)
    return out


def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v for v in value.split("<SEP>") if v]
    return list(value or [])


async def run_deduped(
    args: argparse.Namespace, ds: Dataset, workdir: Path, before: dict[str, Any]
) -> dict[str, Any]:
    """Recall after ``dedupe --apply``, the merges, and what the dropped questions had merged."""
    from kgrag.api.facade import KGRag

    target = await dedupe_copy(args, ds, workdir)
    report = json.loads((target / "dedupe_report.json").read_text())
    async with KGRag(settings_for(args, target, ds.name)) as rag:
        after = await evaluate_modes(rag, ds, args.modes)
    paths = await group_passages(args, ds, workdir, report["groups"])
    drops = {m: dropped(ds, before[m]["top"], after[m]["top"], report, paths) for m in after}
    gains = {m: gained(ds, before[m]["top"], after[m]["top"]) for m in after}
    for row in after.values():
        row.pop("top")
    log(f"{ds.name}: {len(report['groups'])} groups, {len(report['merges'])} merges applied")
    return {
        "workdir": str(target),
        "min_score": args.dedupe_min_score,
        "groups": len(report["groups"]),
        "merges": len(report["merges"]),
        "merged_names": sum(len(g["members"]) for g in report["groups"]),
        "stats": report["stats"],
        "apply_seconds": report["apply_seconds"],
        "graph_after": report["graph_after"],
        "modes": after,
        "dropped": drops,
        "gained": gains,
    }


def gained(ds: Dataset, before: list[list[str]], after: list[list[str]]) -> int:
    """How many questions' recall@5 rose."""
    pairs = zip(ds.questions, before, after, strict=True)
    return sum(recall_at(a, gold, 5) > recall_at(b, gold, 5) for (_, gold), b, a in pairs)


def dropped(
    ds: Dataset, before: list[list[str]], after: list[list[str]], report: dict, paths: list[set]
) -> list[dict[str, Any]]:
    """The questions whose recall@5 fell, with the groups drawn from their passages."""
    out = []
    for (question, gold), b, a in zip(ds.questions, before, after, strict=True):
        r_b, r_a = recall_at(b, gold, 5), recall_at(a, gold, 5)
        if r_a >= r_b:
            continue
        seen = gold | set(b) | set(a)
        groups = [
            {"target": g["target"], "members": g["members"], "score": g["score"]}
            for g, p in zip(report["groups"], paths, strict=True)
            if p & seen
        ]
        lost = sorted((gold & set(b)) - set(a))
        out.append(
            {"question": question, "gold": sorted(gold), "lost": lost, "before": b, "after": a}
            | {"recall@5": [r_b, r_a], "groups": groups}
        )
    return out


def table(results: dict[str, Any]) -> str:
    """A plain-text table: one row per (dataset, mode); with ``--dedupe``, the after columns."""
    lines = [f"{'dataset':<10} {'mode':<7} {'R@2':>6} {'R@5':>6} {'s/query':>8}"]
    if any("dedupe" in r for r in results.values()):
        lines[0] += f" {'R@2 dd':>7} {'R@5 dd':>7} {'dropped':>8} {'gained':>7}"
    for name, res in results.items():
        for mode, row in res["modes"].items():
            line = (
                f"{name:<10} {mode:<7} {row['recall@2']:>6} {row['recall@5']:>6} "
                f"{row['s_per_query']:>8}"
            )
            if "dedupe" in res:
                dd = res["dedupe"]
                after = dd["modes"][mode]
                line += f" {after['recall@2']:>7} {after['recall@5']:>7}"
                line += f" {len(dd['dropped'][mode]):>8} {dd['gained'][mode]:>7}"
            lines.append(line)
        if "dedupe" in res:
            dd = res["dedupe"]
            lines.append(f"{name:<10} dedupe: {dd['groups']} groups, {dd['merges']} merges applied")
    return "\n".join(lines)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--modes", default="naive,local,mix,ppr")
    ap.add_argument("--embedding", choices=("local", "fake", "openai"), default="local")
    ap.add_argument(
        "--embedding-model",
        default="default",
        help="local: minilm, e5-small, static, or default (minilm for English, e5-small for Chinese)",
    )
    ap.add_argument("--embedding-base-url", default=None)
    ap.add_argument("--extractor", choices=("nlp", "llm"), default="nlp")
    ap.add_argument(
        "--llm-base-url", default=None, help="OpenAI-compatible endpoint (keywords, llm extractor)"
    )
    ap.add_argument("--llm-model", default="gpt-4o-mini")
    ap.add_argument("--llm-api-key", default=None)
    ap.add_argument("--questions", type=int, default=0, help="first N questions (0: all)")
    ap.add_argument("--cmrc-questions", type=int, default=200, help="CMRC questions, spread evenly")
    ap.add_argument(
        "--slice", action="store_true", help="index only the passages the questions list"
    )
    ap.add_argument("--top-k", type=int, default=40)
    ap.add_argument("--chunk-top-k", type=int, default=20)
    ap.add_argument("--data", default=str(DATA if DATA.is_dir() else Path("/work/shared/data")))
    ap.add_argument("--workdir", default="runs/eval")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    ap.add_argument(
        "--dedupe", action="store_true", help="also evaluate a copy after `dedupe --apply`"
    )
    ap.add_argument("--dedupe-min-score", type=float, default=0.6, help="its --min-score")
    args = ap.parse_args(argv)
    args.datasets = [d for d in args.datasets.split(",") if d]
    args.modes = [m for m in args.modes.split(",") if m]
    for bad in set(args.datasets) - set(DATASETS):
        ap.error(f"unknown dataset {bad!r}")
    if args.embedding == "fake" and args.embedding_model == "default":
        args.embedding_model = "hash384"
    return args


async def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    results = {name: await run_dataset(args, name) for name in args.datasets}
    print(table(results))
    if args.out:
        await asyncio.to_thread(
            Path(args.out).write_text,
            json.dumps(
                {
                    "config": {k: v for k, v in vars(args).items() if k != "llm_api_key"},
                    "results": results,
                },
                indent=1,
                ensure_ascii=False,
            ),
        )
    return results


if __name__ == "__main__":
    asyncio.run(main())
