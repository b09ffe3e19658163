"""Content-hash identifiers."""

from hashlib import md5

from kgrag.ingest.ids import chunk_id, doc_id, entity_vector_id, relation_vector_id


def test_prefixes_and_hashes():
    assert doc_id("abc") == "doc-" + md5(b"abc").hexdigest()
    assert chunk_id("abc") == "chunk-" + md5(b"abc").hexdigest()
    assert entity_vector_id("Scrooge") == "ent-" + md5(b"Scrooge").hexdigest()


def test_relation_id_is_direction_free_and_unambiguous():
    assert relation_vector_id("A", "B") == relation_vector_id("B", "A")
    assert relation_vector_id("A", "B") == "rel-" + md5(b"A\x1fB").hexdigest()
    assert relation_vector_id("ab", "c") != relation_vector_id("a", "bc")
