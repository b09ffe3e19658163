"""Reading a gold file of any supported format, told apart by its content.

- JSONL (:mod:`kgrag.evaluation.jsonl`): one ``{"question": ...}`` object a line;
- HotpotQA: a JSON list of questions with ``supporting_facts``;
- MuSiQue: a JSON list of questions with ``paragraphs``;
- SQuAD (CMRC 2018): a JSON object whose ``data`` lists articles.

See :mod:`kgrag.evaluation.datasets` for what the passages and gold are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgrag.errors import ConfigError
from kgrag.evaluation import datasets, jsonl
from kgrag.evaluation.files import jsonl_objects, looks_like_jsonl, parse_json, read_text
from kgrag.evaluation.gold import GoldSet

FORMATS = ("jsonl", "hotpotqa", "musique", "squad")


@dataclass(frozen=True, slots=True)
class GoldOptions:
    """How to read a gold file.

    ``passages``: HotpotQA and MuSiQue, their corpus file (default: the
    ``<name>_corpus.json`` beside the questions); JSONL, a passages file or
    a folder of documents. ``limit``: the first N questions (SQuAD: spread
    evenly). ``sliced``: keep only the passages the questions list.
    """

    passages: Path | None = None
    limit: int | None = None
    sliced: bool = False


def sniff(path: Path, text: str) -> str:
    """The format of the gold file ``path`` whose content is ``text``."""
    if looks_like_jsonl(text):
        first = next(jsonl_objects(path, text))[1]
        if "question" in first:
            return "jsonl"
    data = parse_json(path, text)
    head: object = data[0] if isinstance(data, list) and data else data
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        return "squad"
    if isinstance(data, list) and isinstance(head, dict):
        if "supporting_facts" in head:
            return "hotpotqa"
        if "paragraphs" in head and "question" in head:
            return "musique"
    raise ConfigError(
        f"{path}: not a gold file kgrag knows (JSONL questions, HotpotQA, MuSiQue or SQuAD JSON)"
    )


def read_gold(path: str | Path, options: GoldOptions | None = None) -> GoldSet:
    """The questions (and passages) of the gold file at ``path``, its format detected."""
    path, options = Path(path), options or GoldOptions()
    text = read_text(path)
    kind = sniff(path, text)
    if kind == "jsonl":
        return _jsonl(path, text, options)
    if kind == "squad":
        if options.passages is not None:
            raise ConfigError(f"{path}: a SQuAD file holds its passages; drop --passages")
        return datasets.squad(path, options.limit, options.sliced)
    corpus = options.passages or datasets.corpus_beside(path)
    if kind == "hotpotqa":
        return datasets.hotpotqa(path, corpus, options.limit, options.sliced)
    if corpus is None:
        raise ConfigError(
            f"{path}: a MuSiQue file needs its corpus "
            f"({path.stem}_corpus.json beside it, or --passages FILE)"
        )
    return datasets.musique(path, corpus, options.limit, options.sliced)


def _jsonl(path: Path, text: str, options: GoldOptions) -> GoldSet:
    questions = jsonl.gold_questions(path, text)[: options.limit]
    found = GoldSet("jsonl", questions, source=str(path))
    given = options.passages
    if given is not None and given.is_dir():
        found.corpus_dir = given
    elif given is not None:
        passages = jsonl.passages_file(given)
        if options.sliced:
            wanted = set().union(*(q.gold for q in questions))
            passages = {k: v for k, v in passages.items() if k in wanted}
        found.passages = passages
    return found
