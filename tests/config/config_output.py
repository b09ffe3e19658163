"""What ``kgrag config`` prints in a few set-ups, to compare with the committed golden text.

Run as a script (``python tests/config/config_output.py OUT_DIR``) it writes
one file per scenario; the golden files in ``tests/config/golden`` were
written this way by the code before settings had sections, and
``test_config_output.py`` checks today's output against them byte for byte.
It uses only :func:`kgrag.cli.main.main`, so any version of kgrag can run it.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

KEY = "sk-live-0123456789abcdef"
FAKE = {"KGRAG_LLM_PROVIDER": "fake", "KGRAG_EMBEDDING_PROVIDER": "fake"}
SET = {
    "KGRAG_CHUNK_SIZE": "500",
    "OPENAI_API_KEY": KEY,
    "KGRAG_RERANK_API_KEY": "short",
    "KGRAG_PRICES": '{"gpt-4o-mini": [0.15, 0.6]}',
    "KGRAG_API_KEYS": '{"0123456789abcdefghij": ["ws1", "ws2"]}',
    "KGRAG_CORS_ORIGINS": "http://a.example, https://b.example:8443",
    "KGRAG_ENTITY_TYPES": '["Person", "Place"]',
    "KGRAG_LANGUAGE": "de",
    "KGRAG_POSTGRES_SSLMODE": "require",
}
# scenario -> (arguments, environment, .env text)
SCENARIOS: dict[str, tuple[list[str], dict[str, str], str]] = {
    "defaults.txt": (["config"], {}, ""),
    "defaults.json": (["config", "--json"], {}, ""),
    "set.txt": (["config", "--workdir", "elsewhere"], SET, "KGRAG_TOP_K=12\n"),
    "set.json": (["config", "--json", "--workdir", "elsewhere"], SET, "KGRAG_TOP_K=12\n"),
    "index.txt": (["config", "--workdir", "idx"], {}, ""),
    "help.txt": (["config", "--help"], {}, ""),
}


def run(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """``kgrag ARGS`` in ``cwd`` with only ``env`` set: exit status, stdout and stderr."""
    from kgrag.cli.main import main

    saved = dict(os.environ)
    here = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        for name in list(os.environ):
            if name.startswith(("KGRAG_", "OPENAI_")):
                del os.environ[name]
        os.environ.update(env)
        os.environ["COLUMNS"] = "100"
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exc:
                code = int(exc.code or 0)
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved)
    return f"exit {code}\n--- stdout\n{out.getvalue()}--- stderr\n{err.getvalue()}"


def scenario(name: str, folder: Path) -> str:
    """The output of scenario ``name``, run in the empty folder ``folder``."""
    args, env, dotenv = SCENARIOS[name]
    if dotenv:
        (folder / ".env").write_text(dotenv)
    if "idx" in args:
        (folder / "a.txt").write_text("Scrooge met Marley in London.")
        built = FAKE | {"KGRAG_EMBEDDING_DIM": "48", "KGRAG_CHUNK_SIZE": "300"}
        run(["index", "--no-progress", "--workdir", "idx", "a.txt"], built, folder)
    return run(args, env, folder)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in SCENARIOS:
        with tempfile.TemporaryDirectory() as folder:
            (out / name).write_text(scenario(name, Path(folder)))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
