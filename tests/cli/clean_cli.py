"""Running ``kgrag`` in this process with a clean environment: no ``KGRAG_*`` / ``OPENAI_*``.

:class:`CleanCLI` calls :func:`kgrag.cli.main.main` the way the console
script does, with only the variables a test names and the test's own folder
as working directory (so no ``.env`` of the caller's is read), and returns
the exit status with what was printed. ``FAKE`` selects the shipped
deterministic fake chat and embedding models.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from kgrag.cli.main import main
from tests.support.settings import FAKE_ENV

FAKE = FAKE_ENV
# A chat model that cannot be reached (fake embeddings): every extraction fails.
DEAD_LLM = {
    "KGRAG_LLM_PROVIDER": "openai",
    "KGRAG_LLM_BASE_URL": "http://127.0.0.1:9/v1",  # nothing listens on the discard port
    "KGRAG_LLM_API_KEY": "test",
    "KGRAG_LLM_MAX_RETRIES": "0",
    "KGRAG_EMBEDDING_PROVIDER": "fake",
}


@dataclass
class Result:
    code: int
    out: str
    err: str


class CleanCLI:
    def __init__(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, cwd: Path):
        self.monkeypatch, self.capsys, self.cwd = monkeypatch, capsys, cwd

    def __call__(self, *args: object, env: dict[str, str] | None = None) -> Result:
        """Run ``kgrag ARGS...`` with only ``env`` set; the exit status and output."""
        with self.monkeypatch.context() as m:
            for name in list(os.environ):
                if name.startswith(("KGRAG_", "OPENAI_")):
                    m.delenv(name)
            for name, value in (env or {}).items():
                m.setenv(name, value)
            m.chdir(self.cwd)
            self.capsys.readouterr()
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:  # argparse: usage errors and --help
                code = int(exc.code or 0)
            printed = self.capsys.readouterr()
        return Result(code, printed.out, printed.err)


def last_json_line(text: str) -> dict:
    import json

    return json.loads(text.strip().splitlines()[-1])
