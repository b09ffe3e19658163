"""Query-side wording of the fixed replies: no context, no keywords, no LLM.

The keywords and answer prompts themselves come from
:mod:`kgrag.extract.prompts`; the context section headers are in
:mod:`kgrag.retrieval.context.headers`.
"""

from __future__ import annotations

NO_CONTEXT_ANSWER = (
    "I could not find anything in the indexed documents that relates to this "
    "question, so I cannot answer it from them.{searched}"
)

NO_KEYWORDS_ANSWER = (
    "I could not pick out any search terms from this question, so nothing was "
    "retrieved. Try naming the people, things or topics you are asking about, "
    "or pass keywords explicitly."
)

NO_LLM_NOTE = (
    "No chat model is configured, so this answer is extractive: the sentences "
    "below are quoted from the indexed documents, best match first. For a "
    "written answer, configure a chat model with KGRAG_LLM_BASE_URL, "
    "KGRAG_LLM_MODEL and KGRAG_LLM_API_KEY (or OPENAI_BASE_URL and "
    "OPENAI_API_KEY)."
)

NO_LLM_BYPASS = (
    "Bypass mode sends the question straight to a chat model, and none is "
    "configured. Set KGRAG_LLM_BASE_URL, KGRAG_LLM_MODEL and KGRAG_LLM_API_KEY "
    "(or OPENAI_BASE_URL and OPENAI_API_KEY), or use another mode."
)
