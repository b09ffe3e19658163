#!/usr/bin/env python3
"""Regenerate tests/importing/data/lightrag_wd: a real LightRAG 1.5.x working directory.

The import tests read a working directory that LightRAG itself wrote, so
they check kgrag against LightRAG's real file shapes, not a guess at them.
This script builds it: it starts the in-repo fake OpenAI-compatible server
(tests/support/fake_openai.py), points LightRAG's stock OpenAI binding at
it for chat and embeddings, and inserts the documents of
tests/importing/data/lightrag_docs (one document per file, default
chunking, default storages: JSON KV, NanoVectorDB, NetworkX GraphML).

LightRAG is not a kgrag dependency; run this with a Python that has it:

    python3 -m venv /tmp/peer
    /tmp/peer/bin/pip install lightrag-hku==1.5.7 openai==3.57.0 bpe-openai==0.1.4
    /tmp/peer/bin/python scripts/make_lightrag_fixture.py [--out DIR]

Offline: tiktoken's BPE files are copied into its cache from the
``bpe-openai`` wheel (byte-identical files), as ../shared/bench/peer_lightrag.py
does, so nothing is downloaded.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "tests" / "importing" / "data" / "lightrag_docs"
OUT = ROOT / "tests" / "importing" / "data" / "lightrag_wd"
CHAT_MODEL = "gpt-4o-mini"
EMBED_MODEL = "text-embedding-3-small"
DIM = 384  # the fake server's default embedding size
TIKTOKEN = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}


def seed_tiktoken_cache() -> None:
    """Put tiktoken's BPE files into its cache from the bpe-openai wheel (no download)."""
    cache = os.environ.setdefault(
        "TIKTOKEN_CACHE_DIR", os.path.join(tempfile.gettempdir(), "tiktoken-cache-from-bpe-openai")
    )
    os.makedirs(cache, exist_ok=True)
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        return
    data_dir = Path(next(iter(spec.submodule_search_locations))) / "data"
    for name, (url, sha256) in TIKTOKEN.items():
        target = Path(cache) / hashlib.sha1(url.encode()).hexdigest()
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256:
            continue
        data = gzip.decompress((data_dir / f"{name}.tiktoken.gz").read_bytes())
        if hashlib.sha256(data).hexdigest() == sha256:
            target.write_bytes(data)


def start_fake_server() -> tuple[subprocess.Popen[str], str]:
    """The in-repo fake server on a free port; returns the process and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "support" / "fake_openai.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, json.loads(line)["base_url"]


async def build(out: Path, base_url: str) -> None:
    """Insert every document of DOCS into a LightRAG working directory at ``out``."""
    from lightrag import LightRAG
    from lightrag.llm.openai import openai_complete, openai_embed
    from lightrag.utils import EmbeddingFunc

    key = "fixture-key"
    rag = LightRAG(
        working_dir=str(out),
        llm_model_func=openai_complete,
        llm_model_name=CHAT_MODEL,
        llm_model_kwargs={"base_url": base_url, "api_key": key},
        embedding_func=EmbeddingFunc(
            embedding_dim=DIM,
            max_token_size=8192,
            model_name=EMBED_MODEL,
            func=partial(openai_embed.func, model=EMBED_MODEL, base_url=base_url, api_key=key),
        ),
    )
    await rag.initialize_storages()
    paths = sorted(DOCS.glob("*.txt"))
    texts = [p.read_text(encoding="utf-8") for p in paths]
    await rag.ainsert(texts, file_paths=[p.name for p in paths])
    await rag.finalize_storages()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=OUT, help="working directory to (re)create")
    args = parser.parse_args(argv)
    seed_tiktoken_cache()
    os.environ.setdefault("OPENAI_API_KEY", "fixture-key")
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    proc, base_url = start_fake_server()
    try:
        asyncio.run(build(args.out, base_url))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    for stray in args.out.glob("*.tmp*"):
        stray.unlink()
    print("wrote", *sorted(p.name for p in args.out.iterdir()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
