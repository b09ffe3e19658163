"""Several ``kgrag`` processes on one workdir, and ``kill -9`` during delete and supersede.

Every process is ``python -m kgrag.cli.main`` with the built-in fake
models (see :mod:`.cli_processes`). Indexes are compared through
``kgrag export --no-timestamps``: byte-identical files are equal graphs.

After a kill the index must pass ``kgrag check`` and hold the old state or
the new one: a delete is one transaction (all its documents or none); a
supersede commits document by document (each old or new). LLM summaries
are deferred to the end of a write operation (``ChangeApplier.finish``),
so a kill after a commit may leave the joined fragments as descriptions
for the next write operation to summarise. Running the operation again
(``kgrag retry`` when nothing is left to delete) must then end in the
graph of the uninterrupted run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .cli_processes import (
    FAKE_ENV,
    Lines,
    cli_env,
    command,
    docs_json,
    export,
    freeze,
    kgrag,
    lock_holder,
    ok,
    thaw,
    wait_for_lease,
)
from .lifecycle_corpus import document, write

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="uses SIGSTOP/SIGKILL and /proc"
)


def start(*args, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        command(*args),
        cwd=cwd,
        env=env or cli_env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@contextlib.contextmanager
def reaped(*procs: subprocess.Popen):
    """Whatever happens in the block, no process of ours is left stopped or running."""
    try:
        yield
    finally:
        for proc in procs:
            if proc.poll() is None:
                thaw(proc)
                proc.kill()
                proc.wait()


def forty_documents(folder: Path) -> list[Path]:
    """40 documents sharing paragraphs (chunks) and names."""
    return [write(folder, f"d{i:02d}.txt", document([i, i + 1, (i * 5) % 13])) for i in range(40)]


def chat_calls(ledger: dict) -> int:
    return sum(
        row.get("calls", 0) for role, row in ledger.items() if role not in ("embed", "rerank")
    )


def test_two_processes_index_halves_at_once_and_build_the_one_process_graph(tmp_path):
    paths = forty_documents(tmp_path / "docs")
    single, shared = tmp_path / "single", tmp_path / "shared"
    ok("index", "--no-progress", "--workdir", single, *paths, cwd=tmp_path)

    # Both start at once; whichever takes the writer lease first is frozen
    # (SIGSTOP, outside any SQLite transaction) until the other says it is
    # waiting for it: with the fake models a whole half indexes in a few
    # tenths of a second, less than a process needs to start, so without
    # that the second might only arrive after the first had finished.
    a = start("index", "--json", "--no-progress", "--workdir", shared, *paths[0::2], cwd=tmp_path)
    b = start("index", "--json", "--no-progress", "--workdir", shared, *paths[1::2], cwd=tmp_path)
    errors = {a.pid: Lines(a.stderr), b.pid: Lines(b.stderr)}
    with reaped(a, b):
        holder = wait_for_lease(shared, [a, b])
        other = b if holder is a else a
        # Held: frozen while its pid is still in the lock file (it empties the
        # file when it lets go). Missing that (the holder finished between
        # the two looks) only skips the "waiting" assertion below.
        held = holder is not None and freeze(holder, shared) and lock_holder(shared) == holder.pid
        try:
            waited = errors[other.pid].wait_for("waiting", timeout=60) if held else None
        finally:
            if holder is not None:
                thaw(holder)
        outputs = {p.pid: p.communicate(timeout=120)[0] for p in (a, b)}
    for p in (a, b):
        assert p.returncode == 0, errors[p.pid].text()
    if held:
        assert waited is not None, errors[other.pid].text()
        assert f"process {holder.pid}" in waited and str(shared) in waited
        assert "waiting" not in errors[holder.pid].text()

    assert export(shared, tmp_path) == export(single, tmp_path)
    assert kgrag("check", "--workdir", shared, cwd=tmp_path).returncode == 0
    # The stored cost ledger holds both processes' calls (none lost to the other's save).
    summaries = [json.loads(out.strip().splitlines()[-1]) for out in outputs.values()]
    status = json.loads(ok("status", "--json", "--workdir", shared, cwd=tmp_path))
    assert chat_calls(status["llm_all_time"]) == sum(s["llm_calls"] for s in summaries)
    assert status["documents"]["processed"]["count"] == 40


def test_no_wait_fails_at_once_naming_the_writer(tmp_path):
    paths = forty_documents(tmp_path / "docs")
    more = [write(tmp_path / "more", f"m{i}.txt", document([30 + i, 31 + i])) for i in range(3)]
    for attempt in range(3):  # the holder may finish before it is frozen: try again
        work = tmp_path / f"idx{attempt}"
        holder = start("index", "--no-progress", "--workdir", work, *paths, cwd=tmp_path)
        with reaped(holder):
            assert wait_for_lease(work, [holder]) is holder, holder.communicate()[1]
            held = freeze(holder, work) and lock_holder(work) == holder.pid
            try:
                if held:
                    started = time.monotonic()
                    busy = kgrag(
                        "index",
                        "--no-wait",
                        "--no-progress",
                        "--workdir",
                        work,
                        *more,
                        cwd=tmp_path,
                        timeout=60,
                    )
                    elapsed = time.monotonic() - started
            finally:
                thaw(holder)
            _, err = holder.communicate(timeout=120)
        assert holder.returncode == 0, err
        if held:
            break
    else:
        pytest.fail("the indexing process finished three times before it could be frozen")
    # While the holder was frozen a waiting process would never have ended.
    assert busy.returncode == 1, busy.stderr  # a handled failure, not a usage error
    assert f"process {holder.pid}" in busy.stderr and "--no-wait" in busy.stderr
    assert elapsed < 30
    assert len(docs_json(work, tmp_path)) == 40  # the refused run added nothing
    assert kgrag("check", "--workdir", work, cwd=tmp_path).returncode == 0


# -- kill -9 during delete and supersede ------------------------------------------------

DOCS = 30
KILLS = 20  # half during a delete, half during a supersede


def paragraphs(i: int) -> list[int]:
    return [i, i + 1, i + 2, (i * 5) % 13, (i * 7) % 17]


def edited(i: int) -> str:
    return document(paragraphs(i), version=1 + i % 7, edited=set(paragraphs(i)[:3]))


@pytest.fixture
def here(tmp_path, monkeypatch):
    """``kgrag`` in this process (same settings as the subprocesses): (exit code, stdout).

    The checks between kills run here: a process start costs more than the check.
    """
    for key in list(os.environ):
        if key.startswith(("KGRAG_", "OPENAI_")):
            monkeypatch.delenv(key)
    for key, value in {**FAKE_ENV, "KGRAG_ENABLE_LLM_CACHE": "false"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    from kgrag.cli.main import main

    def run(*args) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main([str(a) for a in args])
        return code, out.getvalue()

    return run


def in_process_export(here, workdir: Path) -> bytes:
    target = workdir.parent / f"{workdir.name}.export.json"
    code, _ = here("export", "--workdir", workdir, "--no-timestamps", "--output", target)
    assert code == 0
    return target.read_bytes()


def docs_here(here, workdir: Path) -> list[dict]:
    code, out = here("docs", "--json", "--limit", "1000", "--workdir", workdir)
    assert code == 0
    return json.loads(out)["documents"]


def hold_time(args, workdir: Path, env, cwd: Path) -> float:
    """Run ``args`` to its end; seconds it held the writer lease."""
    proc = start(*args, "--workdir", workdir, cwd=cwd, env=env)
    with reaped(proc):
        assert wait_for_lease(workdir, [proc], poll=0.001) is proc
        taken = time.perf_counter()
        while lock_holder(workdir) == proc.pid:
            time.sleep(0.001)
        held = time.perf_counter() - taken
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return held


def same_graph_but_descriptions(state: bytes, expected: bytes) -> bool:
    """Equal documents, chunks, entity names and relation pairs (summaries may still wait)."""
    a, b = json.loads(state), json.loads(expected)
    return (
        (a["documents"], a["chunks"]) == (b["documents"], b["chunks"])
        and ([e["name"] for e in a["entities"]] == [e["name"] for e in b["entities"]])
        and (
            [(r["src"], r["tgt"]) for r in a["relations"]]
            == [(r["src"], r["tgt"]) for r in b["relations"]]
        )
    )


@pytest.mark.slow
def test_kill_9_during_delete_and_supersede_leaves_old_or_new_and_resumes(tmp_path, here):
    docs = tmp_path / "docs"
    names = [f"d{i:02d}.txt" for i in range(DOCS)]
    for i, name in enumerate(names):
        write(docs, name, document(paragraphs(i)))
    base = tmp_path / "base"
    assert here("index", "--no-progress", "--workdir", base, docs)[0] == 0
    before = in_process_export(here, base)
    by_path = {Path(d["path"]).name: d["id"] for d in docs_here(here, base)}
    victims = [by_path[n] for n in names[0::2]]  # deleted in one call
    for i in range(1, DOCS, 2):  # edited, then re-indexed in one call
        write(docs, names[i], edited(i))
    changed: dict[str, str] = {}  # edited document -> its new content hash

    # Re-done work costs its time again; documents prepared one at a time so
    # their commits spread over the run (kills then land between two commits).
    env = cli_env(KGRAG_ENABLE_LLM_CACHE="false", KGRAG_MAX_PARALLEL_INSERT="1")
    operations = {"delete": ("delete", *victims), "supersede": ("index", "--no-progress", docs)}
    rng = random.Random(20240611)
    seen: dict[str, list] = {"delete": [], "supersede": []}  # state found after each kill
    rounds = 0
    for op, args in operations.items():
        reference = tmp_path / f"{op}-reference"
        shutil.copytree(base, reference)
        # Kill points spread over the operation's own time: while it holds the lease.
        hold = hold_time(args, reference, env, tmp_path)
        expected = in_process_export(here, reference)
        if op == "supersede":
            old = {d["id"]: d["content_hash"] for d in json.loads(before)["documents"]}
            changed = {
                d["id"]: d["content_hash"]
                for d in json.loads(expected)["documents"]
                if old[d["id"]] != d["content_hash"]
            }
            assert len(changed) == DOCS // 2
        kills = 0
        while kills < KILLS // 2:
            # Stratified: the k-th kill falls in the k-th tenth of the lease time (plus 10 %).
            delay = 1.1 * hold * (kills + rng.random()) / (KILLS // 2)
            rounds += 1
            assert rounds < 4 * KILLS, "too many runs finished before their kill"
            workdir = tmp_path / f"{op}-{rounds}"
            shutil.copytree(base, workdir)
            proc = start(*args, "--workdir", workdir, cwd=tmp_path, env=env)
            with reaped(proc):
                if wait_for_lease(workdir, [proc], poll=0.001) is proc:
                    time.sleep(delay)
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    kills += 1
                proc.communicate(timeout=120)
            if proc.returncode != -signal.SIGKILL:  # it finished first
                assert proc.returncode == 0, f"{op} round {rounds}"
                assert in_process_export(here, workdir) == expected
                continue

            code, out = here("check", "--workdir", workdir)
            assert code == 0, f"{op} round {rounds}: {out}"
            state = in_process_export(here, workdir)
            if op == "delete":
                present = {d["id"] for d in docs_here(here, workdir)} & set(victims)
                # One transaction: all of them or none.
                assert present in (set(), set(victims)), f"round {rounds}: {len(present)} left"
                if present:
                    assert state == before, f"round {rounds}"
                    seen[op].append("old")
                    assert here("delete", "--workdir", workdir, *sorted(present))[0] == 0
                else:
                    # Committed. Summaries are deferred to the end of the operation
                    # (changes.py): killed before them, descriptions are the joined
                    # fragments until the next write operation finishes them.
                    assert same_graph_but_descriptions(state, expected), f"round {rounds}"
                    seen[op].append("new" if state == expected else "new, summaries pending")
                    assert here("retry", "--no-progress", "--workdir", workdir)[0] == 0
            else:
                current = {
                    d["id"]: (d["content_hash"], d["status"])
                    for d in json.loads(state)["documents"]
                }
                seen[op].append(sum(current[i] == (h, "processed") for i, h in changed.items()))
                code, out = here("index", "--no-progress", "--workdir", workdir, docs)
                assert code == 0, out
            assert in_process_export(here, workdir) == expected, f"{op} round {rounds} differs"
            assert here("check", "--workdir", workdir)[0] == 0
    assert "old" in seen["delete"] and len(set(seen["delete"])) > 1, seen
    # Superseded documents commit one by one: some kills must land between two commits.
    assert any(0 < n < DOCS // 2 for n in seen["supersede"]), seen
