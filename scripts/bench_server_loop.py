"""Is the server's event loop free while it indexes? ``/health`` during a large upload.

    python scripts/bench_server_loop.py                      # 10 MiB text + 8 MiB-of-text .docx
    python scripts/bench_server_loop.py --text-mb 10 --docx-mb 8 --calls 200

Starts ``kgrag serve`` as a process on a fresh workdir, offline models
(the NLP extractor and the local embedder: indexing is CPU-bound, as it is
for a user without a model endpoint), uploads a large plain text and a
large .docx (``tests/server/big_files.py``) in one request, and as soon as
the upload is answered makes ``--calls`` sequential ``GET /health`` calls.
Printed: how long the upload took to be answered, p50 / p99 / max of the
``/health`` calls, whether the indexing job was still running when the
last call ended (else the figure says nothing about a busy server), and a
413 probe (a body over ``max_upload_mb``) answered during the indexing.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.server.big_files import big_docx, big_text  # noqa: E402

MiB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(workdir: Path, port: int, log: IO[bytes]) -> subprocess.Popen[bytes]:
    env = os.environ | {
        "KGRAG_EXTRACTOR": "nlp",
        "KGRAG_EMBEDDING_PROVIDER": "local",
        "KGRAG_LLM_PROVIDER": "none",
        "KGRAG_MAX_UPLOAD_MB": "64",
    }
    command = [sys.executable, "-m", "kgrag.cli.main", "serve", "--workdir", str(workdir)]
    return subprocess.Popen([*command, "--port", str(port)], env=env, stderr=log, stdout=log)


def wait_up(base: str, server: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if server.poll() is not None:
            raise SystemExit("the server stopped (see its log)")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not start in 60 s")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def probe_413(base: str) -> float:
    """Seconds until a body over the upload limit is refused."""
    started = time.perf_counter()
    over = b"x" * (65 * MiB)
    files = [("file", ("over.txt", over, "text/plain"))]
    reply = httpx.post(f"{base}/documents/upload", files=files, timeout=120)
    assert reply.status_code == 413, reply.status_code
    return time.perf_counter() - started


def bench(
    base: str, text: bytes, document: bytes, calls: int, gap: float, until_done: bool
) -> None:
    files = [("files", ("big.txt", text, "text/plain")), ("files", ("big.docx", document, "x"))]
    started = time.perf_counter()
    reply = httpx.post(f"{base}/documents/upload", files=files, timeout=600)
    reply.raise_for_status()
    job_id = reply.json()["job_id"]
    print(f"upload answered in {time.perf_counter() - started:.2f} s: {reply.json()['message']}")
    seconds: list[float] = []
    with httpx.Client(base_url=base, timeout=120) as client:
        status = "running"
        while len(seconds) < calls or (until_done and status in ("queued", "running")):
            t = time.perf_counter()
            assert client.get("/health").status_code == 200
            seconds.append(time.perf_counter() - t)
            time.sleep(gap)
            if len(seconds) % 20 == 0 or len(seconds) >= calls:
                status = client.get(f"/jobs/{job_id}").json()["status"]
        calls = len(seconds)
    ms = [s * 1000 for s in seconds]
    print(
        f"/health x{calls}: p50 {statistics.median(ms):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms,"
        f" max {max(ms):.1f} ms, total {sum(seconds):.1f} s; job then: {status}"
    )
    print(f"413 probe (a body over the limit) answered in {probe_413(base):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--text-mb", type=float, default=10.0)
    parser.add_argument("--docx-mb", type=float, default=8.0, help="characters of its text, MiB")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument(
        "--until-done", action="store_true", help="go on calling until the job has ended"
    )
    parser.add_argument("--log", default="bench_server_loop.log", help="the server's output")
    parser.add_argument("--gap", type=float, default=0.1, help="seconds between two calls")
    args = parser.parse_args()
    text, document = big_text(int(args.text_mb * MiB)), big_docx(int(args.docx_mb * MiB))
    print(f"text {len(text) / MiB:.1f} MiB, docx {len(document) / MiB:.1f} MiB")
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        log = open(args.log, "wb")
        server = start(Path(folder) / "index", port, log)
        try:
            wait_up(f"http://127.0.0.1:{port}", server)
            bench(f"http://127.0.0.1:{port}", text, document, args.calls, args.gap, args.until_done)
        finally:
            server.terminate()
            server.wait(60)
            log.close()


if __name__ == "__main__":
    main()
