"""The server answers while it indexes: its event loop never waits on a job's work.

A 10 MiB text and a large .docx go in through the real HTTP server, with
the offline models (the NLP extractor and the local embedder: indexing is
CPU-bound, as it is for a user without a model endpoint). While the job
runs, 200 sequential ``/health`` calls, one every 50 ms so that they span
loading, chunking and extraction, must stay fast. Before the jobs ran on a
thread of their own, chunking and embedding on the server's loop held
single calls for 4 to 5 s (p99 1.1 to 1.2 s); now the slowest call takes
about 0.3 s and p99 is about 0.1 s on a shared two-core machine
(``scripts/bench_server_loop.py`` measures the same with the server in a
process of its own). The bounds here are generous for a loaded machine.
"""

from __future__ import annotations

import statistics
import time

import pytest

from .big_files import big_docx, big_text
from .conftest import StartServer
from .served import Served

MiB = 1024 * 1024
CALLS, GAP_S = 200, 0.05
P50_S, P99_S, MAX_S = 0.2, 1.0, 2.5

pytestmark = pytest.mark.slow


def _offline(start_server: StartServer) -> Served:
    pytest.importorskip("spacy")
    pytest.importorskip("onnxruntime")
    return start_server(
        llm_provider="none", embedding_provider="local", extractor="nlp", max_upload_mb=64
    )


def test_health_stays_fast_while_a_large_upload_is_indexed(start_server: StartServer) -> None:
    server = _offline(start_server)
    files = [
        ("files", ("big.txt", big_text(10 * MiB), "text/plain")),
        ("files", ("big.docx", big_docx(4 * MiB), "application/octet-stream")),
    ]
    with server.client(timeout=120) as client:
        reply = client.post("/documents/upload", files=files)
        assert reply.status_code == 200, reply.text
        job_id = reply.json()["job_id"]
        seconds = []
        for _ in range(CALLS):
            started = time.perf_counter()
            assert client.get("/health").status_code == 200
            seconds.append(time.perf_counter() - started)
            time.sleep(GAP_S)
        job = client.get(f"/jobs/{job_id}").json()
    assert job["status"] == "running", job  # else the calls measured an idle server
    ordered = sorted(seconds)
    p50, p99, worst = statistics.median(ordered), ordered[int(0.99 * len(ordered))], ordered[-1]
    shown = f"p50 {p50:.3f} s, p99 {p99:.3f} s, max {worst:.3f} s"
    assert p50 < P50_S and p99 < P99_S and worst < MAX_S, shown
