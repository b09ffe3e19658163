"""Citations: invented numbers removed and reported, the rest resolved to checkable spans.

The fake chat model cites the context items it quotes as ``[n]`` and adds
one number no item has (see :mod:`kgrag.llm.fake`), so every answer here
has something to remove.
"""

from __future__ import annotations

import io
import itertools
import json
import re
from functools import partial

from hypothesis import given
from hypothesis import strategies as st
from pypdf import PdfReader, PdfWriter

from kgrag.api.facade import KGRag
from kgrag.retrieval import QueryParam
from kgrag.retrieval.answer.citations import (
    CitationFilter,
    check_citations,
    cite,
    cited_numbers,
    reference_list,
)
from kgrag.retrieval.reference import Reference
from tests.ingest.pdf_fixture import minimal_pdf
from tests.support.settings import SMALL_CHUNKS, fake_settings

Q = "Which license does FW-A need for TLS output?"
KW = dict(ll_keywords=["FW-A"], hl_keywords=["license dependency"])

GUIDE = """# Licensing guide

## 3 Terms

### 3.2 Licensing

Alice Moreau grants Bruno Keller a personal licence for the Zephyr software.
Bruno Keller pays the licence fee to Northwind Labs every March.

### 3.3 Fees

Late fees double after thirty days, and Chiara Rossi of Quartz Systems collects them.
"""

PAGES = [
    [
        "Northwind Labs signed the Zephyr contract with Bruno Keller in Turin.",
        "The contract runs for five years and renews unless Bruno Keller ends it.",
    ],
    [
        "The Zephyr contract gives Quartz Systems the right to audit Northwind Labs.",
        "Quartz Systems reports the audit to Alice Moreau within sixty days.",
    ],
]


def two_page_pdf() -> bytes:
    writer = PdfWriter()
    for lines in PAGES:
        writer.append(PdfReader(io.BytesIO(minimal_pdf(lines))))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


settings = partial(fake_settings, **SMALL_CHUNKS, max_gleaning=0)


# --- the filter on text -------------------------------------------------------


def test_invalid_numbers_are_removed_and_reported():
    text = (
        "Fees are due [1][9]. Bruno pays [2, 9]. Nobody knows [9].\n"
        "\n### References\n- [1] guide.md\n- [9] invented.md\n- [2][9] guide.md p. 2\n"
    )
    out, cited, invalid = check_citations(text, {1, 2})
    assert out == (
        "Fees are due [1]. Bruno pays [2]. Nobody knows.\n"
        "\n### References\n- [1] guide.md\n- [2] guide.md p. 2\n"
    )
    assert cited == [1, 2] and invalid == [9]


def test_text_without_invalid_citations_is_left_as_it_is():
    text = "A claim [1], another [2, 3], a [link] kept.\n\n**References**\n- [1] a.md\n- [3] b.md"
    out, cited, invalid = check_citations(text, {1, 2, 3})
    assert out == text and invalid == [] and cited == [1, 2, 3]


_FRAGMENTS = st.sampled_from(
    [
        *("word", " ", "  ", "[1]", "[7]", "[1, 7]", "[2,1]", "[", "]", "1", ",", ".", "\n"),
        *("\n\n", "### References\n", "- [7] x\n", "- [1] y\n", "## Next\n", "[12", "tail [7]"),
    ]
)


@given(st.lists(_FRAGMENTS, max_size=30), st.lists(st.integers(0, 200), max_size=8))
def test_a_stream_in_any_pieces_comes_out_as_the_whole_answer(fragments, cuts):
    text = "".join(fragments)
    whole, cited, invalid = check_citations(text, {1, 2})
    assert 7 not in cited_numbers(whole)
    ends = [len("".join(fragments[: i + 1])) for i in range(len(fragments))]
    # Cut at every fragment boundary, and at random places.
    for bounds in (
        sorted({0, *ends}),
        sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)}),
    ):
        check = CitationFilter(frozenset({1, 2}))
        pieces = [check.feed(text[a:b]) for a, b in itertools.pairwise(bounds)]
        assert "".join(pieces) + check.close() == whole
        assert (check.cited, check.invalid) == (cited, invalid)


def test_cite_and_reference_list():
    assert cite("Fees are due.", 3, "5", 3) == "Fees are due. [3][5]"
    assert cite("No source.") == "No source."
    refs = [
        Reference(1, "entity", "Alice", file_path="a.md", section=["Terms"]).to_dict(),
        Reference(2, "chunk", "c-1", file_path="b.pdf", pages=[2, 3]).to_dict(),
    ]
    assert reference_list(refs, [2]) == "### References\n[2] b.pdf pp. 2-3"
    assert reference_list(refs).splitlines()[1] == "[1] a.md §Terms (entity: Alice)"


def test_reference_round_trips_through_its_dict():
    ref = Reference(4, "chunk", "c-9", "c-9", "doc-1", "a.pdf", [2, 2], ["A", "B"], 10, 30, "t")
    data = ref.to_dict()
    assert data["reference_id"] == "4" and data["location"] == "p. 2, §B"
    assert Reference.from_dict(data) == ref


# --- the engine over the hand-written corpus -------------------------------------


async def test_an_invented_number_is_removed_and_every_other_resolves(parts):
    result = await parts.engine().query(Q, QueryParam(**KW, include_references=True))
    numbers = [int(r["reference_id"]) for r in result.references]
    assert numbers == list(range(1, len(numbers) + 1))
    assert result.invalid_citations == [len(numbers) + 1]  # the fake's invented one
    assert f"[{len(numbers) + 1}]" not in result.answer
    cited = cited_numbers(result.answer)
    assert cited and set(cited) <= set(numbers)
    flags = {int(r["reference_id"]): r["cited"] for r in result.references}
    assert {n for n, on in flags.items() if on} == set(cited)
    for ref in result.reference_records:  # a cited chunk is the context line of its number
        line = json.dumps({"reference_id": str(ref.number), "content": ref.text})
        assert (line in result.context) == (ref.kind == "chunk")


async def test_every_context_item_carries_its_number(parts):
    result = await parts.engine().query(Q, QueryParam(**KW, include_references=True))
    ids = re.findall(r'\{"reference_id": "(\d+)"', result.context)
    assert [int(i) for i in ids] == list(range(1, len(ids) + 1))
    kinds = {r["reference_id"]: r["kind"] for r in result.references}
    assert set(kinds) == set(ids)
    listed = re.findall(r"^\[(\d+)\] ", result.context, re.M)
    assert listed == [i for i in ids if kinds[i] == "chunk"]


async def test_streaming_strips_the_same_numbers(parts):
    engine = parts.engine()
    whole = await engine.query(Q, QueryParam(**KW))
    stream = engine.stream(Q, QueryParam(**KW))
    text = "".join([piece async for piece in stream])
    assert text == whole.answer and stream.result is not None
    assert stream.result.invalid_citations == whole.invalid_citations != []


async def test_the_extractive_answer_is_not_altered_but_its_citations_count(parts):
    result = await parts.engine(chat=False).query(Q, QueryParam(**KW, include_references=True))
    assert result.extractive and result.invalid_citations == []
    cited = {int(r["reference_id"]) for r in result.references if r["cited"]}
    assert cited and cited <= set(cited_numbers(result.answer))


# --- real files: a Markdown guide with sections, a PDF with pages ------------------


async def _indexed(tmp_path) -> KGRag:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    (docs / "contract.pdf").write_bytes(two_page_pdf())
    rag = KGRag(settings(tmp_path / "idx"))
    await rag.open()
    report = await rag.index_paths([docs])
    assert report.ok and len(report.processed) == 2, report
    return rag


async def test_cited_spans_are_found_verbatim_in_the_documents(tmp_path):
    rag = await _indexed(tmp_path)
    try:
        result = await rag.query(
            "Who pays the Zephyr licence fee to Northwind Labs?",
            mode="mix",
            cosine_threshold=-1.0,
            include_references=True,
        )
        docs = rag.storage.kv("full_docs")
        assert result.invalid_citations and result.references
        cited = [r for r in result.reference_records if r.cited]
        assert cited
        for ref in result.reference_records:
            if not ref.chunk_id:
                continue
            content = (await docs.get(ref.doc_id))["content"]
            assert ref.start is not None and ref.end is not None
            assert content[ref.start : ref.end] == ref.text, ref
        chunks = [r for r in result.reference_records if r.kind == "chunk"]
        pdf = [r for r in chunks if r.file_path.endswith("contract.pdf")]
        md = [r for r in chunks if r.file_path.endswith("guide.md")]
        assert {tuple(r.pages or ()) for r in pdf} >= {(1, 1), (2, 2)}
        assert ["Licensing guide", "3 Terms", "3.2 Licensing"] in [r.section for r in md]
        assert all(r.pages is None for r in md)
    finally:
        await rag.close()
