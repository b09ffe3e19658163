"""End to end: a Markdown file indexed with the fake models; references name its sections."""

from __future__ import annotations

from functools import partial

from kgrag.api.facade import KGRag
from kgrag.ingest.blocks import decode_blocks
from kgrag.retrieval.context.sections import location_text, reference_line
from tests.support.settings import fake_settings

GUIDE = """# Licensing guide

## 3 Terms

### 3.2 Licensing

Alice Moreau grants Bruno Keller a personal licence. The licence covers the Zephyr
Robotics software and may not be sold. Bruno Keller pays the fee to Northwind Labs.

### 3.3 Fees

Fees are due every year in March. Late fees double after thirty days, and Chiara Rossi
of Quartz Systems collects them in Turin.

```python
def fee(plan):
    return PRICES[plan] * 2
```
"""


settings = partial(fake_settings, chunk_size=40, chunk_overlap=8, max_gleaning=0)


async def _all(kv) -> dict:
    keys = await kv.keys()
    return dict(zip(keys, await kv.get_many(keys), strict=False))


async def _index(rag: KGRag, path) -> None:
    report = await rag.index_paths([path])
    assert report.ok and report.processed, report


async def test_query_references_show_the_section(tmp_path):
    path = tmp_path / "docs" / "guide.md"
    path.parent.mkdir()
    path.write_text(GUIDE, encoding="utf-8")
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await _index(rag, path)
        row = next(iter((await _all(rag.storage.kv("full_docs"))).values()))
        assert decode_blocks(row["blocks"], row["content"])  # stored compactly, read back
        rows = await _all(rag.storage.kv("text_chunks"))
        sections = {tuple(r["location"]["section"]) for r in rows.values()}
        assert ("Licensing guide", "3 Terms", "3.2 Licensing") in sections
        for r in rows.values():
            loc = r["location"]
            assert row["content"][loc["start"] : loc["end"]] == r["content"]
        data = await rag.query_data(
            "Who pays the licence fee?", mode="naive", cosine_threshold=-1.0
        )
        where = {r.get("location") for r in data["references"]}
        assert "§3.2 Licensing" in where and "§3.3 Fees" in where
        assert all(r["file_path"] == str(path.resolve()) for r in data["references"])
        result = await rag.query("Who pays the licence fee?", mode="naive", cosine_threshold=-1.0)
        assert f"{path.resolve()} §3.2 Licensing" in result.context


async def test_code_only_chunks_are_searchable_but_not_extracted(tmp_path):
    path = tmp_path / "guide.md"
    path.write_text(
        "# Setup\n\nRun the tool.\n\n```sh\n"
        + "\n".join(f"kgrag index --workdir /tmp/w{i} docs/" for i in range(30))
        + "\n```\n",
        encoding="utf-8",
    )
    async with KGRag(settings(tmp_path / "idx")) as rag:
        await _index(rag, path)
        rows = await _all(rag.storage.kv("text_chunks"))
        code = [cid for cid, r in rows.items() if r["location"].get("kind") == "code"]
        assert code, "expected chunks that are code only"
        facts = await rag.storage.kv("chunk_facts").get_many(code)
        assert all(f is not None and not f.get("entities") for f in facts)
        hits = await rag.storage.lexical.search("workdir", 50)
        assert set(code) & {h for h, _ in hits}


def test_reference_line_formats():
    assert (
        location_text({"pages": [12, 12], "section": ["3 Terms", "3.2 Licensing"]})
        == "p. 12, §3.2 Licensing"
    )
    assert location_text({"pages": [3, 5], "section": []}) == "pp. 3-5"
    assert location_text({}) == "" and location_text(None) == ""
    assert (
        reference_line("1", "/abs/book.pdf", "p. 12, §3.2 Licensing")
        == "[1] /abs/book.pdf p. 12, §3.2 Licensing"
    )
    assert reference_line("2", "notes.txt") == "[2] notes.txt"
