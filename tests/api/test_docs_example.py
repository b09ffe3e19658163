"""docs/examples/byo_models.py runs: LightRAG-style functions against an OpenAI-compatible server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.fake_openai import fake_openai

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "byo_models.py"


def test_the_bring_your_own_example_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    with fake_openai() as server:
        out = subprocess.run(
            [
                sys.executable,
                str(EXAMPLE),
                "--base-url",
                server.base_url,
                "--workdir",
                str(tmp_path / "idx"),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,  # no .env of the repository
        )
        stats = server.stats()
    assert out.returncode == 0, out.stderr
    assert "indexed 2 document(s)" in out.stdout
    assert "'extract'" in out.stdout and "'answer': 1" in out.stdout and "'rerank': 1" in out.stdout
    assert "extractive" not in out.stdout.lower()
    assert stats["calls"].get("answer", 0) == 1 and stats["embedding_requests"] >= 1
