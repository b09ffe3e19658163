"""``kgrag eval``: measure the index on your own questions.

    kgrag eval recall  QUESTIONS [--modes naive,local,mix,ppr] [--k 2,5] [--passages P]
                       [--index-passages] [--limit N] [--slice] [--report PATH]
    kgrag eval answers QUESTIONS [--modes mix] [--no-judge] [--limit N] [--report PATH]
    kgrag eval compare A.jsonl B.jsonl [--report PATH]
    kgrag eval compare --config-a K=V,... --config-b K=V,... QUESTIONS [--report PATH]

QUESTIONS is a gold file: JSONL, HotpotQA, MuSiQue or SQuAD JSON, told
apart by content (docs/evaluation.md). A progress bar goes to stderr, the
Markdown report to stdout (``--json``: the JSON report); ``--report PATH``
writes both, to PATH.md and PATH.json. ``--index-passages`` indexes the
gold file's passages into the workdir first (creating the index if need be).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgrag.cli.args import parse_pairs
from kgrag.cli.index_cmd import waiting_message
from kgrag.cli.opening import EXIT_CODES, OK, opened
from kgrag.cli.query_cmd import MODES
from kgrag.config.settings import Settings
from kgrag.errors import ConfigError, NoIndexError
from kgrag.evaluation import (
    AnswersReport,
    CompareReport,
    GoldOptions,
    GoldSet,
    RecallReport,
    answer_rows,
    compare_answers,
    evaluate_answers,
    evaluate_recall,
    generate_answers,
    index_passages,
    read_gold,
    run_config,
)
from kgrag.evaluation.progress import NullProgress, Progress, RichBar

if TYPE_CHECKING:
    from kgrag.api.facade import KGRag
    from kgrag.cli.args import AddFlags, Subcommands
    from kgrag.evaluation.costs import CostSummary
    from kgrag.evaluation.jsonl import AnswerRow
    from kgrag.indexing.progress import RichProgress
    from kgrag.llm.service import ChatService

Report = RecallReport | AnswersReport | CompareReport


def add_parser(sub: Subcommands, common: AddFlags) -> None:
    p = sub.add_parser(
        "eval", help="measure the index on your questions: recall, answer accuracy, A/B judgement"
    )
    kinds = p.add_subparsers(dest="eval_command", required=True, metavar="{recall,answers,compare}")
    r = kinds.add_parser("recall", help="recall@k of the gold passages per mode (no LLM needed)")
    _gold_arguments(r, common, "naive,local,mix,ppr")
    r.add_argument("--k", default="2,5", help="cut-offs, comma-separated (default: 2,5)")
    r.add_argument(
        "--index-passages",
        action="store_true",
        help="first index the file's passages, one document each (file path = passage key)",
    )
    a = kinds.add_parser("answers", help="exact match, token F1 and judge accuracy per mode")
    _gold_arguments(a, common, "mix")
    a.add_argument("--no-judge", action="store_true", help="do not ask the chat model to judge")
    c = kinds.add_parser("compare", help="pairwise judgement of two answer sets, both orders")
    common(c)
    _output_arguments(c)
    c.add_argument("files", nargs="+", metavar="FILE", help="A.jsonl B.jsonl, or QUESTIONS")
    c.add_argument("--config-a", metavar="K=V,...", help="answer QUESTIONS with these settings")
    c.add_argument("--config-b", metavar="K=V,...", help="the other side's settings")
    c.add_argument("--limit", type=_count, metavar="N", help="only the first N questions")
    for parser in (r, a, c):
        parser.epilog, parser.formatter_class = EXIT_CODES, argparse.RawDescriptionHelpFormatter


def _gold_arguments(p: argparse.ArgumentParser, common: AddFlags, modes: str) -> None:
    common(p)
    _output_arguments(p)
    p.add_argument("questions", metavar="QUESTIONS", help="the gold file")
    p.add_argument("--modes", default=modes, help=f"comma-separated (default: {modes})")
    p.add_argument(
        "--passages",
        metavar="P",
        help="HotpotQA/MuSiQue: their corpus file (default: NAME_corpus.json beside "
        "QUESTIONS); JSONL: a passages file or a folder of documents",
    )
    p.add_argument("--limit", type=_count, metavar="N", help="only the first N questions")
    p.add_argument("--slice", action="store_true", help="keep only the passages the questions list")


def _output_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--report", metavar="PATH", help="write the report to PATH.md and PATH.json")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    for mode in modes:
        if mode not in MODES:
            raise ConfigError(f"--modes: unknown mode {mode!r}; known: {', '.join(MODES)}")
    if not modes:
        raise ConfigError("--modes: give at least one mode")
    return modes


def _ks(text: str) -> list[int]:
    try:
        ks = [int(k) for k in text.split(",") if k.strip()]
    except ValueError:
        raise ConfigError(f"--k expects whole numbers separated by commas, got {text!r}") from None
    if not ks or min(ks) < 1:
        raise ConfigError(f"--k expects whole numbers of at least 1, got {text!r}")
    return ks


def _bar(args: argparse.Namespace) -> Progress:
    if args.no_progress or (args.json and not sys.stderr.isatty()):
        return NullProgress()
    return RichBar()


def _gold(args: argparse.Namespace) -> GoldSet:
    passages = Path(args.passages) if args.passages else None
    return read_gold(args.questions, GoldOptions(passages, args.limit, args.slice))


def _meta(gold: GoldSet, settings: Settings) -> dict[str, Any]:
    """What the report says it measured: the gold file, the workdir, the models."""
    chat = settings.resolved_llm_provider()
    return {
        "gold": f"{gold.source} ({gold.format}{'; ' + gold.note if gold.note else ''})",
        "workdir": str(settings.store.workdir),
        "embedding": f"{settings.resolved_embedding_provider()}:{settings.embedding.model}",
        "extractor": settings.resolved_extractor(),
        "chat model": "none" if chat == "none" else f"{chat}:{settings.llm.model}",
    }


async def run(args: argparse.Namespace, settings: Settings) -> int:
    commands = {"recall": _recall, "answers": _answers, "compare": _compare}
    report = await commands[args.eval_command](args, settings)
    data, text = report.to_dict(), report.to_markdown()
    if args.report:
        _write(Path(args.report), data, text)
    print(
        json.dumps(data, ensure_ascii=False) if args.json else text, end="\n" if args.json else ""
    )
    return OK


def _write(path: Path, data: dict[str, Any], text: str) -> None:
    base = path.with_suffix("") if path.suffix in (".md", ".json") else path
    try:
        base.parent.mkdir(parents=True, exist_ok=True)
        base.with_name(base.name + ".json").write_text(
            json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
        base.with_name(base.name + ".md").write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the report to {base}: {exc.strerror}") from exc


async def _recall(args: argparse.Namespace, settings: Settings) -> Report:
    gold, modes, ks = _gold(args), _modes(args.modes), _ks(args.k)
    async with opened(settings, create=args.index_passages) as rag:
        rag.on_writer_wait = waiting_message
        meta = _meta(gold, rag.settings)
        if args.index_passages:
            indexed = await index_passages(rag, gold, _index_bar(rag, args))
            meta["indexed"] = f"{len(indexed.processed)} new, {len(indexed.unchanged)} unchanged"
            if indexed.failed:
                meta["indexed"] += f", {len(indexed.failed)} failed"
        report = await evaluate_recall(rag, gold.questions, modes, ks, progress=_bar(args))
    report.meta = meta
    return report


def _index_bar(rag: KGRag, args: argparse.Namespace) -> RichProgress | None:
    """The indexing bar of ``kgrag index`` (None with ``--no-progress``)."""
    if args.no_progress or (args.json and not sys.stderr.isatty()):
        return None
    from kgrag.cli.index_cmd import chat_totals
    from kgrag.indexing.progress import RichProgress

    return RichProgress(llm_calls=lambda: chat_totals(rag.models.ledger.snapshot())["calls"])


async def _answers(args: argparse.Namespace, settings: Settings) -> Report:
    gold, modes = _gold(args), _modes(args.modes)
    async with opened(settings) as rag:
        report = await evaluate_answers(
            rag, gold.questions, modes, judge=not args.no_judge, progress=_bar(args)
        )
        report.meta = _meta(gold, rag.settings)
    return report


async def _compare(args: argparse.Namespace, settings: Settings) -> Report:
    if args.config_a is None and args.config_b is None and len(args.files) == 2:
        a, b = (answer_rows(Path(f))[: args.limit] for f in args.files)
        labels, costs = {"A": args.files[0], "B": args.files[1]}, {}
    elif args.config_a is not None and args.config_b is not None and len(args.files) == 1:
        (a, cost_a), (b, cost_b) = await _answer_both(args, settings)
        labels, costs = {"A": args.config_a, "B": args.config_b}, {"A": cost_a, "B": cost_b}
    else:
        raise ConfigError(
            "kgrag eval compare: give two answer files, or --config-a, --config-b and QUESTIONS"
        )
    async with _judge_chat(settings) as chat:
        report = await compare_answers(chat, a, b, labels=labels, progress=_bar(args))
    report.answer_costs = costs
    report.meta = {"workdir": str(settings.store.workdir)}
    if len(args.files) == 1:
        report.meta["questions file"] = args.files[0]
    return report


async def _answer_both(
    args: argparse.Namespace, settings: Settings
) -> list[tuple[list[AnswerRow], CostSummary]]:
    """The index's answers under ``--config-a`` and under ``--config-b``, with their costs."""
    gold = read_gold(args.files[0], GoldOptions(limit=args.limit))
    questions = [q.question for q in gold.questions]
    out = []
    for flag, given in (("--config-a", args.config_a), ("--config-b", args.config_b)):
        config = run_config(parse_pairs([p for p in given.split(",") if p.strip()], flag))
        async with opened(settings.with_overrides(**config.settings)) as rag:
            param = rag.query_param(**config.param)
            out.append(await generate_answers(rag, questions, param, progress=_bar(args)))
    return out


@asynccontextmanager
async def _judge_chat(settings: Settings) -> AsyncIterator[ChatService]:
    """The chat model that judges: the index's (answers cached there), else one uncached."""
    from kgrag.api.facade import KGRag
    from kgrag.llm.factory import build_models

    rag = KGRag(settings)
    try:
        await rag.open(create=False)
    except NoIndexError:
        models = build_models(settings)
        try:
            yield _needed(models.chat)
        finally:
            await models.aclose()
        return
    try:
        yield _needed(rag.models.chat)
    finally:
        await rag.close()


def _needed(chat: ChatService | None) -> ChatService:
    if chat is None:
        raise ConfigError(
            "kgrag eval compare needs a chat model to judge: set KGRAG_LLM_PROVIDER "
            "(and KGRAG_LLM_MODEL)"
        )
    return chat
