"""The progress bar's last counts and the summary after it agree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from kgrag import KGRag
from kgrag.errors import ModelRequestError
from kgrag.indexing.progress import RichProgress
from kgrag.llm.fake import FakeChatProvider

from .helpers import settings

STORY = "Scrooge met Marley in London on Christmas Eve. Marley warned Scrooge of three spirits. "
OTHER = "Ada Lovelace wrote notes on the Analytical Engine of Charles Babbage in London. "


class RefusesSome(FakeChatProvider):
    """The fake model, except that it refuses any text containing FAILME."""

    async def chat(self, request):
        if any("FAILME" in str(m.get("content")) for m in request.messages):
            raise ModelRequestError("refused")
        return await super().chat(request)


def _folder(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / "story.txt").write_text(STORY * 30)
    return docs


async def test_bar_counts_are_the_reports_and_the_ledgers(tmp_path):
    docs = _folder(tmp_path)
    async with KGRag(settings(tmp_path / "idx", chunk_size=200), chat=RefusesSome()) as rag:
        await rag.index_paths([docs])  # story.txt: unchanged in the next run
        (docs / "other.txt").write_text(OTHER * 20)
        (docs / "bad.txt").write_text("FAILME " + OTHER * 3)
        calls_seen: list[int] = []

        def llm_calls() -> int:
            calls_seen.append(sum(r["calls"] for r in rag.models.ledger.snapshot().values()))
            return calls_seen[-1]

        bar = RichProgress(llm_calls)
        before = sum(r["calls"] for r in rag.models.ledger.snapshot().values())
        report = await rag.index_paths([docs], progress=bar)
        after = sum(r["calls"] for r in rag.models.ledger.snapshot().values())
    assert report.unchanged and len(report.processed) == 1 and len(report.failed) == 1
    counts = bar.counts
    assert counts == report.progress
    assert (counts.documents, counts.documents_done, counts.documents_failed) == (2, 2, 1)
    # Only the new documents' chunks needed work; the failed one's chunk never got extracted.
    assert counts.chunks_extracted == counts.chunks - 1 and counts.chunks_extracted >= 2
    assert counts.entities > 0 and counts.relations > 0
    assert calls_seen[-1] == after  # the bar's last count includes the summaries' calls
    assert after > before


def _kgrag(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(
        KGRAG_LLM_PROVIDER="fake",
        KGRAG_EMBEDDING_PROVIDER="fake",
        KGRAG_CHUNK_SIZE="200",
        COLUMNS="400",  # the bar's whole detail on one line
    )
    return subprocess.run(
        [sys.executable, "-m", "kgrag.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_bar_and_summary_print_the_same_numbers(tmp_path):
    docs = _folder(tmp_path)
    work = str(tmp_path / "idx")
    assert _kgrag("index", "--workdir", work, str(docs)).returncode == 0
    (docs / "other.txt").write_text(OTHER * 20)
    out = _kgrag("index", "--workdir", work, str(docs))
    assert out.returncode == 0, out.stderr
    bar = re.findall(
        r"chunks extracted (\d+)/(\d+)\s+records: (\d+) entities, (\d+) relations\s+"
        r"llm calls (\d+)",
        out.stderr,
    )
    summary = re.search(
        r"chunks extracted (\d+)/(\d+) \(records: (\d+) entities, (\d+) relations\).*?"
        r"; (\d+) LLM calls",
        out.stdout,
    )
    assert bar and summary, (out.stderr, out.stdout)
    assert bar[-1] == summary.groups()
    assert int(summary.group(1)) > 0 and "1 unchanged" in out.stdout
