"""The HTTP server under load: concurrent ``/query/data`` while an upload is indexed.

    python scripts/bench_server_load.py --clients 16 --seconds 60 --upload 20
    python scripts/bench_server_load.py --peer-python /tmp/peer-api/bin/python   # LightRAG too

The corpus is ``run_bench.py --synthetic 200``'s (``../shared/bench``, its
own generator, seed 0); the index is built once with ``kgrag index`` (the
LLM extractor, against ``synth_llm.py`` as run_bench does) and cached under
``--cache``. Each run copies the index, starts ``synth_llm.py`` and ``kgrag
serve`` on the copy as processes, and drives the server over real HTTP with
httpx: ``--clients`` clients post ``/query/data`` back to back (the
benchmark's 10 questions in turn) for ``--seconds``, while ``--upload`` new
documents of the same generator go in with one ``POST /documents/upload``
and ``GET /documents/track_status/{id}`` is polled until every one is
processed. Reported: errors (every non-2xx and every exception), p50, p99
and throughput of ``/query/data`` (also split into during and after the
upload), how long the upload took to be processed, and the server's CPU.

With ``--peer-python`` (an interpreter with ``lightrag-hku[api]``), LightRAG
Server gets the same load on its own index of the same corpus (built once
with ``peer_lightrag.py index``, cached too), its upload as one request per
file (its route takes one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

BENCH = Path(__file__).resolve().parents[1] / ".." / "shared" / "bench"
sys.path.insert(0, str(BENCH.resolve()))
# the shared benchmark's corpus, questions and synth_llm (a folder beside the repository)
import run_bench  # type: ignore[import-not-found]  # noqa: E402

KGRAG = [sys.executable, "-m", "kgrag.cli.main"]
DONE = frozenset({"processed", "failed"})
UPLOAD_WAIT_S = 900  # how long an upload may still take once the clients stopped


@dataclass(frozen=True)
class Load:
    """What one run does: the load, the corpus and where things are kept."""

    clients: int
    seconds: float
    upload: int
    mode: str
    docs: int
    seed: int
    cache: Path


@dataclass
class Tally:
    """What the clients saw: latencies (with their start times) and failures."""

    latencies: list[tuple[float, float]] = field(default_factory=list)  # (started, seconds)
    errors: dict[str, int] = field(default_factory=dict)
    empty: int = 0  # 2xx answers that held no chunk (served, but retrieved nothing)

    def fail(self, why: str) -> None:
        self.errors[why] = self.errors.get(why, 0) + 1


@dataclass(frozen=True)
class Job:
    """One server's run: the load, its questions and the files to upload."""

    load: Load
    questions: list[str]
    files: list[Path]
    one_file_per_upload: bool  # LightRAG's route takes one file a request


@dataclass(frozen=True)
class System:
    """A server to load: how to start it on a workdir and how its upload is sent."""

    name: str
    command: list[str]
    env: dict[str, str]
    cwd: Path  # the served copy: whatever the server writes beside it stays there
    one_file_per_upload: bool


# -- corpus and indexes ------------------------------------------------------


def corpus(load: Load) -> Path:
    """The benchmark corpus (written once under the cache)."""
    out = load.cache / f"corpus-{load.docs}-seed{load.seed}"
    if not (out / ".complete").exists():
        run_bench.make_corpus(load.docs, out, load.seed)
        (out / ".complete").write_text("")
    return out


def upload_files(load: Load) -> list[Path]:
    """``load.upload`` new documents of the same generator (numbers after the corpus)."""
    out = load.cache / f"upload-seed{load.seed}"
    out.mkdir(parents=True, exist_ok=True)
    pool = run_bench.CorpusPool(load.seed)
    files = []
    for i in range(load.docs, load.docs + load.upload):
        path = out / f"upload_{i:05d}.txt"
        if not path.exists():
            path.write_text(run_bench.make_document(pool, load.seed, i), encoding="utf-8")
        files.append(path)
    return files


def synth_env(synth: run_bench.SynthServer) -> dict[str, str]:
    """The environment run_bench gives its systems, without the caller's KGRAG_/OPENAI_ ones."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(
        OPENAI_BASE_URL=synth.base_url,
        OPENAI_API_BASE=synth.base_url,
        SYNTH_LLM_BASE_URL=synth.base_url,
        OPENAI_API_KEY="synth-key",
        SYNTH_LLM_DIM="384",
    )
    return env


def built(target: Path, command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run an index command into ``target`` once; its wall seconds are kept beside it."""
    stamp = target.parent / f"{target.name}.json"
    if stamp.exists() and target.exists():
        return dict(json.loads(stamp.read_text()))
    shutil.rmtree(target, ignore_errors=True)
    log(f"building {target} (once): {' '.join(command)}")
    started = time.perf_counter()
    done = subprocess.run(
        command, env=env, cwd=target.parent, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"index build failed ({done.returncode}):\n{done.stderr[-3000:]}")
    info = {"build_wall_s": round(time.perf_counter() - started, 1), "command": command}
    stamp.write_text(json.dumps(info))
    return info


# -- servers -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(base: str, proc: subprocess.Popen[bytes], log_path: Path) -> None:
    """Wait for ``GET /health`` to answer 200 (at most 300 s; LightRAG loads its index first)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(
                f"the server exited ({proc.returncode}):\n{log_path.read_text()[-3000:]}"
            )
        try:
            if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the server did not become healthy; see {log_path}")


@contextmanager
def serving(system: System, port: int, log_path: Path) -> Iterator[tuple[str, int]]:
    """The server as a process of its own; yields its base URL and pid, then stops it."""
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            system.command, env=system.env, cwd=system.cwd, stdout=out, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, log_path)
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a live process (``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- the load ----------------------------------------------------------------


async def one_query(client: httpx.AsyncClient, body: dict[str, Any], tally: Tally) -> None:
    started = time.perf_counter()
    try:
        reply = await client.post("/query/data", json=body)
        if not reply.is_success:
            tally.fail(f"HTTP {reply.status_code}")
            return
        chunks = reply.json().get("data", {}).get("chunks")
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        tally.fail(type(exc).__name__)
        return
    tally.latencies.append((started, time.perf_counter() - started))
    tally.empty += not chunks


def query_body(load: Load, question: str) -> dict[str, Any]:
    """The same body for both servers (no reranker is configured on either)."""
    return {"query": question, "mode": load.mode, "enable_rerank": False}


async def client_loop(client: httpx.AsyncClient, job: Job, offset: int, tally: Tally) -> None:
    """Post ``/query/data`` back to back until the deadline, questions in turn."""
    deadline = time.perf_counter() + job.load.seconds
    i = offset
    while time.perf_counter() < deadline:
        await one_query(client, query_body(job.load, job.questions[i % len(job.questions)]), tally)
        i += 1


async def post_upload(client: httpx.AsyncClient, files: list[Path], one_each: bool) -> list[str]:
    """Upload the files (one request, or one per file); the track ids."""
    batches = [[f] for f in files] if one_each else [files]
    tracks = []
    for batch in batches:
        field_name = "file" if one_each else "files"
        parts = [(field_name, (f.name, f.read_bytes(), "text/plain")) for f in batch]
        reply = await client.post("/documents/upload", files=parts)
        reply.raise_for_status()
        tracks.append(str(reply.json()["track_id"]))
    return tracks


async def track_statuses(
    client: httpx.AsyncClient, tracks: list[str], tally: Tally
) -> dict[str, int]:
    """How many of the tracks' documents are in each status (a failed poll is an error)."""
    statuses: dict[str, int] = {}
    for track in tracks:
        try:
            reply = await client.get(f"/documents/track_status/{track}")
            docs = reply.json().get("documents", []) if reply.is_success else []
        except (httpx.HTTPError, ValueError) as exc:
            tally.fail(f"track_status {type(exc).__name__}")
            continue
        if not reply.is_success:
            tally.fail(f"track_status HTTP {reply.status_code}")
        for doc in docs:
            status = str(doc.get("status", "?")).lower().split(".")[-1]
            statuses[status] = statuses.get(status, 0) + 1
    return statuses


async def processed(
    client: httpx.AsyncClient, tracks: list[str], expected: int, tally: Tally
) -> dict[str, int]:
    """Poll the tracks every 0.25 s until all ``expected`` documents are done; their statuses."""
    while True:
        statuses = await track_statuses(client, tracks, tally)
        if sum(n for s, n in statuses.items() if s in DONE) >= expected:
            return statuses
        await asyncio.sleep(0.25)


async def upload_and_wait(client: httpx.AsyncClient, job: Job, tally: Tally) -> dict[str, Any]:
    """Upload, then wait until processed: seconds to accept and to process, final statuses."""
    started = time.perf_counter()
    tracks = await post_upload(client, job.files, job.one_file_per_upload)
    accepted = time.perf_counter()
    statuses = await processed(client, tracks, len(job.files), tally)
    ended = time.perf_counter()
    return {
        "started": started,
        "ended": ended,
        "accept_s": round(accepted - started, 3),
        "processed_s": round(ended - started, 2),
        "statuses": statuses,
    }


async def drive(base: str, job: Job) -> dict[str, Any]:
    """The clients and the upload at once; the figures of what they saw."""
    limits = httpx.Limits(max_connections=job.load.clients + 4)
    timeout = httpx.Timeout(120.0)
    async with (
        httpx.AsyncClient(base_url=base, limits=limits, timeout=timeout) as client,
        httpx.AsyncClient(base_url=base, timeout=timeout) as uploader,
    ):
        for q in job.questions:  # warm-up: vectors loaded, keywords cached, as a server runs
            await one_query(client, query_body(job.load, q), Tally())
        tally = Tally()
        started = time.perf_counter()
        loops = [client_loop(client, job, i, tally) for i in range(job.load.clients)]
        upload_task = asyncio.create_task(upload_and_wait(uploader, job, tally))
        await asyncio.gather(*loops)
        wall = time.perf_counter() - started
        upload = await asyncio.wait_for(upload_task, UPLOAD_WAIT_S)
    return figures(tally, upload, started, wall)


# -- figures -----------------------------------------------------------------


def latency_figures(samples: list[float], seconds: float) -> dict[str, Any]:
    def ms(q: float) -> float | None:
        value = run_bench.percentile(samples, q)
        return None if value is None else round(value * 1000, 1)

    rate = len(samples) / seconds if seconds > 0 else None
    return {
        "requests": len(samples),
        "p50_ms": ms(50),
        "p99_ms": ms(99),
        "req_per_s": None if rate is None else round(rate, 1),
    }


def figures(tally: Tally, upload: dict[str, Any], started: float, wall: float) -> dict[str, Any]:
    """Whole-run figures, and the same split at the moment the upload was processed."""
    ended = upload["ended"]
    during = [s for t, s in tally.latencies if t < ended]
    after = [s for t, s in tally.latencies if t >= ended]
    split = min(ended, started + wall) - started
    return {
        "errors": sum(tally.errors.values()),
        "error_kinds": tally.errors,
        "empty_answers": tally.empty,
        "query_data": latency_figures([s for _, s in tally.latencies], wall),
        "during_upload": latency_figures(during, split),
        "after_upload": latency_figures(after, wall - split),
        "upload": {k: v for k, v in upload.items() if k not in ("started", "ended")},
        "wall_s": round(wall, 1),
    }


# -- one system --------------------------------------------------------------


def fresh_copy(index: Path, load: Load, name: str) -> Path:
    """A copy of the cached index to serve (the upload changes it)."""
    work = load.cache / f"run-{name}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(index, work, symlinks=True)
    return work


def bench_system(system: System, job: Job) -> dict[str, Any]:
    """Start the server, load it, stop it; the figures and the server's CPU seconds."""
    port = int(system.command[system.command.index("--port") + 1])
    log_path = job.load.cache / f"{system.name}-server.log"
    with serving(system, port, log_path) as (base, pid):
        cpu_before = cpu_seconds(pid)
        out = asyncio.run(drive(base, job))
        out["server_cpu_s"] = round(cpu_seconds(pid) - cpu_before, 1)
    return {"system": system.name, **out}


def kgrag_system(load: Load, synth: run_bench.SynthServer, docs: Path) -> tuple[System, dict]:
    env = synth_env(synth)
    index = load.cache / f"kgrag-index-{load.docs}"
    info = built(index, [*KGRAG, "index", "--no-progress", "--workdir", str(index), str(docs)], env)
    work = fresh_copy(index, load, "kgrag")
    command = [*KGRAG, "serve", "--workdir", str(work), "--port", str(free_port())]
    return System("kgrag", command, env, work, one_file_per_upload=False), info


def lightrag_system(
    load: Load, synth: run_bench.SynthServer, docs: Path, python: str
) -> tuple[System, dict]:
    """LightRAG Server (stock settings, the OpenAI binding on synth_llm) on its own index."""
    env = synth_env(synth)
    env["TIKTOKEN_CACHE_DIR"] = str(load.cache / "tiktoken")
    index = load.cache / f"lightrag-index-{load.docs}"
    peer = [python, str(BENCH / "peer_lightrag.py"), "index", "--workdir", str(index), str(docs)]
    info = built(index, peer, env)
    work = fresh_copy(index, load, "lightrag")
    env.update(lightrag_env(synth.base_url, work))
    port = free_port()
    command = [str(Path(python).parent / "lightrag-server"), "--port", str(port)]
    return System("lightrag", command, env, work, one_file_per_upload=True), info


def lightrag_env(base_url: str, work: Path) -> dict[str, str]:
    """LightRAG Server's settings: what peer_lightrag.py gives LightRAG, as variables."""
    return {
        "WORKING_DIR": str(work),
        "INPUT_DIR": str(work / "inputs"),
        "HOST": "127.0.0.1",
        "LLM_BINDING": "openai",
        "LLM_MODEL": "gpt-4o-mini",
        "LLM_BINDING_HOST": base_url,
        "LLM_BINDING_API_KEY": "synth-key",
        "EMBEDDING_BINDING": "openai",
        "EMBEDDING_MODEL": "synth-embed",
        "EMBEDDING_DIM": "384",
        "EMBEDDING_BINDING_HOST": base_url,
        "EMBEDDING_BINDING_API_KEY": "synth-key",
        "LOG_LEVEL": "WARNING",
    }


# -- main --------------------------------------------------------------------


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def parse() -> tuple[Load, argparse.Namespace]:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--upload", type=int, default=20, help="documents uploaded during the load")
    p.add_argument("--mode", default="mix", help="query mode of /query/data (LightRAG's default)")
    p.add_argument("--docs", type=int, default=200, help="documents in the served index")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache", type=Path, default=Path("/tmp/kgrag-bench-server-load"))
    p.add_argument("--peer-python", help="an interpreter with lightrag-hku[api]: load LightRAG too")
    p.add_argument("--no-kgrag", action="store_true", help="the peer alone")
    p.add_argument("--out", type=Path, help="write the JSON report here")
    a = p.parse_args()
    load = Load(a.clients, a.seconds, a.upload, a.mode, a.docs, a.seed, a.cache.resolve())
    return load, a


def run_one(make: Any, load: Load, docs: Path, files: list[Path], *extra: str) -> dict:
    """Start a fresh synth_llm, build or reuse the index, load the server."""
    synth = run_bench.SynthServer(
        ["--port", "0", "--seed", str(load.seed)], load.cache / "synth.log"
    )
    try:
        system, info = make(load, synth, docs, *extra)
        questions = run_bench.make_questions(docs, load.seed)
        job = Job(load, questions, files, system.one_file_per_upload)
        log(f"[{system.name}] {load.clients} clients, {load.seconds:.0f} s, {len(files)} uploaded")
        synth.reset()
        result = bench_system(system, job)
        result["llm_calls"] = synth.stats().get("calls", {})
        result["index_build"] = info
        log(f"[{system.name}] {json.dumps(result)}")
        return result
    finally:
        synth.stop()


def main() -> int:
    load, a = parse()
    load.cache.mkdir(parents=True, exist_ok=True)
    docs = corpus(load)
    files = upload_files(load)
    results = []
    if not a.no_kgrag:
        results.append(run_one(kgrag_system, load, docs, files))
    if a.peer_python:
        results.append(run_one(lightrag_system, load, docs, files, a.peer_python))
    report = {"load": {k: str(v) for k, v in vars(load).items()}, "results": results}
    print(json.dumps(report, indent=2))
    if a.out:
        a.out.write_text(json.dumps(report, indent=2))
    return 1 if any(r["errors"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
