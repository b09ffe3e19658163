"""Running ``kgrag`` in this process with only the environment a test names."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from kgrag.cli.main import main


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def kgrag(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path):
    """``kgrag(*args, env=...)``: the exit status and what was printed."""

    def run(*args: object, env: dict[str, str] | None = None) -> Result:
        with monkeypatch.context() as m:
            for name in list(os.environ):
                if name.startswith(("KGRAG_", "OPENAI_")):
                    m.delenv(name)
            for name, value in (env or {}).items():
                m.setenv(name, value)
            m.chdir(tmp_path)
            capsys.readouterr()
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:
                code = int(exc.code or 0)
            printed = capsys.readouterr()
        return Result(code, printed.out, printed.err)

    return run
