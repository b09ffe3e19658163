"""HotpotQA, MuSiQue and SQuAD-style (CMRC 2018) files as gold sets.

Each passage gets a key that becomes its document's ``file_path`` when the
passages are indexed one document each: HotpotQA the title; MuSiQue
``<index> <title>`` (titles repeat; the index is the passage's place in the
corpus file); SQuAD the paragraph id. Gold passages: HotpotQA the titles
named in ``supporting_facts``, MuSiQue the paragraphs marked
``is_supporting``, SQuAD the question's own paragraph.

``limit`` keeps the first N questions (SQuAD: N spread evenly over the
file); ``sliced`` keeps only the passages those questions list (their gold
passages and distractors), for quick checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import NotRequired, TypedDict, TypeVar, cast

from kgrag.errors import ConfigError
from kgrag.evaluation.files import read_json
from kgrag.evaluation.gold import GoldQuestion, GoldSet

T = TypeVar("T")
R = TypeVar("R")


class HotpotQuestion(TypedDict):
    """One HotpotQA question: its contexts are ``[title, sentences]`` pairs."""

    question: str
    context: list[tuple[str, list[str]]]
    supporting_facts: list[tuple[str, int]]
    answer: NotRequired[str | None]
    _id: NotRequired[str]


class MusiqueParagraph(TypedDict):
    title: str
    paragraph_text: str
    is_supporting: bool


class MusiqueQuestion(TypedDict):
    question: str
    paragraphs: list[MusiqueParagraph]
    answer: NotRequired[str | None]
    answer_aliases: NotRequired[list[str] | None]
    id: NotRequired[str]


class MusiquePassage(TypedDict):
    """One passage of a MuSiQue corpus file."""

    title: str
    text: str


class SquadAnswer(TypedDict):
    text: str


class SquadQuestion(TypedDict):
    question: str
    answers: NotRequired[list[SquadAnswer] | None]
    id: NotRequired[str]


class SquadParagraph(TypedDict):
    context: str
    qas: list[SquadQuestion]
    id: NotRequired[str]


class SquadArticle(TypedDict):
    paragraphs: list[SquadParagraph]
    title: NotRequired[str]


# the layout of the shared data folder: dataset -> (questions file, corpus file)
DATA_FILES = {
    "hotpotqa": ("hotpotqa/hotpotqa_train.json", "hotpotqa/hotpotqa_train_corpus.json"),
    "musique": ("musique/musique_train.json", "musique/musique_train_corpus.json"),
    "cmrc": ("zh/cmrc2018_trial.squad.json", None),
}


def corpus_beside(questions: Path) -> Path | None:
    """The corpus file kept beside a questions file (``x.json`` -> ``x_corpus.json``), if any."""
    found = questions.with_name(f"{questions.stem}_corpus.json")
    return found if found.is_file() else None


def _items(path: Path, rows: Iterable[T], convert: Callable[[T], R]) -> list[R]:
    """``convert`` of every row; a row of the wrong shape is an error naming its place."""
    out: list[R] = []
    for number, row in enumerate(rows, start=1):
        try:
            out.append(convert(row))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ConfigError(f"{path}: item {number}: {what}") from None
    return out


def _list(path: Path, value: object, row: type[T]) -> list[T]:
    """A JSON list whose items are read as ``row`` records (a misshapen one fails in :func:`_items`)."""
    if not isinstance(value, list):
        raise ConfigError(f"{path}: expected a JSON list")
    return cast("list[T]", value)


def hotpotqa(
    path: Path, corpus: Path | None = None, limit: int | None = None, sliced: bool = False
) -> GoldSet:
    """HotpotQA: passages from ``corpus`` (``{title: [sentences]}``), else from the contexts."""
    rows = _list(path, read_json(path), HotpotQuestion)[:limit]
    if corpus is not None:
        titled = cast("dict[str, list[str]]", read_json(corpus))  # {title: [sentences]}
        passages = {t: f"{t}\n{''.join(s)}" for t, s in titled.items()}
    else:
        passages = {}
        for _, context in _items(path, rows, lambda q: (None, q["context"])):
            for t, s in context:
                if s:
                    passages.setdefault(t, f"{t}\n{''.join(s)}")

    def question(q: HotpotQuestion) -> GoldQuestion:
        gold = frozenset(t for t, _ in q["supporting_facts"] if t in passages)
        answers = () if q.get("answer") is None else (str(q["answer"]),)
        return GoldQuestion(q["question"], gold, answers, str(q.get("_id", "")))

    questions = _items(path, rows, question)
    if sliced:
        keep = {t for q in rows for t, _ in q["context"]} | {t for q in questions for t in q.gold}
        passages = {k: v for k, v in passages.items() if k in keep}
    return GoldSet("hotpotqa", questions, passages, source=str(path))


def musique(path: Path, corpus: Path, limit: int | None = None, sliced: bool = False) -> GoldSet:
    """MuSiQue: passages from ``corpus`` (``[{title, text}]``), gold marked ``is_supporting``."""
    passages = {
        f"{i:04d} {p['title']}": f"{p['title']}\n{p['text']}"
        for i, p in enumerate(_list(corpus, read_json(corpus), MusiquePassage))
    }
    key_of = {text: key for key, text in passages.items()}
    rows = _list(path, read_json(path), MusiqueQuestion)[:limit]

    def keys(q: MusiqueQuestion, supporting_only: bool) -> frozenset[str]:
        texts = (
            f"{p['title']}\n{p['paragraph_text']}"
            for p in q["paragraphs"]
            if p["is_supporting"] or not supporting_only
        )
        return frozenset(key_of[t] for t in texts if t in key_of)

    def question(q: MusiqueQuestion) -> GoldQuestion:
        given = [q.get("answer"), *(q.get("answer_aliases") or ())]
        answers = tuple(str(a) for a in given if a is not None)
        return GoldQuestion(q["question"], keys(q, True), answers, str(q.get("id", "")))

    questions = _items(path, rows, question)
    if sliced:
        keep = set().union(*(keys(q, False) for q in rows))
        passages = {k: v for k, v in passages.items() if k in keep}
    return GoldSet("musique", questions, passages, source=str(path))


def squad(path: Path, limit: int | None = None, sliced: bool = False) -> GoldSet:
    """SQuAD layout (CMRC 2018): each paragraph a passage, keyed by its id."""
    data = read_json(path)
    articles = data.get("data") if isinstance(data, dict) else None
    passages: dict[str, str] = {}
    questions: list[GoldQuestion] = []
    for art in _list(path, articles, SquadArticle):
        for j, p in enumerate(art["paragraphs"]):
            key = str(p.get("id") or f"{art.get('title', '')} #{j}")
            passages[key] = p["context"]
            questions.extend(_items(path, p["qas"], partial(_squad_question, key=key)))
    total = len(questions)
    step = max(1, total // (limit or total or 1))
    if limit:
        questions = questions[::step][:limit]
    if sliced:
        passages = {k: v for k, v in passages.items() if any(k in q.gold for q in questions)}
    note = f"{len(questions)} of {total} questions, every {step}th"
    return GoldSet("squad", questions, passages, source=str(path), note=note)


def _squad_question(q: SquadQuestion, *, key: str) -> GoldQuestion:
    answers = tuple(dict.fromkeys(str(a["text"]) for a in q.get("answers") or ()))
    return GoldQuestion(q["question"], frozenset({key}), answers, str(q.get("id", "")))


def load_dataset(name: str, data: Path, limit: int | None = None, sliced: bool = False) -> GoldSet:
    """The dataset ``name`` (a key of :data:`DATA_FILES`) from the data folder ``data``."""
    if name not in DATA_FILES:
        raise ConfigError(f"unknown dataset {name!r}; known: {', '.join(DATA_FILES)}")
    questions, corpus = DATA_FILES[name]
    if name == "hotpotqa":
        return hotpotqa(data / questions, data / str(corpus), limit, sliced)
    if name == "musique":
        return musique(data / questions, data / str(corpus), limit, sliced)
    return squad(data / questions, limit, sliced)
