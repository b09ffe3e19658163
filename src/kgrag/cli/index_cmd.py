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

from kgrag.api.facade import IndexReport, KGRag
from kgrag.cli.index_summary import kinds_line, work_line
from kgrag.cli.opening import opened
from kgrag.ingest.names import display_name


def _progress(rag: KGRag, args: argparse.Namespace):
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


def chat_totals(snapshot: dict) -> dict:
    """Chat-model totals (every role but embed / rerank)."""
    rows = [row for role, row in snapshot.items() if role not in ("embed", "rerank")]
    return {
        f: sum(r.get(f, 0) for r in rows)
        for f in ("calls", "cache_hits", "prompt_tokens", "completion_tokens")
    }


def parse_meta(pairs: list[str]) -> dict[str, str]:
    """``--meta KEY=VALUE`` pairs as a dict; a malformed one is a usage error."""
    from kgrag.cli.args import parse_pairs

    return parse_pairs(pairs, "--meta")


def waiting_message(message: str) -> None:
    print(f"kgrag: {message}", file=sys.stderr, flush=True)


async def run(args: argparse.Namespace, settings) -> int:
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
            return _print_status(await rag.status(), args.json)
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


async def _reset_if_changed(settings) -> None:
    from kgrag.indexing.manifest import reset_if_changed

    changes = await reset_if_changed(settings, on_wait=waiting_message)
    if changes:
        print(
            f"kgrag: settings changed since {settings.workdir} was built "
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


async def _summary(rag: KGRag, report: IndexReport) -> dict:
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
    report: IndexReport, summary: dict, as_json: bool, refused: bool = False, *, retry: bool = False
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


def _print_status(status: dict, as_json: bool) -> int:
    if as_json:
        print(json.dumps(status))
        return 0
    g = status["graph"]
    print(f"workdir: {status['workdir']}")
    for name, info in status["documents"].items():
        print(f"  {name:<10} {info['count']}")
    for f in status["failed"]:
        print(display_name(f"    failed {f['file_path']} ({f['id']}): {f['error']}"))
    for w in status.get("warnings", []):
        print(
            display_name(
                f"    warnings {w['file_path']} ({w['id']}): {len(w['warnings'])}; "
                f"first: {w['warnings'][0]}"
            )
        )
    if status.get("disabled"):
        print(f"  disabled   {len(status['disabled'])}")
    print(
        f"graph: {g['documents']} documents, {g['chunks']} chunks, "
        f"{g['entities']} entities, {g['relations']} relations; "
        f"built by: {', '.join(g['built_by']) or 'nothing yet'}"
    )
    print(f"embedding: {status['embedding']}")
    _print_queue(status.get("storage") or {})
    if status.get("settings"):
        print(describe_built_with(built_with(status["settings"])))
    for path, reason in (status.get("rejected_inputs") or {}).items():
        print(display_name(f"    rejected {path}: {reason}"))
    if status.get("summaries_pending"):
        print(
            f"summaries pending: {status['summaries_pending']} (an interrupted run; "
            "`kgrag retry` finishes them)"
        )
    ledger = status.get("llm_all_time") or {}
    for role, row in sorted(ledger.items()):
        print(
            f"  {role:<9} calls {row.get('calls', 0):>6}  prompt {row.get('prompt_tokens', 0):>9}"
            f"  completion {row.get('completion_tokens', 0):>8}  {call_time(row)}"
        )
    return 0


def _print_queue(storage: dict) -> None:
    queue = storage.get("queue")
    if queue:
        print(
            f"storage: {storage['backend']} workspace {storage.get('workspace')}; queue: "
            f"{queue['pending']} pending, {queue['leased']} leased by workers, "
            f"{queue['expired']} with an expired lease"
        )


def call_time(row: dict) -> str:
    """``18.0 s wall, 111.0 s summed over 40 calls`` (parallel calls overlap), else the sum."""
    summed = row.get("seconds", 0)
    if "wall_s" not in row:
        return f"{summed:.1f} s in calls"
    return f"{row['wall_s']:.1f} s wall, {summed:.1f} s summed over {row.get('calls', 0)} calls"


def built_with(remembered: dict | None) -> dict:
    """What the index was built with, for the summary: language (and how chosen), embedder."""
    if not remembered:
        return {}
    from kgrag.indexing.manifest import describe_embedder

    return {
        "language": remembered.get("language"),
        "language_source": remembered.get("language_source"),
        "embedder": describe_embedder(remembered),
        "extractor": remembered.get("extractor"),
        "chunk_size": remembered.get("chunk_size"),
    }


def describe_built_with(info: dict) -> str:
    """``language: Chinese (detected); embedder: local e5-small; extractor: nlp``."""
    source = f" ({info['language_source']})" if info.get("language_source") else ""
    parts = [f"language: {info.get('language') or '?'}{source}", f"embedder: {info['embedder']}"]
    if info.get("extractor"):
        parts.append(f"extractor: {info['extractor']}")
    if info.get("chunk_size"):
        parts.append(f"chunks: {info['chunk_size']} tokens")
    return "; ".join(parts)
