"""Without a terminal, progress is plain lines a log can hold (kgrag.indexing.progress_log)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

from kgrag.indexing.progress_log import LineProgress

STORY = "Scrooge met Marley {i} in London. Bob Cratchit worked for Scrooge in a cold office.\n"
LINE = re.compile(
    r"^indexing: (\d+)/(\d+) documents  chunks extracted (\d+)/(\d+)  "
    r"records: \d+ entities, \d+ relations  llm calls \d+  \d+ s$"
)


def test_index_with_stderr_to_a_pipe_prints_whole_lines(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(12):
        (docs / f"part{i:02}.txt").write_text(STORY.format(i=i) * 3)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(KGRAG_LLM_PROVIDER="fake", KGRAG_EMBEDDING_PROVIDER="fake", COLUMNS="40")
    out = subprocess.run(
        [sys.executable, "-m", "kgrag.cli.main", "index", "--workdir", str(tmp_path / "idx"),
         str(docs)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "\r" not in out.stderr and "\x1b" not in out.stderr and "…" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("indexing:")]
    assert all(LINE.match(line) for line in lines), lines
    done = [int(LINE.match(line).group(1)) for line in lines]
    assert done[0] == 0 and done[-1] == 12 and done == sorted(done)
    assert 3 <= len(lines) <= 12  # a line per tenth of the documents, not one per event
    last = LINE.match(lines[-1])
    assert last.group(3) == last.group(4) != "0"  # every chunk extracted, and said so


def test_a_line_per_interval_while_work_goes_on_and_none_when_nothing_moved():
    now = [0.0]
    out = io.StringIO()
    progress = LineProgress(lambda: 7, interval_s=10, out=out, clock=lambda: now[0])
    progress.start(1000)
    for second in range(1, 36):
        now[0] = float(second)
        progress.chunks_found(1)
        progress.chunk_extracted(2, 1)
    progress.stop()
    progress.stop()  # nothing moved: no second line
    lines = out.getvalue().splitlines()
    assert [line.rsplit("  ", 1)[1] for line in lines] == ["0 s", "10 s", "20 s", "30 s", "35 s"]
    assert "chunks extracted 35/35  records: 70 entities, 35 relations  llm calls 7" in lines[-1]


def test_a_failed_document_gets_its_line_at_once():
    out = io.StringIO()
    progress = LineProgress(lambda: 0, interval_s=3600, out=out)
    progress.start(100)
    progress.document_done(True)
    progress.document_done(False)
    assert out.getvalue().splitlines()[-1].startswith("indexing: 2/100 documents")
    assert "failed 1" in out.getvalue().splitlines()[-1]
