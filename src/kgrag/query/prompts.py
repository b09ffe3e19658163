"""Prompts of the query side: keywords, answers, and the fixed replies.

Instructions stay outside code fences and data (context, references)
inside them, so a model (or a classifier) can tell the two apart. The
question always comes last, after ``Question:``.
"""

from __future__ import annotations

KEYWORDS_SYSTEM = """You choose search keywords for a retrieval system built on a knowledge graph.

Read the question and return one JSON object with two lists of strings:
- "high_level_keywords": the broad concepts, themes or kinds of relationship the question is about;
- "low_level_keywords": the specific names, objects, places, dates and details it mentions.

Rules:
- Take the keywords from the question and write them in the language of the question.
- Use short phrases of one to four words, with no duplicates.
- If the question has no meaningful content, return both lists empty.
- Reply with the JSON object only: no prose, no code fence.

Example
Question: How did the 2008 financial crisis change hiring at Lehman Brothers?
{"high_level_keywords": ["financial crisis", "hiring policy"], "low_level_keywords": ["2008", "Lehman Brothers", "hiring"]}"""

ANSWER_SYSTEM = """You answer questions from the retrieved context below, which was taken from a collection of documents.

---Instructions---
1. Base the answer on the context only. When the context does not contain the answer, say so plainly; never invent facts.
2. Answer in the same language as the question.
3. Format the answer as {response_type}, in Markdown.
4. Cite the documents that support each statement with their numbers from the Reference Document List, like [1] or [2][3].
5. {references_rule}
6. Earlier conversation turns, if any, only help to understand the question; facts must come from the context.{user_block}

The context was retrieved in "{mode}" mode.

---Context---
{context}"""

REFERENCES_SECTION = (
    'End with a "### References" section listing at most five cited documents, '
    "one per line, as [n] file path."
)
REFERENCES_INLINE = "Cite inline only; do not add a separate list of references."

USER_BLOCK = "\n\n---Additional Instructions---\n{user_prompt}"

ENTITIES_HEADER = "Knowledge graph entities (one JSON object per line):"
RELATIONS_HEADER = "Knowledge graph relations (one JSON object per line):"
CHUNKS_HEADER = (
    "Document chunks (one JSON object per line; reference_id points into the "
    "Reference Document List):"
)
REFERENCES_HEADER = "Reference Document List:"

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


def keywords_messages(question: str) -> list[dict[str, str]]:
    """The chat messages asking for the keywords of ``question``."""
    return [
        {"role": "system", "content": KEYWORDS_SYSTEM},
        {"role": "user", "content": f"Question: {question}"},
    ]


def fenced(body: str, lang: str = "") -> str:
    """``body`` inside a Markdown code fence."""
    return f"```{lang}\n{body}\n```"
