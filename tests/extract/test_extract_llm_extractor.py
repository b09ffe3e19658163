"""Control flow of the LLM extractor, with a scripted stand-in chat service."""

from __future__ import annotations

import pytest

from kgrag.config.settings import Settings
from kgrag.errors import ConfigError, ModelTimeoutError
from kgrag.extract.llm_extractor import LLMExtractor, reply_problem
from kgrag.extract.prompts import INPUT_HEADING, find_fenced
from kgrag.ingest.ids import chunk_id
from kgrag.llm.base import ChatResult
from kgrag.llm.tokenizer import get_tokenizer
from kgrag.types import Chunk
from tests.support.chat import ScriptedChat

TOK = get_tokenizer()
TEXT = "Scrooge was the partner of Marley. Bob Cratchit is Scrooge's clerk."
CHUNK = Chunk(
    id=chunk_id(TEXT),
    doc_id="doc-1",
    content=TEXT,
    tokens=TOK.count(TEXT),
    order=0,
    file_path="carol.txt",
)


def rows(*lines: str) -> str:
    return "\n".join([*lines, "<|COMPLETE|>"])


FIRST = rows(
    "entity<|#|>Scrooge<|#|>Person<|#|>A partner.",
    "entity<|#|>Marley<|#|>Person<|#|>Scrooge's late partner.",
    "relation<|#|>Scrooge<|#|>Marley<|#|>partnership<|#|>They were partners.",
)


def extractor(chat, **kw) -> LLMExtractor:
    return LLMExtractor(chat, TOK, **kw)


async def test_one_extract_call_without_gleaning():
    chat = ScriptedChat(FIRST, then=None)
    ex = await extractor(chat, max_gleaning=0).extract(CHUNK)
    assert [c.role for c in chat.calls] == ["extract"]
    assert find_fenced(chat.calls[0].messages, INPUT_HEADING) == TEXT
    assert [e.name for e in ex.entities] == ["Scrooge", "Marley"]
    assert all(
        r.chunk_id == CHUNK.id and r.file_path == "carol.txt" for r in [*ex.entities, *ex.relations]
    )


async def test_glean_adds_records_and_replaces_only_with_longer_descriptions():
    glean = rows(
        "entity<|#|>Scrooge<|#|>Person<|#|>A covetous old sinner and Marley's partner.",  # longer
        "entity<|#|>Marley<|#|>Person<|#|>Dead.",  # shorter
        "entity<|#|>Bob Cratchit<|#|>Person<|#|>Scrooge's clerk.",  # new
        "relation<|#|>Marley<|#|>Scrooge<|#|>business<|#|>Partners in business for many years.",
        "relation<|#|>Bob Cratchit<|#|>Scrooge<|#|>employment<|#|>Bob works for Scrooge.",
    )
    chat = ScriptedChat(FIRST, glean, rows(), then=None)
    ex = await extractor(chat, max_gleaning=2).extract(CHUNK)
    assert [c.role for c in chat.calls] == ["extract", "glean", "glean"]
    by_name = {e.name: e.description for e in ex.entities}
    assert by_name == {
        "Scrooge": "A covetous old sinner and Marley's partner.",
        "Marley": "Scrooge's late partner.",
        "Bob Cratchit": "Scrooge's clerk.",
    }
    assert [(r.source, r.target, r.keywords) for r in ex.relations] == [
        ("Marley", "Scrooge", "business"),
        ("Bob Cratchit", "Scrooge", "employment"),
    ]
    # the glean re-sends the conversation: prompt, first answer, follow-up
    sent = chat.calls[1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2]["content"] == FIRST
    assert len(chat.calls[2].messages) == 6


async def test_gleaning_stops_when_nothing_new():
    chat = ScriptedChat(FIRST, rows(), then=None)
    ex = await extractor(chat, max_gleaning=3).extract(CHUNK)
    assert len(chat.calls) == 2 and len(ex.entities) == 2


async def test_garbage_then_valid_output_is_recovered_on_a_reask():
    chat = ScriptedChat("I'm sorry, as an AI I cannot... {{{ <|#", FIRST, rows(), then=None)
    ex = await extractor(chat, max_gleaning=1).extract(CHUNK)
    assert [c.role for c in chat.calls] == ["extract", "extract", "glean"]
    assert [e.name for e in ex.entities] == ["Scrooge", "Marley"] and ex.error is None
    assert ex.warnings == ["extract: reply malformed (no completion marker), recovered on re-ask 1"]
    # the re-ask changes the conversation: the same prompt plus one repair turn
    reask = chat.calls[1].messages
    assert reask[:-1] == chat.calls[0].messages
    assert reask[-1]["role"] == "user" and "attempt 1" in reask[-1]["content"]
    assert "<|COMPLETE|>" in reask[-1]["content"]
    # the glean builds on the healthy reply, not on the repair conversation
    assert chat.calls[2].messages[:3] == [
        *chat.calls[0].messages,
        {"role": "assistant", "content": FIRST},
    ]


async def test_glean_skipped_when_conversation_too_long():
    chat = ScriptedChat(FIRST, then=None)
    ex = await extractor(chat, max_gleaning=1, max_extract_input_tokens=50).extract(CHUNK)
    assert len(chat.calls) == 1
    assert any("skipped" in w for w in ex.warnings)


async def test_json_mode_is_requested_and_parsed():
    answer = '{"entities": [{"name": "Scrooge", "type": "person", "description": "A miser."}]}'
    chat = ScriptedChat(answer, '{"entities": [], "relationships": []}', then=None)
    ex = await extractor(chat, fmt="json").extract(CHUNK)
    assert all(c.json_mode for c in chat.calls)
    assert [(e.name, e.type) for e in ex.entities] == [("Scrooge", "Person")]


async def test_types_outside_the_offered_list_become_other():
    chat = ScriptedChat(rows("entity<|#|>Scrooge<|#|>villain<|#|>A miser."), then=None)
    ex = await extractor(chat, max_gleaning=0, entity_types=["Person"]).extract(CHUNK)
    assert ex.entities[0].type == "Other"


async def test_model_errors_propagate():
    with pytest.raises(ModelTimeoutError):
        await extractor(ScriptedChat(ModelTimeoutError("slow"), then=None)).extract(CHUNK)
    with pytest.raises(ModelTimeoutError):
        await extractor(ScriptedChat(FIRST, ModelTimeoutError("slow"), then=None)).extract(CHUNK)


async def test_empty_chunk_makes_no_call_and_settings_constructor():
    chat = ScriptedChat(then=None)
    empty = Chunk(id="chunk-x", doc_id="d", content="  ", tokens=0, order=0)
    assert (await extractor(chat).extract(empty)).entities == []
    built = LLMExtractor.from_settings(
        chat,
        Settings(extraction_format="json", max_gleaning=0, language="German", extract_max_reasks=5),
        TOK,
    )
    assert (built.fmt, built.max_gleaning, built.language) == ("json", 0, "German")
    assert built.max_reasks == 5 and Settings().extraction.max_reasks == 3
    with pytest.raises(ConfigError):
        LLMExtractor(chat, TOK, fmt="xml")
    with pytest.raises(ConfigError):
        LLMExtractor(chat, TOK, max_reasks=-1)


PROSE = "Here are the entities and relationships I identified in the passage above."
CUT = FIRST[: FIRST.index("Marley<|#|>Person") + 10]  # one whole row, then cut mid-row


@pytest.mark.parametrize(
    ("fmt", "text", "problem"),
    [
        ("delimited", FIRST, None),
        ("delimited", rows(), None),  # nothing to extract
        ("delimited", "No entities in this text.\n<|complete|>", None),
        ("delimited", FIRST.replace("<|#|>", " | "), None),  # repaired by the parser
        ("delimited", "", "empty reply"),
        ("delimited", CUT, "no completion marker"),
        ("delimited", PROSE, "no completion marker"),
        ("delimited", rows("entity<|#|>Scrooge<|#|>Person"), "no usable records"),
        (
            "delimited",
            rows(
                "entity<|#|>Scrooge<|#|>Person<|#|>A miser.",
                "entity<|#|>Bob",
                "entity<|#|>Fred<|#|>Person",
            ),
            "most rows dropped (2 warnings, 1 records)",
        ),
        ("json", '{"entities": [], "relationships": []}', None),
        (
            "json",
            (
                '```json\n{"entities": [{"name": "Scrooge", "type": "Person", '
                '"description": "A miser.",},],}\n```'
            ),
            None,
        ),  # repaired, and closed
        ("json", '{"entities": [{"name": "Scrooge", "type": "Per', "JSON does not close"),
        ("json", PROSE, "no JSON object"),
        ("json", rows("entity<|#|>Scrooge<|#|>Person<|#|>A miser."), None),  # delimited fallback
    ],
)
def test_reply_health_rules(fmt, text, problem):
    assert reply_problem(text, fmt) == problem


def test_a_reply_cut_at_the_token_limit_is_unhealthy():
    assert reply_problem(FIRST, finish_reason="length") == "cut at the token limit"


async def test_garbage_forever_keeps_the_best_attempt_and_sets_error():
    chat = ScriptedChat(PROSE, "", PROSE + " Really.", "{{{", then=None)
    ex = await extractor(chat, max_gleaning=1).extract(CHUNK)
    assert [c.role for c in chat.calls] == ["extract"] * 4  # no glean on top of nothing
    notes = [c.messages[-1]["content"] for c in chat.calls[1:]]
    assert [f"attempt {n}" in note for n, note in zip((1, 2, 3), notes, strict=False)] == [True] * 3
    assert len({str(c.messages) for c in chat.calls}) == 4  # every re-ask is a new request
    assert ex.entities == [] and ex.relations == []
    assert ex.error == "extract: reply unparseable after 4 attempts (no completion marker)"
    assert ex.warnings[-1] == (
        "extract: reply malformed in 4 attempts (no completion marker; "
        "empty reply); kept the 0 records of the best"
    )


async def test_cut_off_replies_keep_the_best_records_and_are_still_gleaned():
    cut_short = FIRST[:20]  # no whole row
    chat = ScriptedChat(
        cut_short, CUT, cut_short, rows("entity<|#|>Bob<|#|>Person<|#|>A clerk."), rows(), then=None
    )
    ex = await extractor(chat, max_gleaning=2, max_reasks=2).extract(CHUNK)
    assert [c.role for c in chat.calls] == ["extract"] * 3 + ["glean"] * 2
    assert [e.name for e in ex.entities] == ["Scrooge", "Bob"] and ex.error is None
    assert (
        "extract: reply malformed in 3 attempts (no completion marker); kept the 1 record "
        "of the best" in ex.warnings
    )
    assert chat.calls[3].messages[2] == {"role": "assistant", "content": CUT}


async def test_a_malformed_glean_is_reasked_as_a_glean():
    glean = rows("entity<|#|>Bob Cratchit<|#|>Person<|#|>Scrooge's clerk.")
    chat = ScriptedChat(FIRST, glean[:30], glean, rows(), then=None)
    ex = await extractor(chat, max_gleaning=2).extract(CHUNK)
    assert [c.role for c in chat.calls] == ["extract", "glean", "glean", "glean"]
    assert chat.calls[2].messages[:-1] == chat.calls[1].messages
    assert "Bob Cratchit" in {e.name for e in ex.entities}
    assert ex.warnings == ["glean 1: reply malformed (no completion marker), recovered on re-ask 1"]
    assert chat.calls[3].messages[-2] == {"role": "assistant", "content": glean}


async def test_a_glean_that_stays_malformed_ends_gleaning():
    chat = ScriptedChat(FIRST, PROSE, PROSE + "!", then=None)
    ex = await extractor(chat, max_gleaning=3, max_reasks=1).extract(CHUNK)
    assert [c.role for c in chat.calls] == ["extract", "glean", "glean"]
    assert len(ex.entities) == 2 and ex.error is None
    assert ex.warnings[-1].startswith("glean 1: reply malformed in 2 attempts")


async def test_empty_but_well_formed_reply_is_healthy_and_costs_one_call():
    for fmt, empty in (("delimited", rows()), ("json", '{"entities": [], "relationships": []}')):
        chat = ScriptedChat(empty, then=None)
        ex = await extractor(chat, fmt=fmt, max_gleaning=0).extract(CHUNK)
        assert len(chat.calls) == 1
        assert (ex.entities, ex.relations, ex.warnings, ex.error) == ([], [], [], None)


async def test_truncated_by_the_token_limit_is_reasked():
    chat = ScriptedChat(ChatResult(text=FIRST, finish_reason="length"), FIRST, then=None)
    ex = await extractor(chat, max_gleaning=0).extract(CHUNK)
    assert len(chat.calls) == 2 and len(ex.entities) == 2
    assert ex.warnings == [
        "extract: reply malformed (cut at the token limit), recovered on re-ask 1"
    ]


async def test_no_reasks_when_max_reasks_is_zero():
    chat = ScriptedChat(PROSE, then=None)
    ex = await extractor(chat, max_gleaning=1, max_reasks=0).extract(CHUNK)
    assert len(chat.calls) == 1
    assert ex.error == "extract: reply unparseable after 1 attempt (no completion marker)"


async def test_json_reask_restates_the_json_format():
    good = '{"entities": [{"name": "Scrooge", "type": "Person", "description": "A miser."}]}'
    chat = ScriptedChat(good[:25], good, then=None)
    ex = await extractor(chat, fmt="json", max_gleaning=0).extract(CHUNK)
    note = chat.calls[1].messages[-1]["content"]
    assert "JSON does not close" in note and '"relationships"' in note
    assert chat.calls[1].json_mode and [e.name for e in ex.entities] == ["Scrooge"]
