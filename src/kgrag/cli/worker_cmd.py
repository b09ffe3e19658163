"""``kgrag enqueue`` and ``kgrag worker``: indexing by any number of workers.

    kgrag enqueue [--workdir W] [--json] [--meta K=V] PATH...
    kgrag worker  [--workdir W] [--json] [--concurrency N] [--lease S]
                  [--max-attempts N] [--exit-when-idle]

``enqueue`` loads the files and queues the new, updated and moved ones
(``pending``) without extracting anything; ``worker`` claims queued
documents, indexes them and waits for more (``--exit-when-idle``: it stops
once the queue is empty and no other worker holds a document). Both need
``storage = postgres`` for more than one worker; see docs/postgres.md.
``worker`` exits 1 when it gave a document up, or stopped on an error (one
line on stderr: a database that stayed away past ``postgres_reconnect_s``,
say); SIGTERM stops it as Ctrl-C does, its documents back in the queue
(exit 143).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import TYPE_CHECKING

from kgrag.cli.opening import opened

if TYPE_CHECKING:
    from kgrag.api.facade import KGRag
    from kgrag.cli.args import AddFlags, Subcommands
    from kgrag.config.settings import Settings
    from kgrag.indexing.enqueue import EnqueueReport
    from kgrag.indexing.worker import WorkerOptions, WorkerReport


def add_parsers(sub: Subcommands, common: AddFlags, writer: AddFlags) -> None:
    p = sub.add_parser("enqueue", help="queue files and folders for workers, without indexing")
    common(p)
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument(
        "--meta",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="metadata stored with every document queued (repeatable)",
    )
    writer(p)
    p = sub.add_parser("worker", help="index queued documents (one of many workers)")
    common(p)
    p.add_argument(
        "--concurrency",
        type=int,
        default=8,
        help="documents in flight (default 8; more than KGRAG_LLM_MAX_ASYNC keeps every call busy)",
    )
    p.add_argument("--lease", type=float, default=60.0, help="lease seconds (default 60)")
    p.add_argument(
        "--max-attempts", type=int, default=3, help="tries before a document is given up"
    )
    p.add_argument("--exit-when-idle", action="store_true", help="stop once the queue is empty")
    writer(p)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    from kgrag.cli.index_cmd import parse_meta, waiting_message

    async with opened(settings, create=True) as rag:
        rag.on_writer_wait = waiting_message
        if args.command == "enqueue":
            report, errors = await rag.enqueue_paths(args.paths, metadata=parse_meta(args.meta))
            return _print_enqueued(report, errors, args.json)
        from kgrag.indexing.worker import WorkerOptions

        options = WorkerOptions(
            concurrency=max(1, args.concurrency),
            lease_s=args.lease,
            max_attempts=max(1, args.max_attempts),
            exit_when_idle=args.exit_when_idle,
        )
        done = await _work_until_terminated(rag, options)
    if done is None:
        print(
            "kgrag: worker stopped (SIGTERM); its documents are back in the queue", file=sys.stderr
        )
        return TERMINATED
    return _print_worker(done, args.json)


TERMINATED = 128 + signal.SIGTERM


async def _work_until_terminated(rag: KGRag, options: WorkerOptions) -> WorkerReport | None:
    """``rag.work(options)``; None when SIGTERM cancelled it (the worker released its leases)."""
    task, loop = asyncio.current_task(), asyncio.get_running_loop()
    terminated = False

    def stop() -> None:
        nonlocal terminated
        terminated = True
        if task is not None:
            task.cancel()

    loop.add_signal_handler(signal.SIGTERM, stop)
    try:
        return await rag.work(options)
    except asyncio.CancelledError:
        if not terminated or task is None:
            raise
        task.uncancel()
        return None
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def _print_enqueued(report: EnqueueReport, errors: list[str], as_json: bool) -> int:
    for message in errors:
        print(f"kgrag: skipped {message}", file=sys.stderr)
    counts = {
        k: len(getattr(report, k))
        for k in (
            "new",
            "updated",
            "replaced",
            "moved",
            "unchanged",
            "metadata_updated",
            "requeued",
        )
    }
    if as_json:
        print(json.dumps(counts | {"queued": len(report.queued), "skipped": len(errors)}))
    else:
        print(f"queued {len(report.queued)} document(s) ({_joined(counts)})")
    return 0 if report.queued or report.unchanged or report.metadata_updated else 1


def _print_worker(done: WorkerReport, as_json: bool) -> int:
    for doc, error in done.given_up:
        print(f"kgrag: gave up {doc}: {error}", file=sys.stderr)
    summary = {
        "worker": done.owner,
        "processed": len(done.processed),
        "retried": len(done.retried),
        "given_up": len(done.given_up),
        "lost": len(done.lost),
        "summaries": done.summaries,
        "seconds": round(done.seconds, 3),
    }
    if as_json:
        print(json.dumps(summary))
    else:
        print(
            f"worker {done.owner}: processed {summary['processed']} document(s) in "
            f"{summary['seconds']:.1f} s ({summary['retried']} retried, "
            f"{summary['given_up']} given up, {summary['summaries']} summaries)"
        )
    return 1 if done.given_up else 0


def _joined(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items() if n) or "nothing new"
