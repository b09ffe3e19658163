"""Hypothesis strategies for extracted fragments (small alphabets, many collisions)."""

from __future__ import annotations

from hypothesis import strategies as st

from kgrag.knowledge.policy import MergePolicy
from kgrag.llm.tokenizer import get_tokenizer
from kgrag.types import ExtractedEntity, ExtractedRelation

TOKENIZER = get_tokenizer()

chunk_ids = st.sampled_from(["", "c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"])
file_paths = st.sampled_from(["", "a.txt", "b.md", "c.pdf", "d.txt"])
types = st.sampled_from(["Person", "Organization", "Location", "UNKNOWN", ""])
descriptions = st.text(alphabet="abc .", max_size=12)
names = st.sampled_from(["Alice", "Bob", "Carol", "Dave"])
keyword_lists = st.lists(
    st.sampled_from(["love", "war", " trade ", "Love", "", "peace"]), max_size=4
)
separators = st.sampled_from([",", "\uff0c", ", "])
weights = st.floats(min_value=0.0, max_value=10.0, allow_nan=False, allow_infinity=False)


@st.composite
def keywords(draw) -> str:
    """A keyword string joined with ASCII or full-width commas."""
    return draw(separators).join(draw(keyword_lists))


@st.composite
def entity_fragments(draw, name: str = "Alice", max_size: int = 12) -> list[ExtractedEntity]:
    """Fragments of one entity."""
    n = draw(st.integers(0, max_size))
    return [
        ExtractedEntity(name, draw(types), draw(descriptions), draw(chunk_ids), draw(file_paths))
        for _ in range(n)
    ]


@st.composite
def relation_fragments(
    draw, pair: tuple[str, str] = ("Alice", "Bob"), max_size: int = 12
) -> list[ExtractedRelation]:
    """Fragments of one edge, stated in either direction."""
    n = draw(st.integers(0, max_size))
    out = []
    for _ in range(n):
        src, tgt = pair if draw(st.booleans()) else pair[::-1]
        out.append(
            ExtractedRelation(
                src,
                tgt,
                draw(keywords()),
                draw(descriptions),
                draw(weights),
                draw(chunk_ids),
                draw(file_paths),
            )
        )
    return out


def roomy_policy(**kw) -> MergePolicy:
    """A policy whose caps are never reached by the strategies above."""
    return MergePolicy(tokenizer=TOKENIZER, **kw)


@st.composite
def capped_policies(draw) -> MergePolicy:
    """Small caps, either limit method, varied summary thresholds."""
    return MergePolicy(
        force_llm_summary_on_merge=draw(st.integers(2, 6)),
        summary_max_tokens=draw(st.integers(1, 40)),
        max_source_ids_per_entity=draw(st.integers(0, 4)),
        max_source_ids_per_relation=draw(st.integers(0, 4)),
        source_ids_limit_method=draw(st.sampled_from(["KEEP", "FIFO"])),
        max_file_paths=draw(st.integers(0, 3)),
        tokenizer=TOKENIZER,
    )
