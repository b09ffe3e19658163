"""``kgrag query``: answers, contexts, structured data and retrieval traces."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import TYPE_CHECKING, Any

from kgrag.api.facade import KGRag
from kgrag.cli.args import parse_pairs
from kgrag.cli.opening import opened
from kgrag.cli.reference_view import render_references
from kgrag.retrieval.answer.citations import invalid_note
from kgrag.retrieval.param import QueryParam, QueryResult

if TYPE_CHECKING:
    from kgrag.cli.args import AddFlags, Subcommands
    from kgrag.config.settings import Settings

MODES = ["auto", "mix", "local", "global", "hybrid", "naive", "bypass", "ppr", "path"]


def add_parser(sub: Subcommands, common: AddFlags) -> None:
    p = sub.add_parser("query", help="ask a question of the index")
    common(p)
    p.add_argument("question", nargs="?", help="the question (or use --questions-file)")
    p.add_argument(
        "--mode",
        default="auto",
        choices=MODES,
        help="retrieval mode (default: auto = routed per question on an index built "
        "without an LLM, else mix)",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--context-only", action="store_true", help="print the retrieved context, no answer"
    )
    what.add_argument(
        "--prompt-only", action="store_true", help="print the full answer prompt, no answer"
    )
    what.add_argument(
        "--data-only", action="store_true", help="print the structured retrieval result (JSON)"
    )
    p.add_argument("--stream", action="store_true", help="stream the answer as it is generated")
    p.add_argument(
        "--references",
        action="store_true",
        help="print the answer's references (number, document, pages, section, span excerpt)",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="show the retrieval trace: candidates and drops per stage",
    )
    p.add_argument(
        "--questions-file",
        metavar="F",
        help="one question a line; prints one JSON line per question",
    )
    p.add_argument("--top-k", type=positive, help="entities / relations retrieved (default 40)")
    p.add_argument("--chunk-top-k", type=positive, help="chunks kept (default 20)")
    p.add_argument(
        "--ll-keywords", help="comma-separated low-level keywords (skips the keywords call)"
    )
    p.add_argument(
        "--hl-keywords", help="comma-separated high-level keywords (skips the keywords call)"
    )
    p.add_argument("--response-type", help='answer shape, e.g. "Single Paragraph", "Bullet Points"')
    p.add_argument(
        "--conditions",
        choices=["rules", "llm", "off"],
        help="how the question's constraints (model numbers, versions, years...) are read "
        "(default rules; llm asks the chat model)",
    )
    p.add_argument(
        "--keep-conflicting",
        action="store_true",
        help="keep items that name another model, version or year than asked (labelled)",
    )
    p.add_argument("--user-prompt", help="additional instructions for the answer")
    _add_filters(p)


def positive(text: str) -> int:
    """An argparse type: an integer of at least 1 (else a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _add_filters(p: argparse.ArgumentParser) -> None:
    """``--doc``, ``--path``, ``--where``: retrieve from some documents only."""
    p.add_argument(
        "--doc",
        action="append",
        default=[],
        metavar="DOC_ID",
        help="retrieve only from this document (id or source; repeatable: any of them)",
    )
    p.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="GLOB",
        help="retrieve only from documents whose path matches GLOB (repeatable: any of them)",
    )
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="retrieve only from documents with this metadata (repeatable: all of them)",
    )


def parse_where(pairs: list[str]) -> dict[str, str]:
    """``--where KEY=VALUE`` pairs as a dict; raises :class:`ConfigError` for a malformed one."""
    return parse_pairs(pairs, "--where")


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The QueryParam fields the flags set (raises ConfigError for a malformed one)."""
    over: dict[str, Any] = {
        "mode": args.mode,
        "stream": args.stream,
        "only_need_context": args.context_only,
        "only_need_prompt": args.prompt_only,
        "include_references": args.references or args.json,
    }
    if args.keep_conflicting:
        over["keep_conflicting"] = True
    for name in ("top_k", "chunk_top_k", "response_type", "user_prompt", "conditions"):
        if getattr(args, name) is not None:
            over[name] = getattr(args, name)
    for name in ("ll_keywords", "hl_keywords"):
        if getattr(args, name):
            over[name] = [k.strip() for k in getattr(args, name).split(",") if k.strip()]
    if args.doc:
        over["doc_ids"] = list(args.doc)
    if args.path:
        over["path_glob"] = list(args.path)
    if args.where:
        over["where"] = parse_where(args.where)
    return over


async def run(args: argparse.Namespace, settings: Settings) -> int:
    if not args.question and not args.questions_file:
        print("kgrag: error: give a QUESTION or --questions-file", file=sys.stderr)
        return 2
    over = _overrides(args)
    async with opened(settings) as rag:
        param = rag.query_param(**over)
        if args.questions_file:
            return await _many(rag, args, param)
        return await _one(rag, args, param)


def _read_questions(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [q.strip() for q in f if q.strip()]


async def _many(rag: KGRag, args: argparse.Namespace, param: QueryParam) -> int:
    try:
        questions = await asyncio.to_thread(_read_questions, args.questions_file)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"kgrag: error: cannot read questions file: {exc}", file=sys.stderr)
        return 2
    for question in questions:
        started = time.perf_counter()
        row: dict[str, Any] = {"question": question}
        if args.data_only:
            data = await rag.query_data(question, param, trace=args.explain)
            row["latency_s"] = round(time.perf_counter() - started, 6)
            row["context_chars"] = data.get("context_chars", 0)
            row["data"] = data
        else:
            result = await rag.query(question, param.replace(stream=False))
            row["latency_s"] = round(time.perf_counter() - started, 6)
            row["context_chars"] = len(result.context)
            row["mode"] = result.mode
            row["answer" if result.kind == "answer" else result.kind] = result.text
            if args.references:
                row["references"] = result.references
                row["invalid_citations"] = result.invalid_citations
        print(json.dumps(row, ensure_ascii=False), flush=True)
    return 0


def _say_citations(args: argparse.Namespace, result: QueryResult | None) -> None:
    """With ``--references``: the references after the answer, and removed citations on stderr."""
    if result is None or not (args.references or args.explain):
        return
    if result.invalid_citations:
        print(f"kgrag: [answer] note: {invalid_note(result.invalid_citations)}", file=sys.stderr)
    if args.references and not args.json:
        print("\n" + render_references(result.references))


def _say_fallback(result: QueryResult | None) -> None:
    """Say on stderr why only BM25 was searched (the embedder failed) and why the answer
    is extractive (the chat model failed)."""
    if result is not None and result.retrieval_note:
        print(f"kgrag: {result.retrieval_note}", file=sys.stderr)
    if result is not None and result.fallback_reason:
        print(f"kgrag: answered extractively: {result.fallback_reason}", file=sys.stderr)


async def _one(rag: KGRag, args: argparse.Namespace, param: QueryParam) -> int:
    if args.data_only or (args.explain and args.json):
        data = await rag.query_data(args.question, param, trace=args.explain)
        print(json.dumps(data, ensure_ascii=False, indent=None if args.json else 2))
        return 0
    if args.explain:
        from kgrag.retrieval.trace import render_trace

        data = await rag.query_data(args.question, param, trace=True)
        print(render_trace(data["trace"]), file=sys.stderr)
    if param.stream:
        stream = rag.stream(args.question, param)
        async for piece in stream:
            print(piece, end="", flush=True)
        print()
        _say_fallback(stream.result)
        _say_citations(args, stream.result)
        return 0
    result = await rag.query(args.question, param)
    _say_fallback(result)
    if args.json:
        print(
            json.dumps(
                {
                    "mode": result.mode,
                    result.kind: result.text,
                    "references": result.references,
                    "invalid_citations": result.invalid_citations,
                    "keywords": result.keywords,
                    "extractive": result.extractive,
                    "fallback_reason": result.fallback_reason,
                    "retrieval_note": result.retrieval_note,
                    "coverage": result.coverage,
                    "cached": result.cached,
                },
                ensure_ascii=False,
            )
        )
    else:
        print(result.text)
    _say_citations(args, result)
    return 0
