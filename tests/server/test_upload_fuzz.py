"""Hostile uploads: each is refused with a 4xx (or, for content only the loader can judge,
accepted and then failed with the reason on its track), nothing lands outside the input
folder, no temporary file stays behind, and the server keeps answering.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import httpx
import pytest

from .conftest import StartServer
from .doc_calls import CAROL, insert, upload, wait_job

BOUNDARY = b"kgrag-fuzz-boundary"
STORED = re.compile(r"[0-9a-f]{12}-[A-Za-z0-9._-]+\.[a-z]+")
LIMIT = 64 * 1024


def raw_upload(client: httpx.Client, filename: bytes, content: bytes) -> httpx.Response:
    """A multipart body written byte by byte, so names can hold anything."""
    body = (
        b"--" + BOUNDARY + b"\r\n"
        b'Content-Disposition: form-data; name="file"; filename="' + filename + b'"\r\n'
        b"Content-Type: text/plain\r\n\r\n" + content + b"\r\n--" + BOUNDARY + b"--\r\n"
    )
    headers = {"Content-Type": "multipart/form-data; boundary=" + BOUNDARY.decode()}
    return client.post("/documents/upload", content=body, headers=headers)


def zip_bomb() -> bytes:
    """A .docx-named archive whose one entry inflates 8 MiB of zeros from a few KiB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"\0" * (8 * 1024 * 1024))
    return out.getvalue()


def files_outside(root: Path, inputs: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() and inputs not in p.parents}


@pytest.fixture
def setup(start_server: StartServer, tmp_path: Path):
    served = start_server(workdir=tmp_path / "srv" / "w", max_file_bytes=LIMIT)
    with served.client() as client:
        insert(client, CAROL[:1])
        yield served, client


NAMES = [
    b"../../escape.txt",
    b"/etc/passwd.txt",
    b"..\\..\\windows.txt",
    b"a\x00b.txt",
    b"\x1b[31mred\x07.txt",
    b"\xff\xfe\xfdlatin.txt",
    b"%2e%2e%2fencoded.txt",
    b"CON.txt",
    b"x" * 400 + b".txt",
]


@pytest.mark.parametrize("name", NAMES, ids=range(len(NAMES)))
def test_names_never_choose_the_path(setup, name: bytes) -> None:
    served, client = setup
    root = served.workdir.parent
    before = files_outside(root, served.workdir / "inputs")
    reply = raw_upload(client, name, b"Topper flirts with a plump sister at Fred's party.")
    assert reply.status_code == 200 or 400 <= reply.status_code < 500, reply.text
    if reply.status_code == 200:
        assert wait_job(client, reply.json()["job_id"])["status"] == "succeeded"
        track = client.get(f"/documents/track_status/{reply.json()['track_id']}").json()
        original = track["documents"][0]["metadata"]["original_name"]  # kept, cleaned
        assert original and not any(ord(c) < 32 or ord(c) == 127 for c in original)
    stored = list((served.workdir / "inputs").iterdir())
    assert all(STORED.fullmatch(p.name) for p in stored), stored
    new_outside = files_outside(root, served.workdir / "inputs") - before
    assert all(p.parent == served.workdir for p in new_outside), new_outside  # index files only
    assert client.get("/health").status_code == 200


@pytest.mark.parametrize(
    ("name", "content", "status"),
    [
        ("empty.txt", b"", 400),
        ("big.txt", b"a" * (LIMIT + 1), 413),
        ("tool.exe", b"MZ\x90\x00", 415),
        ("no-suffix", b"plain words", 415),
        ("bomb.docx", zip_bomb(), 422),
        ("not-a-zip.docx", b"this is not a zip archive", 422),
    ],
)
def test_refused_before_anything_is_kept(setup, name: str, content: bytes, status: int) -> None:
    served, client = setup
    reply = upload(client, name, content)
    assert reply.status_code == status, reply.text
    assert reply.json()["detail"]
    assert list((served.workdir / "inputs").iterdir()) == []  # no partial file either
    assert client.post("/query/data", json={"query": "Who is Scrooge?"}).status_code == 200


def test_empty_file_name_and_no_file_are_refused(setup) -> None:
    served, client = setup
    assert raw_upload(client, b"", b"words").status_code in (400, 422)
    assert client.post("/documents/upload", files={"other": ("a.txt", b"x")}).status_code == 400
    assert client.post("/documents/upload", data={"file": "not a file"}).status_code in (400, 422)
    assert not (served.workdir / "inputs").exists() or not list(
        (served.workdir / "inputs").iterdir()
    )


def test_one_bad_file_refuses_only_itself(setup) -> None:
    served, client = setup
    files = [
        ("file", ("good.txt", b"Fred laughs.", "text/plain")),
        ("file", ("bad.exe", b"MZ", "x")),
    ]
    reply = client.post("/documents/upload", files=files)
    assert reply.status_code == 200, reply.text
    assert [r["name"] for r in reply.json()["refused"]] == ["bad.exe"]
    (kept,) = (served.workdir / "inputs").iterdir()
    assert kept.name.endswith("-good.txt")


def test_content_only_the_loader_can_judge_is_accepted_then_failed(setup) -> None:
    _, client = setup
    latin = "Caf\xe9 owner Topper meets Fred in London.".encode("latin-1")  # not UTF-8
    reply = upload(client, "corrupt.pdf", b"%PDF-1.4 this is no real pdf")
    assert reply.status_code == 200
    wait_job(client, reply.json()["job_id"])
    (doc,) = client.get(f"/documents/track_status/{reply.json()['track_id']}").json()["documents"]
    assert doc["status"] == "failed" and doc["error_msg"]
    decoded = upload(client, "latin.txt", latin)
    assert wait_job(client, decoded.json()["job_id"])["result"]["processed"]
    track = client.get(f"/documents/track_status/{decoded.json()['track_id']}").json()
    assert track["documents"][0]["status"] == "processed"
    assert "Café" in track["documents"][0]["content_summary"]
    assert client.get("/health").status_code == 200
