"""``kgrag export --format F`` as a real process: files, stdout, usage errors, the extra."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgrag.maintenance.exports import FORMATS
from tests.indexing.cli_processes import cli_env, kgrag, ok

from .conftest import export_files

# the CLI with pyarrow made unimportable, as in an install without kgrag[parquet]
WITHOUT_PYARROW = (
    "import sys; sys.modules['pyarrow'] = None; "
    "from kgrag.cli.main import main; raise SystemExit(main())"
)


def tree(path: Path) -> bytes | dict[str, bytes]:
    """A file's bytes, or a folder's files' bytes by name."""
    if path.is_file():
        return path.read_bytes()
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_cli_writes_what_the_api_writes_and_the_same_bytes_twice(fmt, index, tmp_path):
    first, second = tmp_path / f"one.{fmt}", tmp_path / f"two.{fmt}"
    for target in (first, second):
        out = ok(
            "export",
            "--workdir",
            index,
            "--format",
            fmt,
            "--no-timestamps",
            "--output",
            target,
            cwd=tmp_path,
        )
        assert out.startswith(f"wrote {target}")
    assert tree(first) == tree(second)
    api = tmp_path / f"api.{fmt}"
    export_files(index, api, fmt)
    assert tree(api) == tree(first)
    assert not [p for p in tmp_path.rglob(".*.tmp")]  # no half-written file left


@pytest.mark.parametrize("fmt", ["json", "graphml", "md"])
def test_one_file_formats_go_to_stdout(fmt, index, tmp_path):
    target = tmp_path / f"graph.{fmt}"
    ok(
        "export",
        "--workdir",
        index,
        "--format",
        fmt,
        "--output",
        target,
        "--no-timestamps",
        cwd=tmp_path,
    )
    out = ok(
        "export",
        "--workdir",
        index,
        "--format",
        fmt,
        "--output",
        "-",
        "--no-timestamps",
        cwd=tmp_path,
    )
    assert out == target.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_folder_format_refuses_stdout(fmt, index, tmp_path):
    done = kgrag("export", "--workdir", index, "--format", fmt, "--output", "-", cwd=tmp_path)
    assert done.returncode == 2 and "writes a folder" in done.stderr and not done.stdout


def test_json_output_names_the_files(index, tmp_path):
    out = ok(
        "export",
        "--json",
        "--workdir",
        index,
        "--format",
        "csv",
        "--output",
        tmp_path / "csv",
        cwd=tmp_path,
    )
    report = json.loads(out)
    assert [Path(p).name for p in report["written"]] == [
        "entities.csv",
        "relations.csv",
        "chunks.csv",
        "documents.csv",
    ]
    assert report["bytes"] == sum(Path(p).stat().st_size for p in report["written"])


def test_parquet_without_pyarrow_names_the_extra(index, tmp_path):
    target = tmp_path / "pq"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_PYARROW,
            "export",
            "--workdir",
            str(index),
            "--format",
            "parquet",
            "--output",
            str(target),
        ],
        cwd=tmp_path,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'kgrag[parquet]'" in done.stderr and "Traceback" not in done.stderr
    assert not target.exists()
    # the other formats still work there
    again = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_PYARROW,
            "export",
            "--workdir",
            str(index),
            "--format",
            "csv",
            "--output",
            str(tmp_path / "csv"),
        ],
        cwd=tmp_path,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0, again.stderr
