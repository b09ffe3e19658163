"""``kgrag index``, ``kgrag retry`` and ``kgrag status``.

``kgrag index`` exits 0 when it indexed (or found unchanged) something,
naming every file it skipped and why; 1 when a named path does not exist
(checked before anything is opened), when nothing at all could be read,
when a document failed, or with ``--strict`` when any file was skipped (then
nothing is indexed); 2 for a usage or settings error (an unknown
``--encoding``, settings that contradict the index's). It is the only
command that creates an index; ``retry`` and ``status`` refuse a workdir
without one (exit 2).

``--reset-if-settings-changed`` (``make demo`` uses it): when the embedder,
extractor or chunking set differ from those the index was built with, the
index is emptied and built afresh, and one line says so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kgrag.api.facade import IndexReport, KGRag
from kgrag.cli.index_summary import IndexSummary, kinds_line, work_line
from kgrag.cli.opening import opened
from kgrag.cli.status_view import built_with, describe_built_with, print_status
from kgrag.ingest.names import display_name

if TYPE_CHECKING:
    from kgrag.config.settings import Settings
    from kgrag.indexing.progress import ProgressSink


def _progress(rag: KGRag, args: argparse.Namespace) -> ProgressSink | None:
    """A live bar on a terminal; plain lines per interval when stderr is a log or a pipe."""
    terminal = sys.stderr.isatty()
    if getattr(args, "no_progress", False) or (args.json and not terminal):
        return None

    def calls() -> int:
        return chat_totals(rag.models.ledger.snapshot())["calls"]

    if not terminal:
        from kgrag.indexing.progress_log import LineProgress

        return LineProgress(llm_calls=calls)
    from kgrag.indexing.progress import RichProgress

    return RichProgress(llm_calls=calls)


def chat_totals(snapshot: Mapping[str, Mapping[str, float]]) -> dict[str, int]:
    """Chat-model totals (every role but embed / rerank): counts, whole numbers."""
    rows = [row for role, row in snapshot.items() if role not in ("embed", "rerank")]
    return {
        f: int(sum(r.get(f, 0) for r in rows))
        for f in ("calls", "cache_hits", "prompt_tokens", "completion_tokens")
    }


def parse_meta(pairs: list[str]) -> dict[str, str]:
    """``--meta KEY=VALUE`` pairs as a dict; a malformed one is a usage error."""
    from kgrag.cli.args import parse_pairs

    return parse_pairs(pairs, "--meta")


def waiting_message(message: str) -> None:
    print(f"kgrag: {message}", file=sys.stderr, flush=True)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "index":
        missing = _missing_paths(args.paths)
        if missing:
            return 1
        from kgrag.ingest.options import LoadOptions

        LoadOptions.from_settings(settings)  # an unknown --encoding fails before anything opens
        if args.reset_if_settings_changed:
            await _reset_if_changed(settings)
    async with opened(settings, create=args.command == "index") as rag:
        rag.on_writer_wait = waiting_message
        if args.command == "status":
            return print_status(await rag.status(), args.json)
        if args.command == "index":
            report = await rag.index_paths(
                args.paths,
                progress=_progress(rag, args),
                metadata=parse_meta(args.meta),
                replace=args.replace,
                strict=args.strict,
            )
        else:
            report = await rag.retry_failed(progress=_progress(rag, args))
        summary = await _summary(rag, report)
    refused = args.command == "index" and args.strict and bool(report.load_errors)
    _print_report(report, summary, args.json, refused, retry=args.command == "retry")
    return _exit_code(args.command, report, refused)


async def _reset_if_changed(settings: Settings) -> None:
    from kgrag.indexing.manifest import reset_if_changed

    changes = await reset_if_changed(settings, on_wait=waiting_message)
    if changes:
        print(
            f"kgrag: settings changed since {settings.store.workdir} was built "
            f"({'; '.join(changes)}): emptied the index, indexing afresh",
            file=sys.stderr,
        )


def _missing_paths(paths: list[str]) -> list[str]:
    """Named paths that do not exist, each reported on stderr."""
    missing = [p for p in paths if not os.path.exists(p)]
    for path in missing:
        _note(f"kgrag: error: no such file or folder: {path}")
    if missing:
        print("kgrag: nothing was indexed", file=sys.stderr)
    return missing


def _exit_code(command: str, report: IndexReport, refused: bool) -> int:
    """1 for failed documents, a --strict refusal, or an index run that read nothing."""
    if report.failed or refused:
        return 1
    read = report.documents or report.unchanged or report.metadata_updated or report.duplicates
    if command == "index" and not read:
        what = (
            f"all {len(report.load_errors)} file(s) were skipped"
            if report.load_errors
            else "no files were found"
        )
        print(f"kgrag: nothing could be read: {what}", file=sys.stderr)
        return 1
    return 0


async def _summary(rag: KGRag, report: IndexReport) -> IndexSummary:
    status = await rag.status()
    totals = chat_totals(rag.models.ledger.snapshot())
    return {
        "settings": built_with(status.get("settings")),
        "documents": report.documents,
        "processed": len(report.processed),
        "failed": len(report.failed),
        "duplicates": len(report.duplicates),
        "new": len(report.new),
        "updated": len(report.updated),
        "replaced": len(report.replaced),
        "moved": len(report.moved),
        "requeued": len(report.requeued),
        "metadata_updated": len(report.metadata_updated),
        "unchanged": len(report.unchanged),
        "with_warnings": len(report.warnings),
        "chunks": status["graph"]["chunks"],
        "entities": status["graph"]["entities"],
        "relations": status["graph"]["relations"],
        # this run's work, counted as the progress bar counts it
        "chunks_to_extract": report.progress.chunks,
        "chunks_extracted": report.progress.chunks_extracted,
        "entity_records": report.progress.entities,
        "relation_records": report.progress.relations,
        "llm_calls": totals["calls"],
        "prompt_tokens": totals["prompt_tokens"],
        "completion_tokens": totals["completion_tokens"],
        "insert_s": round(report.insert_s, 3),
        "skipped": len(report.load_errors),
    }


def _print_report(
    report: IndexReport,
    summary: IndexSummary,
    as_json: bool,
    refused: bool = False,
    *,
    retry: bool = False,
) -> None:
    for message in report.load_errors:
        _note(f"kgrag: skipped {message}")
    if refused:
        print(
            f"kgrag: --strict: {len(report.load_errors)} file(s) could not be used; "
            "nothing was indexed",
            file=sys.stderr,
        )
    for message in report.duplicates:
        _note(f"kgrag: duplicate {message}")
    for doc, path, error in report.failed:
        _note(f"kgrag: failed {path} ({doc}): {error}")
    for doc, warnings in report.warnings.items():
        _note(f"kgrag: {doc} indexed with {len(warnings)} warning(s); first: {warnings[0]}")
    if as_json:
        print(json.dumps(summary | {"refused": refused}))
        return
    if refused:
        return
    if kinds_line(summary):
        print(kinds_line(summary))
    if summary["settings"]:
        print(describe_built_with(summary["settings"]))
    print(work_line(summary, retry=retry))


def _note(line: str) -> None:
    """One line on stderr; names in it escaped (:func:`kgrag.ingest.names.display_name`)."""
    print(display_name(line), file=sys.stderr)
