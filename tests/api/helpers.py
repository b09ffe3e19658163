"""Shared pieces of the API tests: settings with the built-in fakes, a LightRAG-style model."""

from __future__ import annotations

import json
from typing import Any

from tests.support.settings import fake_settings

TEXT = "Ada Lovelace wrote notes on the Analytical Engine of Charles Babbage."
QUESTION = "Who wrote notes on the Analytical Engine?"

# What an extraction reply looks like in kgrag's delimited record format.
RECORDS = "\n".join(
    [
        "entity<|#|>Ada Lovelace<|#|>Person<|#|>Ada Lovelace wrote notes on the engine.",
        "entity<|#|>Analytical Engine<|#|>Artifact<|#|>A machine designed by Charles Babbage.",
        "entity<|#|>Charles Babbage<|#|>Person<|#|>Charles Babbage designed the engine.",
        "relation<|#|>Ada Lovelace<|#|>Analytical Engine<|#|>notes<|#|>Ada wrote notes on it.",
        "relation<|#|>Charles Babbage<|#|>Analytical Engine<|#|>design<|#|>Babbage designed it.",
        "<|COMPLETE|>",
    ]
)
ANSWER = "Ada Lovelace wrote the notes [1]."


settings = fake_settings  # the name the api tests use


def lightrag_llm(log: list[dict[str, Any]]):
    """A LightRAG-style chat function: a tiny rule-based 'model' that records every call."""

    async def llm(
        prompt: str,
        system_prompt: str | None = None,
        history_messages: list[dict[str, str]] | None = None,
        **kwargs: Any,
    ) -> str:
        log.append({"prompt": prompt, "system": system_prompt, "history": history_messages})
        if history_messages:  # the gleaning turn: nothing was missed
            return "<|COMPLETE|>"
        if "---Input Text---" in prompt:
            return RECORDS
        if "JSON object of keywords" in prompt:
            return json.dumps(
                {"high_level_keywords": ["notes"], "low_level_keywords": ["Ada Lovelace"]}
            )
        return ANSWER

    return llm
