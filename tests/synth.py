"""Run the project's fake OpenAI-compatible server in a child process for a test.

Usage (from a test package whose folder has an ``__init__.py``, so that
``tests/`` is importable)::

    from tests.synth import run_synth, synth_stats

    with run_synth("--latency", "0.01") as base_url:   # ".../v1"
        ...

The server is ``tests/support/fake_openai.py`` (its flags: ``--help``), so
the tests that use it run in any clone of the repository. A child process
keeps the server's threads off the test's interpreter, which matters for
the timing-sensitive crash and rate-limit tests; in-process use is
:func:`support.fake_openai.fake_openai`.
"""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
SERVER = REPO / "tests" / "support" / "fake_openai.py"


def synth_script() -> Path:
    """Path of the fake server script (always present in the repository)."""
    return SERVER


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            raise RuntimeError(f"the fake server printed nothing within {timeout} s")
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"the fake server exited early with code {proc.wait()}")
    return line


@contextmanager
def run_synth(*args: str, timeout: float = 20.0) -> Iterator[str]:
    """Start the fake server on a free port with ``args``; yield its base URL (ending in /v1)."""
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield json.loads(_first_line(proc, timeout))["base_url"]
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
