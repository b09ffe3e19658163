"""``kgrag query --doc / --path / --where``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kgrag.api.facade import KGRag
from kgrag.cli.main import build_parser
from kgrag.cli.query_cmd import _overrides, parse_where
from kgrag.errors import ConfigError
from tests.retrieval.filter_corpus import index_docs, settings


def test_filter_flags_are_repeatable_and_become_query_fields():
    args = build_parser().parse_args(
        [
            "query",
            "--doc",
            "a",
            "--doc",
            "b",
            "--path",
            "notes/*",
            "--where",
            "lang=en",
            "--where",
            "subject = music",
            "Who?",
        ]
    )
    over = _overrides(args)
    assert over["doc_ids"] == ["a", "b"] and over["path_glob"] == ["notes/*"]
    assert over["where"] == {"lang": "en", "subject": "music"}
    plain = _overrides(build_parser().parse_args(["query", "Who?"]))
    assert not {"doc_ids", "path_glob", "where"} & set(plain)


@pytest.mark.parametrize("bad", ["lang", "=en", " =en"])
def test_a_malformed_where_is_a_clear_error(bad):
    with pytest.raises(ConfigError, match="--where expects KEY=VALUE"):
        parse_where([bad])
    assert parse_where(["url=http://x?a=b"]) == {"url": "http://x?a=b"}


def kgrag(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(
        KGRAG_LLM_PROVIDER="fake",
        KGRAG_EMBEDDING_PROVIDER="fake",
        KGRAG_EXTRACTOR="llm",
        KGRAG_CHUNK_SIZE="40",
        KGRAG_CHUNK_OVERLAP="5",
    )
    return subprocess.run(
        [sys.executable, "-m", "kgrag.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_the_command_line_filters_and_names_unknown_documents(tmp_path):
    work = tmp_path / "idx"
    async with KGRag(settings(work)) as rag:
        await index_docs(rag)
    q = "What did Galileo Galilei see in Florence?"
    out = kgrag("query", "--workdir", str(work), "--data-only", "--json", "--doc", "music", q)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["filter"]["active"] and data["filter"]["doc_ids"] == ["music"]
    assert data["chunks"] and {c["file_path"] for c in data["chunks"]} == {"notes/music.md"}
    out = kgrag(
        "query",
        "--workdir",
        str(work),
        "--data-only",
        "--where",
        "subject=food",
        "--path",
        "recipes/*",
        q,
    )
    assert out.returncode == 0, out.stderr
    assert {c["file_path"] for c in json.loads(out.stdout)["chunks"]} == {"recipes/food.md"}
    out = kgrag("query", "--workdir", str(work), "--doc", "nope", q)
    assert out.returncode == 2 and "no indexed document has the id 'nope'" in out.stderr
    out = kgrag("query", "--workdir", str(work), "--where", "subject", q)
    assert out.returncode == 2 and "--where expects KEY=VALUE" in out.stderr
    out = kgrag("query", "--workdir", str(work), "--explain", "--context-only", "--doc", "music", q)
    assert out.returncode == 0 and "[filter] doc_ids=['music']" in out.stderr
