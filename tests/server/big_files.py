"""Large, ordinary inputs for the server's responsiveness test and benchmark.

English prose full of names (so the NLP extractor and the embedder have
real work on every chunk), as plain text of a given size or as a .docx of
many paragraphs. Deterministic: the same size gives the same bytes.
"""

from __future__ import annotations

import io
import random

PEOPLE = ["Ada Lovelace", "Charles Babbage", "Mary Somerville", "Michael Faraday", "John Herschel"]
PLACES = ["London", "Paris", "Edinburgh", "Turin", "Cambridge", "Dublin", "Vienna"]
GROUPS = ["the Royal Society", "the Analytical Society", "the Royal Institution", "Trinity College"]
VERBS = ["wrote to", "met", "argued with", "visited", "worked beside", "corresponded with"]
TOPICS = ["engines", "tables", "magnetism", "astronomy", "poetry", "looms", "calculus"]


def sentence(rng: random.Random) -> str:
    a, b = rng.sample(PEOPLE, 2)
    return (
        f"{a} {rng.choice(VERBS)} {b} in {rng.choice(PLACES)} about {rng.choice(TOPICS)} "
        f"for {rng.choice(GROUPS)} in {rng.randint(1800, 1870)}."
    )


def paragraphs(size: int, seed: int = 0) -> list[str]:
    """Paragraphs of a few sentences each, about ``size`` characters together."""
    rng, out, total = random.Random(seed), [], 0
    while total < size:
        text = " ".join(sentence(rng) for _ in range(rng.randint(3, 7)))
        out.append(text)
        total += len(text) + 2
    return out


def big_text(size: int, seed: int = 0) -> bytes:
    """UTF-8 prose of about ``size`` bytes, paragraphs separated by blank lines."""
    return "\n\n".join(paragraphs(size, seed)).encode("utf-8")


def big_docx(size: int, seed: int = 1) -> bytes:
    """A .docx whose text is about ``size`` characters, a heading every 50 paragraphs."""
    import docx

    document = docx.Document()
    for i, text in enumerate(paragraphs(size, seed)):
        if i % 50 == 0:
            document.add_heading(f"Chapter {i // 50 + 1}", level=1)
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
