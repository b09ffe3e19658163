"""Run the benchmark's fake OpenAI-compatible server for a test.

Usage (from a test package whose folder has an ``__init__.py``, so that
``tests/`` is importable)::

    from synth import run_synth, synth_script

    with run_synth("--latency", "0.01") as base_url:   # ".../v1"
        ...

The server script is ``$KGRAG_SYNTH_LLM`` when set, else
``<repo>/../shared/bench/synth_llm.py``. :func:`synth_script` returns None
when neither exists, so tests can skip.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent


def synth_script() -> Path | None:
    """Path of synth_llm.py, or None when it is not available."""
    env = os.environ.get("KGRAG_SYNTH_LLM")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "bench" / "synth_llm.py")
    return next((p for p in candidates if p.is_file()), None)


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
        if not sel.select(timeout):
            raise RuntimeError(f"synth_llm printed nothing within {timeout} s")
    line = proc.stdout.readline()  # type: ignore[union-attr]
    if not line:
        raise RuntimeError(f"synth_llm exited early with code {proc.wait()}")
    return line


@contextmanager
def run_synth(*args: str, timeout: float = 20.0) -> Iterator[str]:
    """Start synth_llm on a free port with ``args``; yield its base URL (ending in /v1)."""
    script = synth_script()
    if script is None:
        raise RuntimeError("synth_llm.py not found; set KGRAG_SYNTH_LLM")
    proc = subprocess.Popen(
        [sys.executable, str(script), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        info = json.loads(_first_line(proc, timeout))
        yield f"http://{info.get('host', '127.0.0.1')}:{info['port']}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def synth_stats(base_url: str) -> dict[str, Any]:
    """The server's /stats counters."""
    return httpx.get(f"{base_url}/stats", timeout=10).json()


def synth_reset(base_url: str) -> None:
    """Zero the counters and the error-retry memory."""
    httpx.post(f"{base_url}/stats/reset", timeout=10).raise_for_status()
