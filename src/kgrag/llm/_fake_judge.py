"""The fake chat model's judge: verdicts on the evaluation's prompts, pure functions of them.

The prompt is read by its labelled fenced blocks (``Question:``,
``Reference answers, one a line:`` and ``Candidate answer:`` for grading;
``Answer 1:`` and ``Answer 2:`` for the pairwise comparison), each fence
longer than any run of backticks inside it. Words are the lower-cased runs
of letters and digits, each CJK character one word, articles dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from kgrag.llm.base import ChatMessage

CRITERIA = ("comprehensiveness", "diversity", "empowerment", "overall")
CORRECT_SHARE = 0.5  # of a reference answer's words the candidate must hold
_BLOCK = re.compile(r"(?:^|\n)([^\n]+):\n(`{3,})\n(.*?)\n\2(?=\n|$)", re.S)
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_ARTICLES = frozenset({"a", "an", "the"})
UNKNOWN = "I cannot tell what this prompt asks me to judge."


def blocks(text: str) -> dict[str, str]:
    """The fenced blocks of ``text``, by the label on the line before each."""
    return {label.strip(): body for label, _, body in _BLOCK.findall(text)}


def words(text: str) -> list[str]:
    """The normalised words of ``text``, in order."""
    return [w for w in _WORD.findall(text.lower()) if w not in _ARTICLES]


def grade(references: list[str], answer: str) -> dict[str, str]:
    """Correct when ``answer`` holds at least half the words of some reference."""
    held = set(words(answer))
    best, shown = -1.0, "no reference answer"
    for reference in references:
        wanted = set(words(reference))
        if wanted:
            share = len(wanted & held) / len(wanted)
            if share > best:
                best, shown = share, f"{len(wanted & held)} of {len(wanted)} reference words"
    verdict = "correct" if best >= CORRECT_SHARE else "incorrect"
    return {"verdict": verdict, "reason": f"the answer holds {shown}"}


def _counts(question: str) -> dict[str, Callable[[list[str]], tuple[int, int]]]:
    asked = set(words(question))
    return {
        "comprehensiveness": lambda ws: (len(ws), len(set(ws))),
        "diversity": lambda ws: (len(set(ws)), len(ws)),
        "empowerment": lambda ws: (len(set(ws) - asked), len(ws)),
    }


def compare(question: str, first: str, second: str) -> dict[str, dict[str, str]]:
    """Per criterion the answer ("1" or "2") with the higher count; ties to answer 1."""
    answers = (words(first), words(second))
    out: dict[str, dict[str, str]] = {}
    for criterion, count in _counts(question).items():
        one, two = count(answers[0]), count(answers[1])
        winner = "1" if one >= two else "2"
        out[criterion] = {"winner": winner, "reason": f"{one[0]} to {two[0]}"}
    ones = sum(v["winner"] == "1" for v in out.values())
    out["overall"] = {
        "winner": "1" if 2 * ones > len(out) else "2",
        "reason": f"answer 1 wins {ones} of {len(out)} criteria",
    }
    return out


def verdict(messages: Sequence[ChatMessage]) -> str:
    """The JSON verdict on the first user message holding a judge prompt."""
    for message in messages:
        if message.get("role") != "user":
            continue
        seen = blocks(str(message.get("content") or ""))
        question = seen.get("Question", "")
        refs = next((v for k, v in seen.items() if k.startswith("Reference answers")), None)
        if refs is not None and "Candidate answer" in seen:
            found = grade(refs.splitlines(), seen["Candidate answer"])
            return json.dumps(found, ensure_ascii=False)
        if "Answer 1" in seen and "Answer 2" in seen:
            return json.dumps(compare(question, seen["Answer 1"], seen["Answer 2"]))
    return UNKNOWN
