"""A PostgreSQL workspace whose first run committed nothing takes the next run's settings."""

from __future__ import annotations

import json

from tests.indexing.cli_processes import cli_env, kgrag
from tests.support.postgres import fresh_workspace

from .twins import drop_workspace, run, write_corpus

DEAD_LLM = {
    "KGRAG_LLM_PROVIDER": "openai",
    "KGRAG_LLM_BASE_URL": "http://127.0.0.1:9/v1",  # nothing listens on the discard port
    "KGRAG_LLM_API_KEY": "test",
    "KGRAG_LLM_MAX_RETRIES": "0",
}


def test_a_first_run_whose_documents_all_failed_blocks_no_later_run(pg_dsn, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    workspace = fresh_workspace("first")
    base = {"KGRAG_STORAGE": "postgres", "KGRAG_POSTGRES_DSN": pg_dsn,
            "KGRAG_POSTGRES_WORKSPACE": workspace}  # fmt: skip
    index = ("index", "--json", "--no-progress", "--workdir", tmp_path / "pg", *docs.red)
    try:
        failed = kgrag(*index, cwd=tmp_path, env=cli_env(**base, **DEAD_LLM))
        assert failed.returncode == 1 and json.loads(failed.stdout.splitlines()[-1])["failed"] == 3
        good = kgrag(*index, cwd=tmp_path, env=cli_env(**base, KGRAG_EMBEDDING_DIM="32"))
        assert good.returncode == 0, good.stderr
        assert json.loads(good.stdout.splitlines()[-1])["processed"] == 3
        refused = kgrag(*index, cwd=tmp_path, env=cli_env(**base, KGRAG_EMBEDDING_DIM="48"))
        assert refused.returncode == 2 and "embedding_dim=32 in the index but 48" in refused.stderr
    finally:
        run(drop_workspace(pg_dsn, workspace))
