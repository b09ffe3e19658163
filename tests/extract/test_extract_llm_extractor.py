"""Control flow of the LLM extractor, with a scripted stand-in chat service."""

from __future__ import annotations

import pytest

from kgrag.config import Settings
from kgrag.errors import ConfigError, ModelTimeoutError
from kgrag.extract.llm_extractor import LLMExtractor
from kgrag.extract.prompts import INPUT_HEADING, find_fenced
from kgrag.ingest.ids import chunk_id
from kgrag.llm.base import ChatResult
from kgrag.tokenizer import get_tokenizer
from kgrag.types import Chunk

TOK = get_tokenizer()
TEXT = "Scrooge was the partner of Marley. Bob Cratchit is Scrooge's clerk."
CHUNK = Chunk(id=chunk_id(TEXT), doc_id="doc-1", content=TEXT, tokens=TOK.count(TEXT), order=0,
              file_path="carol.txt")


class ScriptedChat:
    """Answers calls from a list; records what it was sent."""

    def __init__(self, *answers: str | Exception):
        self.answers = list(answers)
        self.calls: list[dict] = []

    async def chat(self, messages, *, role, json_mode=False):
        self.calls.append({"messages": [dict(m) for m in messages], "role": role,
                           "json_mode": json_mode})
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return ChatResult(text=answer)


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
    chat = ScriptedChat(FIRST)
    ex = await extractor(chat, max_gleaning=0).extract(CHUNK)
    assert [c["role"] for c in chat.calls] == ["extract"]
    assert find_fenced(chat.calls[0]["messages"], INPUT_HEADING) == TEXT
    assert [e.name for e in ex.entities] == ["Scrooge", "Marley"]
    assert all(r.chunk_id == CHUNK.id and r.file_path == "carol.txt"
               for r in [*ex.entities, *ex.relations])


async def test_glean_adds_records_and_replaces_only_with_longer_descriptions():
    glean = rows(
        "entity<|#|>Scrooge<|#|>Person<|#|>A covetous old sinner and Marley's partner.",  # longer
        "entity<|#|>Marley<|#|>Person<|#|>Dead.",                                         # shorter
        "entity<|#|>Bob Cratchit<|#|>Person<|#|>Scrooge's clerk.",                         # new
        "relation<|#|>Marley<|#|>Scrooge<|#|>business<|#|>Partners in business for many years.",
        "relation<|#|>Bob Cratchit<|#|>Scrooge<|#|>employment<|#|>Bob works for Scrooge.",
    )
    chat = ScriptedChat(FIRST, glean, rows())
    ex = await extractor(chat, max_gleaning=2).extract(CHUNK)
    assert [c["role"] for c in chat.calls] == ["extract", "glean", "glean"]
    by_name = {e.name: e.description for e in ex.entities}
    assert by_name == {"Scrooge": "A covetous old sinner and Marley's partner.",
                       "Marley": "Scrooge's late partner.", "Bob Cratchit": "Scrooge's clerk."}
    assert [(r.source, r.target, r.keywords) for r in ex.relations] == [
        ("Marley", "Scrooge", "business"), ("Bob Cratchit", "Scrooge", "employment")]
    # the glean re-sends the conversation: prompt, first answer, follow-up
    sent = chat.calls[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2]["content"] == FIRST
    assert len(chat.calls[2]["messages"]) == 6


async def test_gleaning_stops_when_nothing_new():
    chat = ScriptedChat(FIRST, rows())
    ex = await extractor(chat, max_gleaning=3).extract(CHUNK)
    assert len(chat.calls) == 2 and len(ex.entities) == 2


async def test_garbage_then_valid_output():
    chat = ScriptedChat("I'm sorry, as an AI I cannot... {{{ <|#", FIRST)
    ex = await extractor(chat, max_gleaning=1).extract(CHUNK)
    assert [e.name for e in ex.entities] == ["Scrooge", "Marley"]
    assert any(w.startswith("extract:") for w in ex.warnings)


async def test_glean_skipped_when_conversation_too_long():
    chat = ScriptedChat(FIRST)
    ex = await extractor(chat, max_gleaning=1, max_extract_input_tokens=50).extract(CHUNK)
    assert len(chat.calls) == 1
    assert any("skipped" in w for w in ex.warnings)


async def test_json_mode_is_requested_and_parsed():
    answer = '{"entities": [{"name": "Scrooge", "type": "person", "description": "A miser."}]}'
    chat = ScriptedChat(answer, '{"entities": [], "relationships": []}')
    ex = await extractor(chat, fmt="json").extract(CHUNK)
    assert all(c["json_mode"] for c in chat.calls)
    assert [(e.name, e.type) for e in ex.entities] == [("Scrooge", "Person")]


async def test_types_outside_the_offered_list_become_other():
    chat = ScriptedChat(rows("entity<|#|>Scrooge<|#|>villain<|#|>A miser."))
    ex = await extractor(chat, max_gleaning=0, entity_types=["Person"]).extract(CHUNK)
    assert ex.entities[0].type == "Other"


async def test_model_errors_propagate():
    with pytest.raises(ModelTimeoutError):
        await extractor(ScriptedChat(ModelTimeoutError("slow"))).extract(CHUNK)
    with pytest.raises(ModelTimeoutError):
        await extractor(ScriptedChat(FIRST, ModelTimeoutError("slow"))).extract(CHUNK)


async def test_empty_chunk_makes_no_call_and_settings_constructor():
    chat = ScriptedChat()
    empty = Chunk(id="chunk-x", doc_id="d", content="  ", tokens=0, order=0)
    assert (await extractor(chat).extract(empty)).entities == []
    built = LLMExtractor.from_settings(chat, Settings(extraction_format="json", max_gleaning=0,
                                                      language="German"), TOK)
    assert (built.fmt, built.max_gleaning, built.language) == ("json", 0, "German")
    with pytest.raises(ConfigError):
        LLMExtractor(chat, TOK, fmt="xml")
