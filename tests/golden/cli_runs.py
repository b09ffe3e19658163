"""Goldens of a short command-line session: config, index, docs, query, export.

``kgrag.cli.main.main`` is called in process with ``KGRAG_*`` variables
selecting the fake models, from a temporary working folder (no ``.env``).
Each command's exit status and standard output are recorded; progress and
messages on standard error are not. Besides :mod:`normalise`'s rules, a
number under a time key in JSON text is replaced. The session runs in the
fixed folder :data:`FOLDER` (document ids and token counts follow from the
files' absolute paths), under a lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from kgrag.cli.main import main

from .normalise import TIME, compact, is_time_key, normalise_text

ENV = {
    "KGRAG_LLM_PROVIDER": "fake",
    "KGRAG_EMBEDDING_PROVIDER": "fake",
    "KGRAG_EXTRACTOR": "llm",
    "COLUMNS": "100",
}
FILES = {
    "scrooge.txt": "Ebenezer Scrooge is a miser in London. Bob Cratchit works for Scrooge.",
    "marley.md": "# Marley\n\nJacob Marley was the partner of Scrooge. Marley died in London.",
}
QUESTION = "Who was the partner of Scrooge?"
# Document ids and token counts follow from the files' absolute paths, so the
# session runs in one fixed folder (not a random temporary one).
FOLDER = Path("/tmp/kgrag-golden-cli")
_NUMBER_VALUE = re.compile(r'"([A-Za-z_]+)": (-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)')
# (file name, the command; ``--workdir W`` goes after its first word)
COMMANDS: list[tuple[str, list[str]]] = [
    ("config", ["config"]),
    ("config-json", ["config", "--json"]),
    ("index", ["index", "--no-progress", "--json", "docs"]),
    ("docs", ["docs", "--json"]),
    ("query-mix", ["query", "--mode", "mix", "--references", QUESTION]),
    ("query-naive-context", ["query", "--mode", "naive", "--context-only", QUESTION]),
    ("query-local-data", ["query", "--mode", "local", "--data-only", QUESTION]),
    ("export-json", ["export", "--output", "-", "--no-timestamps"]),
    ("export-md", ["export", "--format", "md", "--output", "-", "--no-timestamps"]),
    ("check", ["check"]),
]


@contextlib.contextmanager
def _environment(folder: Path) -> Iterator[None]:
    saved = {k: v for k, v in os.environ.items() if k.startswith("KGRAG_") or k == "COLUMNS"}
    cwd = Path.cwd()
    for key in saved:
        del os.environ[key]
    os.environ.update(ENV)
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(cwd)
        for key in ENV:
            os.environ.pop(key, None)
        os.environ.update(saved)


@contextlib.contextmanager
def _fixed_folder() -> Iterator[Path]:
    """:data:`FOLDER`, emptied, held under a lock (other checkouts may run the goldens too)."""
    FOLDER.parent.mkdir(parents=True, exist_ok=True)
    with open(FOLDER.parent / f"{FOLDER.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(FOLDER, ignore_errors=True)
        FOLDER.mkdir()
        try:
            yield FOLDER
        finally:
            shutil.rmtree(FOLDER, ignore_errors=True)


def _run(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
    return code, out.getvalue()


def write_cli_runs(out: Path) -> None:
    """One file per command, ``NN-name.txt``: the command, its exit status, then its output."""
    out.mkdir(parents=True, exist_ok=True)
    with _fixed_folder() as folder:
        roots = [str(folder), str(folder.resolve())]
        (folder / "docs").mkdir()
        for name, text in FILES.items():
            (folder / "docs" / name).write_text(text, encoding="utf-8")
        with _environment(folder):
            for n, (name, args) in enumerate(COMMANDS):
                full = [args[0], "--workdir", str(folder / "workdir"), *args[1:]]
                code, text = _run(full)
                head = f"$ kgrag {' '.join(args)}\nexit {code}\n"
                body = _scrub_text(normalise_text(head + text, roots))
                (out / f"{n:02d}-{name}.txt").write_text(_shorten(body), encoding="utf-8")


def _scrub_text(text: str) -> str:
    def number(match: re.Match[str]) -> str:
        return f'"{match.group(1)}": "{TIME}"' if is_time_key(match.group(1)) else match.group(0)

    return _NUMBER_VALUE.sub(number, text)


def _shorten(text: str) -> str:
    """Long lines digested as :func:`compact` does (the data and export hold chunk texts)."""
    return "\n".join(str(compact(line)) if len(line) > 2000 else line for line in text.split("\n"))
