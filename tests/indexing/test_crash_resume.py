"""Crash safety: SIGKILL the indexer at random points, resume, compare.

The indexer commits each document's whole effect in one transaction and
merges documents in enqueue order, so whatever the kill points, resuming
must end in exactly the graph an uninterrupted run builds, with every
document processed once (a document merged twice would double its
relation weights and source lists, and the comparison would catch it).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from tests.synth import run_synth

from .corpus import write_book_parts
from .graph_dump import dump_index

KILLS = 20
DOCS = 6


def _env(base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(
        KGRAG_LLM_PROVIDER="openai",
        KGRAG_LLM_BASE_URL=base_url,
        KGRAG_LLM_API_KEY="t",
        KGRAG_EMBEDDING_PROVIDER="openai",
        KGRAG_EMBEDDING_BASE_URL=base_url,
        KGRAG_EMBEDDING_API_KEY="t",
        KGRAG_EXTRACTOR="llm",
        KGRAG_CHUNK_SIZE="300",
        KGRAG_CHUNK_OVERLAP="30",
        # Without the cache a killed run loses its unfinished work, so
        # kills land all over the run instead of only near its start.
        KGRAG_ENABLE_LLM_CACHE="false",
        KGRAG_FORCE_LLM_SUMMARY_ON_MERGE="3",
    )
    return env


def _start(workdir, docs, env) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "kgrag.cli.main",
        "index",
        "--no-progress",
        "--workdir",
        str(workdir),
        str(docs),
    ]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _run_to_end(workdir, docs, env) -> float:
    """Run an index to completion; return its wall time."""
    started = time.perf_counter()
    proc = _start(workdir, docs, env)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    return time.perf_counter() - started


def test_killed_and_resumed_runs_build_the_uninterrupted_graph(tmp_path):
    docs = tmp_path / "docs"
    write_book_parts(docs, DOCS, chars=2500)
    rng = random.Random(1234)
    with run_synth("--latency", "0.08") as base_url:
        env = _env(base_url)
        # Kill points are drawn over the reference run's own duration, so
        # they spread over the run however fast or loaded the machine is.
        full = _run_to_end(tmp_path / "reference", docs, env)
        reference = dump_index(tmp_path / "reference")
        assert reference["statuses"] == {"processed": DOCS}
        kills, rounds, partial = 0, 0, 0
        while kills < KILLS:
            rounds += 1
            workdir = tmp_path / f"crashed{rounds}"
            while kills < KILLS:
                proc = _start(workdir, docs, env)
                time.sleep(rng.uniform(0.2 * full, 1.1 * full))
                if proc.poll() is not None:
                    break  # finished before the kill: compare this round
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
                done = (
                    dump_index(workdir)["statuses"].get("processed", 0)
                    if (workdir / "kgrag.db").exists()
                    else 0
                )
                partial += 0 < done < DOCS
            _run_to_end(workdir, docs, env)  # resume whatever is left
            assert dump_index(workdir) == reference, f"round {rounds} differs"
    assert kills >= KILLS
    assert partial >= 2, "too few kills landed between the first and the last commit"
