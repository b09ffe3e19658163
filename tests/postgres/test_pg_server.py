"""Two ``kgrag serve`` processes on one PostgreSQL workspace, behind a round-robin balancer.

Each process has its own workdir (as on two machines) and nothing but the
database and the configuration in common: the DSN, the workspace name,
the JWT secret and the accounts file. Requests alternate between them as
a round-robin load balancer would send them, so a job is submitted to one
process and polled on the other, and every answer must be the same
whichever process gives it.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.indexing.cli_processes import FAKE_ENV, Lines, cli_env, command, export
from tests.postgres.test_pg_workers import pg_env, write_corpus
from tests.support.postgres import fresh_workspace

KEY = "pg-server-test-key-0123456789"
SECRET = "pg server tests only: 4f1d8a2c9e7b6a5d3c1e0f9a8b7c6d5e4f3a2b1c"
USER = ("bob", "bob-password-1")


@dataclass
class Serving:
    process: subprocess.Popen[str]
    stderr: Lines
    client: httpx.Client


def _start(folder: Path, env: dict[str, str], accounts: Path) -> Serving:
    folder.mkdir(parents=True)
    process = subprocess.Popen(
        command("serve", "--workdir", folder / "w", "--port", "0", "--accounts-file", accounts),
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr = Lines(process.stderr)
    line = stderr.wait_for("running on http://", timeout=60)
    if line is None:
        process.kill()
        raise AssertionError("kgrag serve did not start:\n" + stderr.text()[-3000:])
    url = line.split("running on ", 1)[1].split()[0]
    client = httpx.Client(base_url=url, headers={"X-API-Key": KEY}, timeout=60)
    return Serving(process, stderr, client)


def _stop(serving: Serving) -> None:
    serving.client.close()
    serving.process.terminate()
    try:
        serving.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        serving.process.kill()
        serving.process.wait()


@dataclass
class Pair:
    """Two servers on one workspace, and the environment that configures them."""

    a: httpx.Client
    b: httpx.Client
    env: dict[str, str]

    def both(self) -> tuple[httpx.Client, httpx.Client]:
        return self.a, self.b


@pytest.fixture
def pair(pg_dsn: str, tmp_path: Path) -> Iterator[Pair]:
    from kgrag.server.access.accounts import add_account

    accounts = tmp_path / "accounts.json"
    add_account(accounts, *USER, ["*"])
    env = pg_env(pg_dsn, fresh_workspace()) | {"KGRAG_API_KEY": KEY, "KGRAG_JWT_SECRET": SECRET}
    started: list[Serving] = []
    try:
        for name in ("a", "b"):
            started.append(_start(tmp_path / name, env, accounts))
        yield Pair(started[0].client, started[1].client, env)
    finally:
        for serving in started:
            _stop(serving)


def ok(reply: httpx.Response) -> Any:
    assert reply.status_code == 200, reply.text
    return reply.json()


def wait_job(client: httpx.Client, job_id: str, workspace: str | None = None) -> dict[str, Any]:
    """The job once it ended (it must succeed), asked of ``client``."""
    path = f"/w/{workspace}/jobs/{job_id}" if workspace else f"/jobs/{job_id}"
    job = ok(client.get(path, params={"wait": 60}))
    assert job["status"] == "succeeded", job
    return job


TEXTS = [
    "Ada Lovelace worked with Charles Babbage in London on the Analytical Engine.",
    "Alan Turing studied at Princeton. Turing later worked in Manchester.",
    "Grace Hopper wrote the first compiler. Hopper served in the Navy.",
    "Claude Shannon founded information theory at Bell Labs.",
]


def test_two_processes_answer_for_each_other(pair: Pair) -> None:
    a, b = pair.both()
    login = ok(b.post("/login", data={"username": USER[0], "password": USER[1]}))
    bearer = {"Authorization": f"Bearer {login['access_token']}", "X-API-Key": ""}
    assert a.get("/documents/status_counts", headers=bearer).status_code == 200  # one secret
    ok(b.get("/documents/status_counts"))  # B's reader opens before anything is recorded

    with ThreadPoolExecutor(2) as pool:  # an insert on A and an upload on B at the same time
        on_a = pool.submit(a.post, "/documents/texts", json={"texts": TEXTS[:2]})
        files = [("file", ("hopper.txt", TEXTS[2].encode(), "text/plain"))]
        on_b = pool.submit(b.post, "/documents/upload", files=files)
        sent_a, sent_b = ok(on_a.result()), ok(on_b.result())
    assert ok(a.get(f"/jobs/{sent_b['job_id']}"))["kind"] == "upload"  # B's job, seen on A
    done_a, done_b = wait_job(b, sent_a["job_id"]), wait_job(a, sent_b["job_id"])
    assert len(done_a["result"]["processed"]) == 2 and len(done_b["result"]["processed"]) == 1
    track = ok(a.get(f"/documents/track_status/{sent_b['track_id']}"))
    assert [d["status"] for d in track["documents"]] == ["processed"]
    listed = {j["job_id"] for j in ok(b.get("/jobs"))["jobs"]}
    assert {sent_a["job_id"], sent_b["job_id"]} <= listed
    for client in (a, b):
        status = ok(client.get("/documents/pipeline_status"))
        assert status["busy"] is False and status["request_pending"] is False
        assert any("uploaded file" in m for m in status["history_messages"])

    wait_job(a, ok(b.post("/documents/text", json={"text": TEXTS[3]}))["job_id"])
    _same_answers(a, b)

    victim = done_a["result"]["processed"][0]
    gone = ok(b.request("DELETE", "/documents/delete_document", json={"doc_ids": [victim]}))
    assert wait_job(a, gone["job_id"])["result"]["deleted"] == [victim]
    for client in (a, b):
        docs = ok(client.post("/documents/paginated", json={"page_size": 50}))["documents"]
        assert victim not in {d["id"] for d in docs} and len(docs) == 3
    _same_answers(a, b)


def _same_answers(a: httpx.Client, b: httpx.Client) -> None:
    """Queries, the graph and the documents read the same on both processes."""
    body = {"query": "Who worked with Charles Babbage?", "mode": "mix"}
    answers = [ok(c.post("/query", json=body))["response"] for c in (a, b)]
    assert answers[0] == answers[1] and answers[0]
    data = [ok(c.post("/query/data", json=body))["data"] for c in (a, b)]
    assert data[0] == data[1] and data[0]["chunks"]
    graphs = [ok(c.get("/graphs", params={"label": "*", "max_nodes": 500})) for c in (a, b)]
    assert graphs[0] == graphs[1] and graphs[0]["nodes"]
    labels = [ok(c.get("/graph/label/list")) for c in (a, b)]
    assert labels[0] == labels[1]


NAMED = {"team-a": TEXTS[0], "team_a": TEXTS[1], "Team-A": TEXTS[2]}  # three workspaces


def test_named_workspaces_are_shared_and_kept_apart(pair: Pair) -> None:
    a, b = pair.both()
    for name, text in NAMED.items():
        sent = ok(a.post(f"/w/{name}/documents/text", json={"text": text}))
        wait_job(b, sent["job_id"], workspace=name)
    models = {m["name"] for m in ok(b.get("/api/tags"))["models"]}  # B never used them
    assert {f"kgrag/{name}:latest" for name in NAMED} <= models
    for name, text in NAMED.items():
        docs = ok(b.post(f"/w/{name}/documents/paginated", json={}))["documents"]
        assert len(docs) == 1 and text.startswith(docs[0]["content_summary"][:40])


def test_concurrent_uploads_on_two_processes_are_processed_once(pair: Pair, tmp_path: Path) -> None:
    folder = write_corpus(tmp_path / "docs", 30, seed=11)
    files = sorted(folder.iterdir())
    texts = [f.read_text(encoding="utf-8") for f in files]
    names = [f.name for f in files]
    batches = [list(range(i, min(i + 8, 30))) for i in range(0, 30, 6)]  # overlapping
    clients = [pair.a, pair.b]

    def send(n: int) -> tuple[int, str]:
        body = {
            "texts": [texts[i] for i in batches[n]],
            "file_sources": [names[i] for i in batches[n]],
        }
        return n, ok(clients[n % 2].post("/documents/texts", json=body))["job_id"]

    with ThreadPoolExecutor(len(batches)) as pool:
        sent = list(pool.map(send, range(len(batches))))
    results = [wait_job(clients[(n + 1) % 2], job_id)["result"] for n, job_id in sent]
    processed = [d for r in results for d in r["processed"]]
    assert len(processed) == len(set(processed)) == 30  # each document once, none twice
    counts = ok(pair.a.get("/documents/status_counts"))["status_counts"]
    assert counts.get("processed") == 30
    reference = _reference_export(tmp_path / "ref", texts, names)
    assert export(tmp_path / "pg", tmp_path, env=pair.env) == reference


def _reference_export(workdir: Path, texts: list[str], names: list[str]) -> bytes:
    """The export of one embedded-store process indexing the same texts."""
    from kgrag.api.facade import KGRag
    from kgrag.config.settings import Settings

    settings = Settings(
        workdir=workdir, **{k.removeprefix("KGRAG_").lower(): v for k, v in FAKE_ENV.items()}
    )

    async def index() -> None:
        async with KGRag(settings) as rag:
            await rag.insert(texts, names)

    asyncio.run(index())
    return export(workdir, workdir.parent, env=cli_env())
