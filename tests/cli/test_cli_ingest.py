"""``kgrag index`` exit codes and loader flags, run as a real process with fake models."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PARAGRAPH = (
    "Ebenezer Scrooge kept a counting-house in London with his clerk Bob Cratchit. "
    "On Christmas Eve the ghost of Jacob Marley visited him and warned him to change."
)
PT = (
    "A população da região aumentou nos últimos anos, e as autoridades locais começaram a "
    "construir novas escolas e hospitais. O governador afirmou que a educação é a prioridade, mas "
    "muitos cidadãos estão preocupados com a falta de água durante o verão e com a poluição dos rios."
)


def kgrag(*args, cwd=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_", "OPENAI_"))}
    env.update(KGRAG_LLM_PROVIDER="fake", KGRAG_EMBEDDING_PROVIDER="fake", KGRAG_EXTRACTOR="llm")
    return subprocess.run(
        [sys.executable, "-m", "kgrag.cli.main", "index", "--no-progress", *map(str, args)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def summary(out: subprocess.CompletedProcess) -> dict:
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_missing_path_exits_1_with_a_clear_message_and_touches_nothing(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text(PARAGRAPH)
    work = tmp_path / "idx"
    out = kgrag("--workdir", work, good, tmp_path / "typo.txt")
    assert out.returncode == 1
    assert f"no such file or folder: {tmp_path / 'typo.txt'}" in out.stderr
    assert "nothing was indexed" in out.stderr
    assert not work.exists()


def test_some_files_skipped_exits_0_and_names_them(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text(PARAGRAPH)
    (docs / "empty.txt").write_text("")
    (docs / "notes.xyz").write_text("unsupported")
    out = kgrag("--json", "--workdir", tmp_path / "idx", docs)
    assert out.returncode == 0, out.stderr
    assert summary(out)["skipped"] == 2 and summary(out)["documents"] == 1
    assert "empty.txt: the file contains no text" in out.stderr
    assert "notes.xyz: unsupported file type" in out.stderr

    text = kgrag("--workdir", tmp_path / "idx", docs)
    assert text.returncode == 0 and "2 file(s) skipped" in text.stdout


def test_nothing_readable_exits_1(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "blob.txt").write_bytes(b"\x00\x01\x02" * 100)
    (docs / "empty.md").write_text("  ")
    out = kgrag("--workdir", tmp_path / "idx", docs)
    assert out.returncode == 1
    assert "nothing could be read: all 2 file(s) were skipped" in out.stderr
    assert "blob.txt: looks like a binary file" in out.stderr

    (tmp_path / "void").mkdir()
    out = kgrag("--workdir", tmp_path / "idx", tmp_path / "void")
    assert out.returncode == 1 and "no files were found" in out.stderr


def test_strict_refuses_the_whole_run_before_indexing(tmp_path):
    docs, work = tmp_path / "docs", tmp_path / "idx"
    docs.mkdir()
    (docs / "good.txt").write_text(PARAGRAPH)
    (docs / "bad.docx").write_bytes(b"PK\x03\x04 not a zip")
    out = kgrag("--strict", "--json", "--workdir", work, docs)
    assert out.returncode == 1
    assert "bad.docx: unreadable or corrupt .docx" in out.stderr
    assert "--strict: 1 file(s) could not be used; nothing was indexed" in out.stderr
    assert summary(out)["refused"] is True and summary(out)["chunks"] == 0

    (docs / "bad.docx").unlink()
    out = kgrag("--strict", "--json", "--workdir", work, docs)
    assert out.returncode == 0, out.stderr
    assert summary(out)["documents"] == 1 and summary(out)["refused"] is False


def test_unknown_encoding_is_a_usage_error(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text(PARAGRAPH)
    out = kgrag("--encoding", "klingon-8", "--workdir", tmp_path / "idx", good)
    assert out.returncode == 2
    assert "unknown encoding 'klingon-8'" in out.stderr


def test_encoding_override_and_guess_warning_reach_the_run(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pt.txt").write_bytes(PT.encode("cp1252"))
    out = kgrag("--workdir", tmp_path / "idx", docs)
    assert out.returncode == 0, out.stderr
    assert "warning(s); first: encoding not certain; read as cp1252" in out.stderr

    out = kgrag("--encoding", "cp1252", "--workdir", tmp_path / "idx2", docs)
    assert out.returncode == 0, out.stderr
    assert "encoding not certain" not in out.stderr


def test_symlink_leaving_the_folder_is_skipped_unless_followed(tmp_path):
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    docs.mkdir()
    outside.mkdir()
    (docs / "good.txt").write_text(PARAGRAPH)
    (outside / "other.txt").write_text(PARAGRAPH.replace("London", "Paris"))
    (docs / "link.txt").symlink_to(outside / "other.txt")
    out = kgrag("--json", "--workdir", tmp_path / "idx", docs)
    assert out.returncode == 0 and summary(out)["skipped"] == 1
    assert "outside the folder being indexed" in out.stderr

    out = kgrag("--json", "--follow-symlinks", "--workdir", tmp_path / "idx2", docs)
    assert out.returncode == 0 and summary(out)["skipped"] == 0
    assert summary(out)["documents"] == 2
