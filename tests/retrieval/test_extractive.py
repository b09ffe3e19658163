"""The extractive answer quotes the sentences that answer, each cited with its chunk's number."""

from __future__ import annotations

import re
from pathlib import Path

from kgrag.llm.embedding import EmbeddingService
from kgrag.llm.fake import FakeEmbeddingProvider
from kgrag.llm.ledger import Ledger
from kgrag.retrieval import QueryParam
from kgrag.retrieval.answer.citations import cited_numbers
from kgrag.retrieval.answer.extractive import extractive_answer
from kgrag.retrieval.records import ChunkHit

BOOK = Path(__file__).resolve().parents[2] / "data" / "christmas_carol.txt"
QUOTE = re.compile(r'^\d+\. "(.*)" \[(\d+)\]$')
WARNING = "I am here to-night to warn you that you have yet a chance and hope of escaping my fate."
COUNTENANCE = "Scrooge's countenance fell almost as low as the Ghost's had done."


def chunk(i: int, text: str) -> ChunkHit:
    return ChunkHit(f"c{i}", 1.0, "naive", text, f"doc{i}.txt", f"d{i}", loaded=True)


def references(n: int, first: int = 1) -> list[dict[str, str]]:
    return [
        {"reference_id": str(k), "kind": "chunk", "file_path": f"doc{k - first}.txt"}
        for k in range(first, first + n)
    ]


async def answer(question: str, texts: list[str], first_ref: int = 1) -> tuple[str, list[str]]:
    """The extractive answer over ``texts`` (one chunk each, numbered from ``first_ref``)."""
    embed = EmbeddingService(FakeEmbeddingProvider(dim=256), ledger=Ledger())
    vector = (await embed.embed([question], kind="query"))[0]
    chunks = [chunk(i, t) for i, t in enumerate(texts)]
    refs = [str(first_ref + i) for i in range(len(texts))]
    text = await extractive_answer(
        vector, chunks, refs, references(len(texts), first_ref), embed, question=question
    )
    return text, quotes(text)


def quotes(text: str) -> list[str]:
    return [m.group(1) for line in text.splitlines() if (m := QUOTE.match(line))]


def marley_excerpt() -> list[str]:
    """The Ghost's warning and what follows it, cut into two chunks at a paragraph."""
    book = BOOK.read_text(encoding="utf-8")
    start = book.index("'Oh! captive, bound")
    end = book.index("'Without their visits,'", start)
    paragraphs = book[start:end].strip().split("\n\n")
    half = len(paragraphs) // 2
    return ["\n\n".join(paragraphs[:half]), "\n\n".join(paragraphs[half:])]


async def test_the_warning_answers_what_marley_warns_of():
    text, said = await answer("What does Marley's ghost warn Scrooge about?", marley_excerpt())
    assert WARNING in said[0] and COUNTENANCE not in said[0]
    assert "Best supporting passages" in text


async def test_each_hop_gets_its_own_quote():
    texts = [
        "Arthur Penrose was a Victorian engineer from Bristol. Penrose founded the Halden "
        "Glassworks in 1821. Arthur Penrose retired to the coast in 1850.",
        "Many glassworks opened in northern towns during the nineteenth century. The Halden "
        "Glassworks stands on the river in the town of Vellmar.",
    ]
    _, said = await answer("In which town is the glassworks that Arthur Penrose founded?", texts)
    first_hop = "Penrose founded the Halden Glassworks in 1821."
    second_hop = "The Halden Glassworks stands on the river in the town of Vellmar."
    assert len(said) >= 2
    holding = [next(i for i, q in enumerate(said) if s in q) for s in (first_hop, second_hop)]
    assert sorted(holding) == [0, 1]  # the two best quotes, one hop each


async def test_a_pronoun_led_quote_brings_the_sentence_before_it():
    texts = [
        "Ada Lovelace worked with Charles Babbage on the Analytical Engine. She was born in "
        "London in 1815. Babbage designed the engine in 1837.",
        "The Analytical Engine was never finished in Babbage's lifetime.",
    ]
    _, said = await answer("Where was Ada Lovelace born?", texts)
    assert said[0] == (
        "Ada Lovelace worked with Charles Babbage on the Analytical Engine. "
        "She was born in London in 1815."
    )


async def test_quotes_cite_their_chunk_and_only_cited_references_are_listed():
    texts = [*marley_excerpt(), "The cafeteria serves pasta on Mondays and soup on Fridays."]
    text, _ = await answer("What does Marley's ghost warn Scrooge about?", texts, first_ref=7)
    body, _, listed = text.partition("### References")
    for line in body.splitlines():
        if m := QUOTE.match(line):  # quoted verbatim from the chunk it cites
            number = int(m.group(2))
            assert 7 <= number <= 9 and m.group(1) in " ".join(texts[number - 7].split())
    cited = cited_numbers(body)
    assert cited and cited_numbers(listed) == sorted(cited) and 9 not in cited


async def test_chinese_quote_with_its_antecedent():
    texts = ["李白是唐代著名的诗人。他出生于碎叶城，五岁随父迁居绵州。", "杜甫比李白小十一岁。"]
    _, said = await answer("李白出生在哪里？", texts)
    assert said[0] == "李白是唐代著名的诗人。他出生于碎叶城，五岁随父迁居绵州。"


async def test_same_context_same_answer():
    question = "What does Marley's ghost warn Scrooge about?"
    first, _ = await answer(question, marley_excerpt())
    again, _ = await answer(question, marley_excerpt())
    assert first == again


async def test_a_failing_embedder_leaves_the_lexical_ranking():
    class Down:
        async def embed(self, texts, kind="document"):
            from kgrag.errors import ModelServerError

            raise ModelServerError("embedding service down")

    question = "What does Marley's ghost warn Scrooge about?"
    chunks = [chunk(i, t) for i, t in enumerate(marley_excerpt())]
    text = await extractive_answer(
        [0.0] * 256, chunks, ["1", "2"], references(2), Down(), question=question
    )
    assert WARNING in quotes(text)[0]


async def test_engine_passes_the_question_and_cites_context_numbers(parts):
    result = await parts.engine(chat=False).query(
        "Which license does FW-A need for TLS output?", QueryParam(include_references=True)
    )
    said = quotes(result.answer)
    assert said and "License L" in said[0]
    by_number = {r["reference_id"]: r for r in result.references}
    for line in result.answer.splitlines():
        if m := QUOTE.match(line):
            ref = by_number[m.group(2)]
            assert ref["kind"] == "chunk" and m.group(1) in " ".join(ref["text"].split())
