"""File names are data: escaped when shown, skipped only when they cannot be stored.

A name that is not UTF-8 used to raise ``UnicodeEncodeError`` in the id
hash and stop the whole folder; a newline in a name was printed raw.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from kgrag.errors import LoaderError
from kgrag.ingest.ids import source_doc_id
from kgrag.ingest.loaders import load_paths
from kgrag.ingest.names import display_name, document_name, is_text, records_named
from kgrag.types import DocRecord, DocStatus


def make(folder: Path, name: bytes, text: str = "Scrooge met Marley in London.") -> bytes:
    path = os.path.join(os.fsencode(folder), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text.encode())
    return path


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("plain name.txt", "plain name.txt"),
        ("Ünïcödé 東京　駅.txt", "Ünïcödé 東京　駅.txt"),  # letters and an ideographic space stay
        ("back\\slash.txt", "back\\slash.txt"),  # never doubled: ordinary names never change
        ("new\nline.txt", "new\\nline.txt"),
        ("tab\tcr\r.txt", "tab\\tcr\\r.txt"),
        ("bell\x07esc\x1b[31m.txt", "bell\\x07esc\\x1b[31m.txt"),
        ("rtl\u202etxt.exe", "rtl\\u202etxt.exe"),  # a bidi override cannot disguise a name
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("line\u2028sep", "line\\u2028sep"),
        (os.fsdecode(b"latin1 caf\xe9.txt"), "latin1 caf\\xe9.txt"),  # the byte itself
    ],
)
def test_display_name_escapes_what_is_not_printable_and_nothing_else(name, shown):
    assert display_name(name) == shown
    assert display_name(shown) == shown  # escaping twice changes nothing
    assert len(shown.splitlines()) == 1


def test_ids_of_ordinary_names_never_change_and_odd_ones_hash_their_bytes():
    ordinary = "/docs/a.txt"
    assert source_doc_id(ordinary) == "doc-" + hashlib.md5(b"source:/docs/a.txt").hexdigest()
    odd = os.fsdecode(b"/docs/caf\xe9.txt")
    assert not is_text(odd) and is_text(ordinary)
    expected = hashlib.md5(b"source:" + os.fsencode(odd)).hexdigest()
    assert source_doc_id(odd) == "doc-" + expected  # stable, whatever the name holds
    assert source_doc_id("\ud800lone") == source_doc_id("\ud800lone")  # any lone surrogate
    assert source_doc_id(ordinary, 1) != source_doc_id(ordinary)


def test_a_folder_with_odd_names_loads_every_file_it_can(tmp_path):
    docs = tmp_path / "docs"
    make(docs, b"good.txt")
    make(docs, b"bad\xff name.txt")
    make(docs, b"new\nline.txt", "Bob Cratchit worked for Scrooge.")
    make(docs, b"latin\xe9/inside.txt", "Tiny Tim lived in London.")  # a folder not UTF-8
    make(docs, b"long-" + b"x" * 245 + b".txt", "Fezziwig gave a ball.")  # 255 bytes
    report = load_paths([docs])
    loaded = sorted(d.relative_path for d in report.documents)
    assert loaded == sorted(["good.txt", "new\nline.txt", "long-" + "x" * 245 + ".txt"])
    assert all(is_text(d.source) for d in report.documents)
    messages = sorted(str(e) for e in report.errors)
    assert len(messages) == 2 and all("\n" not in m and m.isprintable() for m in messages)
    assert "bad\\xff name.txt: the file name is not valid UTF-8" in messages[0]
    assert "latin\\xe9: the folder name is not valid UTF-8" in messages[1]
    assert "nothing in it is indexed" in messages[1]


def test_a_file_named_directly_with_a_name_not_utf8_is_skipped_with_its_reason(tmp_path):
    path = make(tmp_path, b"caf\xe9.txt")
    report = load_paths([os.fsdecode(path)])
    [error] = report.errors
    assert not report.documents and isinstance(error, LoaderError)
    assert error.path == os.fsdecode(path)  # the path as given, for whoever acts on it
    assert str(error).endswith(
        "caf\\xe9.txt: the file name is not valid UTF-8, which a "
        "document's source must be; it is not indexed (rename it to "
        "index it)"
    )


def record(doc_id: str, source: str | None, file_path: str, relative: str | None) -> DocRecord:
    return DocRecord(
        id=doc_id,
        status=DocStatus.PROCESSED,
        content_length=1,
        content_summary="",
        file_path=file_path,
        source=source,
        relative_path=relative,
    )


def test_listed_names_and_paths_name_their_documents_and_ambiguity_is_reported():
    a = record("doc-a", "/srv/in/joe.txt", "/srv/in/joe.txt", "joe.txt")
    b = record("doc-b", None, "joe.txt", None)  # a raw text given the path joe.txt
    c = record("doc-c", "/srv/in/new\nline.txt", "/srv/in/new\nline.txt", "new\nline.txt")
    d = record("doc-d", "notes-1", "unknown_source", None)
    records = [a, b, c, d]
    assert [document_name(r) for r in records] == [
        "joe.txt",
        "joe.txt",
        "new\\nline.txt",
        "notes-1",
    ]
    assert records_named("doc-b", records) == [b]  # an id first
    assert records_named("/srv/in/joe.txt", records) == [a]  # then a source or path
    assert records_named("joe.txt", records) == [b]  # the path b was given, before names
    assert records_named("new\\nline.txt", records) == [c]  # the name as listed (escaped)
    assert records_named("new\nline.txt", records) == [c]  # or as it is
    assert records_named("notes-1", records) == [d]
    assert records_named("nothing", records) == []
    e = record("doc-e", "/srv/other/new\nline.txt", "/srv/other/new\nline.txt", "new\nline.txt")
    assert records_named("new\\nline.txt", [*records, e]) == [c, e]  # ambiguous: the caller says so


def test_load_file_refuses_a_name_not_utf8_and_insert_keeps_its_labels_storable(tmp_path):
    from kgrag.errors import ConfigError
    from kgrag.ingest.loaders import load_file
    from kgrag.ingest.texts import text_documents

    path = os.fsdecode(make(tmp_path, b"caf\xe9.txt"))
    with pytest.raises(LoaderError, match="not valid UTF-8"):
        load_file(path)
    [doc] = text_documents("Marley was dead.", [os.fsdecode(b"caf\xe9.txt")])
    assert doc.file_path == "caf\\xe9.txt" and is_text(doc.file_path)
    with pytest.raises(ConfigError, match="valid Unicode"):
        text_documents("Marley was dead.", ids=["\udce9"])
