"""The judge's prompts: is an answer correct, and which of two answers is better.

The pairwise criteria follow the LightRAG paper's evaluation
(comprehensiveness, diversity, empowerment, overall); the wording is
kgrag's. Texts under judgement go in fenced blocks, each fence longer than
any run of backticks inside, so an answer cannot end its block early.
"""

from __future__ import annotations

import re

from kgrag.llm.base import Messages

CORRECTNESS_SYSTEM = """\
You grade answers against reference answers.

Read the question, the reference answers and the candidate answer. The \
candidate is correct when it states what a reference answer states: the \
same person, place, thing, number or date, in any wording. Extra detail \
that does not contradict the reference is fine. It is incorrect when it \
contradicts every reference, leaves the question unanswered, or hedges \
between several possibilities.

Reply with a JSON object and nothing else:
{"verdict": "correct" or "incorrect", "reason": "one short sentence"}"""

PAIRWISE_SYSTEM = """\
You compare two answers to the same question and say which is better on \
each of four criteria.

- comprehensiveness: which answer covers more of what the question asks, \
with the detail needed to answer it fully;
- diversity: which answer brings more distinct angles, aspects and \
insights to the question;
- empowerment: which answer better equips the reader to understand the \
topic and to reach sound judgements of their own;
- overall: which answer is better all things considered, weighing the \
three criteria above.

Judge the content alone. The order in which the answers are shown means \
nothing, and length is worth nothing by itself. Name the better answer as \
"1" or "2"; say "tie" only when nothing at all separates them.

Reply with a JSON object and nothing else, in this shape:
{"comprehensiveness": {"winner": "1", "reason": "..."}, \
"diversity": {"winner": "2", "reason": "..."}, \
"empowerment": {"winner": "1", "reason": "..."}, \
"overall": {"winner": "1", "reason": "..."}}"""

RETRY = (
    "Your reply could not be read ({problem}). Reply again with the JSON object "
    "only, in the shape asked for."
)


def fenced(text: str) -> str:
    """``text`` in a fenced block whose fence no run of backticks inside can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.strip()}\n{fence}"


def correctness_messages(question: str, references: list[str], answer: str) -> Messages:
    """The chat messages asking whether ``answer`` is correct."""
    user = "\n\n".join(
        [
            f"Question:\n{fenced(question)}",
            f"Reference answers, one a line:\n{fenced(chr(10).join(references))}",
            f"Candidate answer:\n{fenced(answer)}",
        ]
    )
    return [{"role": "system", "content": CORRECTNESS_SYSTEM}, {"role": "user", "content": user}]


def pairwise_messages(question: str, first: str, second: str) -> Messages:
    """The chat messages asking which of ``first`` (answer 1) and ``second`` (2) is better."""
    user = "\n\n".join(
        [
            f"Question:\n{fenced(question)}",
            f"Answer 1:\n{fenced(first)}",
            f"Answer 2:\n{fenced(second)}",
        ]
    )
    return [{"role": "system", "content": PAIRWISE_SYSTEM}, {"role": "user", "content": user}]
