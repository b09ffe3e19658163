"""The document-lifecycle commands, run as real processes with the built-in fake models.

index --meta / re-index of an edited file, delete (by id, by --path glob,
unknown id), disable / enable, docs --json, export, check (--repair) and
rebuild.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.indexing.cli_processes import docs_json, export, kgrag, ok
from tests.indexing.lifecycle_corpus import document, write


def by_name(listing: list[dict]) -> dict[str, dict]:
    return {Path(d["path"]).name: d for d in listing}


def test_index_with_metadata_update_and_delete(tmp_path):
    docs, work = tmp_path / "docs", tmp_path / "idx"
    for i, name in enumerate(["a.txt", "b.txt", "c.txt"]):
        write(docs, name, document([i, i + 1, i + 2]))
    write(docs / "notes", "n1.txt", document([10, 11]))
    write(docs / "notes", "n2.txt", document([12, 13]))

    out = ok("index", "--no-progress", "--meta", "team=ops", "--workdir", work, docs, cwd=tmp_path)
    assert out.splitlines()[0] == "5 new"
    listing = by_name(docs_json(work, tmp_path))
    assert sorted(listing) == ["a.txt", "b.txt", "c.txt", "n1.txt", "n2.txt"]
    assert all(d["metadata"] == {"team": "ops"} for d in listing.values())
    assert all(d["status"] == "processed" and not d["disabled"] for d in listing.values())

    write(docs, "a.txt", document([0, 1, 2], version=1, edited={1}))
    out = ok("index", "--no-progress", "--workdir", work, docs, cwd=tmp_path)
    assert out.splitlines()[0] == "1 updated, 4 unchanged"
    assert "indexed 1 document(s)" in out
    after = by_name(docs_json(work, tmp_path))
    assert after["a.txt"]["id"] == listing["a.txt"]["id"]  # same source, same document
    assert after["a.txt"]["metadata"] == {"team": "ops"}  # kept when no --meta is given

    out = ok("delete", "--json", "--workdir", work, listing["b.txt"]["id"], cwd=tmp_path)
    assert json.loads(out)["deleted"] == [listing["b.txt"]["id"]]
    out = ok("delete", "--workdir", work, "--path", "docs/notes/*.txt", cwd=tmp_path)
    assert out.startswith("deleted: 2,")
    assert sorted(by_name(docs_json(work, tmp_path))) == ["a.txt", "c.txt"]

    gone = kgrag("delete", "--workdir", work, "doc-nothing-like-this", cwd=tmp_path)
    assert gone.returncode == 2
    assert "no indexed document matches 'doc-nothing-like-this'" in gone.stderr
    nothing = kgrag("delete", "--workdir", work, cwd=tmp_path)
    assert nothing.returncode == 2 and "give document ids or --path GLOB" in nothing.stderr
    assert sorted(by_name(docs_json(work, tmp_path))) == ["a.txt", "c.txt"]


def test_disable_enable_and_export(tmp_path):
    docs, work = tmp_path / "docs", tmp_path / "idx"
    paths = [write(docs, f"d{i}.txt", document([i, i + 3])) for i in range(3)]
    ok("index", "--no-progress", "--workdir", work, docs, cwd=tmp_path)

    out = ok("disable", "--json", "--workdir", work, paths[0], cwd=tmp_path)  # by path
    [disabled] = json.loads(out)["disabled"]
    listing = by_name(docs_json(work, tmp_path))
    assert listing["d0.txt"]["id"] == disabled and listing["d0.txt"]["disabled"]
    assert not listing["d1.txt"]["disabled"] and not listing["d2.txt"]["disabled"]

    target = tmp_path / "graph.json"
    assert ok("export", "--workdir", work, "--output", target, cwd=tmp_path).startswith(
        f"wrote {target}"
    )
    graph = json.loads(target.read_text())
    assert graph["format"] == "kgrag-graph"
    names = [e["name"] for e in graph["entities"]]
    assert names and names == sorted(names)
    pairs = [(r["src"], r["tgt"]) for r in graph["relations"]]
    assert pairs and pairs == sorted(pairs)
    assert [d["disabled"] for d in graph["documents"] if d["id"] == disabled] == [True]
    assert all("updated_at" in d for d in graph["documents"])
    bare = json.loads(export(work, tmp_path))
    assert all("created_at" not in e and "updated_at" not in e for e in bare["entities"])
    assert all("updated_at" not in d for d in bare["documents"])

    ok("enable", "--workdir", work, disabled, cwd=tmp_path)
    assert not any(d["disabled"] for d in docs_json(work, tmp_path))


def drop_chunk_vectors(db: Path) -> int:
    """Delete every stored chunk vector; how many there were."""
    with sqlite3.connect(db) as conn:
        [(space,)] = conn.execute("SELECT id FROM vector_spaces WHERE ns = 'chunks'").fetchall()
        removed = conn.execute(f"DELETE FROM vec_{space}").rowcount
    conn.close()
    return removed


def test_check_finds_damage_repair_mends_it_and_rebuild_keeps_the_graph(tmp_path):
    docs, work = tmp_path / "docs", tmp_path / "idx"
    for i in range(3):
        write(docs, f"d{i}.txt", document([i, i + 1, i + 5]))
    ok("index", "--no-progress", "--workdir", work, docs, cwd=tmp_path)
    assert ok("check", "--workdir", work, cwd=tmp_path).startswith("index is consistent")
    before = export(work, tmp_path)

    assert drop_chunk_vectors(work / "kgrag.db") > 0
    damaged = kgrag("check", "--workdir", work, cwd=tmp_path)
    assert damaged.returncode == 1
    assert "problem: chunks vector" in damaged.stdout and "problem(s)" in damaged.stdout

    assert ok("check", "--repair", "--workdir", work, cwd=tmp_path).startswith(
        "index is consistent"
    )
    out = ok("rebuild", "--no-progress", "--workdir", work, cwd=tmp_path)
    assert out.startswith("rebuilt from 3 document(s)")
    assert export(work, tmp_path) == before
    assert kgrag("check", "--workdir", work, cwd=tmp_path).returncode == 0


def test_index_of_a_missing_path_fails(tmp_path):
    out = kgrag(
        "index", "--no-progress", "--workdir", tmp_path / "idx", tmp_path / "nope.txt", cwd=tmp_path
    )
    assert out.returncode != 0
    assert "nope.txt" in out.stderr and "no such file" in out.stderr
