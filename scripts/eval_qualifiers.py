"""Do answers respect the question's qualifiers? The qualifier suite of tests/evidence.

Usage::

    python scripts/eval_qualifiers.py --out runs/eval/qualifiers.json
    python scripts/eval_qualifiers.py --paths offline --limit 3   # a quick look

The suite (``tests/evidence/data/qualifiers.jsonl``, written by hand) is a
list of groups: a few one-sentence documents about one object that differ
only in a qualifier (operating mode, licence tier, audience, environment,
version, region, year, configuration, population, plan, size, protocol...),
a background document, and questions. Each question names the statement
that applies (``applies``; null when none does) and the qualifier values no
statement covers (``uncovered``: the note must name one of them).

Each group's documents are indexed once in a temporary folder (NLP
extractor, the fake embedder). Then each question is asked through the
public API on two paths:

- ``offline``: no chat model, rule constraints, the extractive answer;
- ``fake``: the fake chat model, constraints from the chat model
  (``conditions="llm"``), the model's answer (it quotes the context's first
  lines), and whether its prompt carries the conditions section.

Reported per path, overall and per qualifier kind (the group's kind) and
language: precision and recall of the "not covered" notes (a note is right
when the question expects one and the note names one of its ``uncovered``
values), and the share of answers whose first quote is the applicable
statement (and no sibling), over the questions that have one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgrag import KGRag
    from kgrag.config import Settings

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tests" / "evidence" / "data" / "qualifiers.jsonl"
PATHS = ("offline", "fake")
EXTRACTIVE_QUOTE = re.compile(r'^\d+\. "(.*)" \[[^\]]+\]$')
MODEL_QUOTE = re.compile(r"^> (.*?)(?: \[\d+\])*$")
CONDITIONS_HEADER = "Conditions of the question"
SENTENCE_END = re.compile(r"(?<=[.。!?！？])\s*")


@dataclass(frozen=True)
class Doc:
    """One document of a group: a statement (with its qualifiers) or the background."""

    id: str
    text: str
    qualifiers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    """A question, the statement that applies (None: none) and the values no statement covers."""

    question: str
    kinds: list[str]
    applies: str | None
    uncovered: list[str]


@dataclass(frozen=True)
class Group:
    """Sibling statements about one object, and the questions asked of them."""

    group: str
    lang: str
    kind: str
    docs: list[Doc]
    questions: list[Question]

    def text(self, doc_id: str) -> str:
        return next(d.text for d in self.docs if d.id == doc_id)

    def siblings(self, doc_id: str | None) -> list[str]:
        return [d.text for d in self.docs if d.qualifiers and d.id != doc_id]


def load_suite(path: Path = SUITE) -> list[Group]:
    """The groups of the suite, one JSON object a line."""
    groups = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        docs = [Doc(d["id"], d["text"], d.get("qualifiers", {})) for d in row["docs"]]
        questions = [
            Question(q["question"], q["kinds"], q["applies"], q["uncovered"])
            for q in row["questions"]
        ]
        groups.append(Group(row["group"], row["lang"], row["kind"], docs, questions))
    return groups


@dataclass
class Outcome:
    """What one path answered to one question, and how it scores."""

    group: str
    kind: str
    lang: str
    path: str
    question: str
    first_quote: str | None
    note: str
    prompt_conditions: bool | None
    first_applies: bool | None  # None: no statement applies
    note_expected: bool
    note_right: bool
    error: str = ""  # the query raised: scored as no quote and no note


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def is_statement(quote: str, statement: str) -> bool:
    """Whether a quote is this statement (whole, or at least half of it)."""
    q, s = norm(quote), norm(statement)
    return bool(q) and (s in q or (q in s and len(q) >= len(s) / 2))


def note_is_right(note: str, uncovered: list[str]) -> bool:
    """Whether every sentence of a note names a value no statement covers.

    A note that also says "the sources describe FW-B only" of a qualifier a
    statement does match is wrong, even when another sentence is right.
    """
    sentences = [s for s in SENTENCE_END.split(norm(note)) if s.strip()]
    return bool(sentences) and all(any(norm(v) in s for v in uncovered) for s in sentences)


def first_quote(answer: str, path: str) -> str | None:
    """The first sentence an answer quotes: a numbered extractive quote or a model's ``>`` line."""
    pattern = EXTRACTIVE_QUOTE if path == "offline" else MODEL_QUOTE
    for line in answer.splitlines():
        if m := pattern.match(line.strip()):
            return m.group(1)
    return None


def settings(workdir: Path, path: str) -> Settings:
    from kgrag.config import Settings

    chat = "none" if path == "offline" else "fake"
    return Settings(workdir=workdir, extractor="nlp", llm_provider=chat, embedding_provider="fake")


async def index_group(group: Group, folder: Path) -> Path:
    """Write the group's documents and index them (offline); the index folder."""
    from kgrag import KGRag as Rag

    docs = folder / "docs"
    docs.mkdir(parents=True)
    for doc in group.docs:
        (docs / f"{doc.id}.md").write_text(doc.text + "\n", encoding="utf-8")
    async with Rag(settings(folder / "idx", "offline")) as rag:
        report = await rag.index_paths([docs])
        if not report.ok:
            raise RuntimeError(f"{group.group}: indexing failed: {report}")
    return folder / "idx"


def score(group: Group, q: Question, path: str, answer: str, note: str) -> Outcome:
    """Score one answer: its first quote and its note."""
    quote = first_quote(answer, path)
    first_applies = None
    if q.applies is not None:
        wanted = group.text(q.applies)
        first_applies = quote is not None and is_statement(quote, wanted)
        first_applies = first_applies and not any(
            is_statement(quote or "", s) for s in group.siblings(q.applies)
        )
    named = note_is_right(note, q.uncovered)
    return Outcome(
        group.group, group.kind, group.lang, path, q.question, quote, note, None,
        first_applies, bool(q.uncovered), bool(note) and named,
    )  # fmt: skip


async def ask_group(group: Group, index: Path, path: str) -> list[Outcome]:
    """Every question of a group on one path."""
    from kgrag import KGRag as Rag

    out = []
    async with Rag(settings(index, path)) as rag:
        for q in group.questions:
            try:
                out.append(await ask(rag, group, q, path))
            except Exception as exc:  # a failing query is a finding, not the end of the run
                failed = score(group, q, path, "", "")
                failed.error = f"{type(exc).__name__}: {exc}"
                out.append(failed)
    return out


async def ask(rag: KGRag, group: Group, q: Question, path: str) -> Outcome:
    """One question on one path: the answer, the note, (fake) the prompt's conditions."""
    param = rag.query_param(conditions="rules" if path == "offline" else "llm")
    result = await rag.query(q.question, param)
    data = await rag.query_data(q.question, param)
    note = str((data.get("conditions") or {}).get("note") or "")
    got = score(group, q, path, result.answer, note)
    if path == "fake":
        prompt_param = rag.query_param(conditions="llm", only_need_prompt=True)
        prompt = (await rag.query(q.question, prompt_param)).prompt
        got.prompt_conditions = CONDITIONS_HEADER in prompt
    return got


def share(hits: int, total: int) -> float | None:
    return round(hits / total, 3) if total else None


def figures(rows: Iterable[Outcome]) -> dict[str, object]:
    """Note precision and recall, first-quote share, over some outcomes."""
    rows = list(rows)
    notes = [r for r in rows if r.note]
    expected = [r for r in rows if r.note_expected]
    applicable = [r for r in rows if r.first_applies is not None]
    prompts = [r for r in rows if r.prompt_conditions is not None]
    out: dict[str, object] = {
        "questions": len(rows),
        "note_precision": share(sum(r.note_right for r in notes), len(notes)),
        "note_recall": share(sum(r.note_right for r in expected), len(expected)),
        "notes_written": len(notes),
        "notes_expected": len(expected),
        "first_quote_applies": share(
            sum(bool(r.first_applies) for r in applicable), len(applicable)
        ),
        "with_applicable": len(applicable),
        "errors": sum(bool(r.error) for r in rows),
    }
    if prompts:
        out["prompt_has_conditions"] = share(
            sum(bool(r.prompt_conditions) for r in prompts), len(prompts)
        )
    return out


def report(outcomes: list[Outcome]) -> dict[str, object]:
    """Figures per path: overall, per kind and per language."""
    out: dict[str, object] = {}
    for path in sorted({o.path for o in outcomes}):
        rows = [o for o in outcomes if o.path == path]
        by_kind: dict[str, list[Outcome]] = defaultdict(list)
        by_lang: dict[str, list[Outcome]] = defaultdict(list)
        for r in rows:
            by_kind[r.kind].append(r)
            by_lang[r.lang].append(r)
        out[path] = {
            "overall": figures(rows),
            "by_kind": {k: figures(v) for k, v in sorted(by_kind.items())},
            "by_lang": {k: figures(v) for k, v in sorted(by_lang.items())},
        }
    return out


async def run(groups: list[Group], paths: list[str]) -> list[Outcome]:
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="kgrag-qualifiers-") as tmp:
        for n, group in enumerate(groups):
            index = await index_group(group, Path(tmp) / str(n))
            for path in paths:
                outcomes += await ask_group(group, index, path)
    return outcomes


def table(summary: dict[str, object]) -> str:
    """A Markdown table of the overall and per-kind figures."""
    head = "| path | slice | questions | note precision | note recall | first quote applies |"
    lines = [head + " prompt has conditions |", "|---|---|---|---|---|---|---|"]
    for path, parts in summary.items():
        assert isinstance(parts, dict)
        slices = {"all": parts["overall"]} | parts["by_lang"] | parts["by_kind"]
        for name, f in slices.items():
            cells = [
                f["questions"],
                f["note_precision"],
                f["note_recall"],
                f["first_quote_applies"],
                f.get("prompt_has_conditions", "-"),
            ]
            lines.append(f"| {path} | {name} | " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--suite", default=str(SUITE))
    ap.add_argument("--paths", default=",".join(PATHS), help="offline, fake or both")
    ap.add_argument("--limit", type=int, default=0, help="first N groups (0: all)")
    ap.add_argument("--questions", type=int, default=0, help="first N questions a group (0: all)")
    ap.add_argument("--out", default=None, help="write the figures and every answer as JSON")
    args = ap.parse_args(argv)
    args.paths = [p for p in args.paths.split(",") if p]
    if unknown := set(args.paths) - set(PATHS):
        ap.error(f"unknown paths: {sorted(unknown)}")
    return args


def main(argv: list[str] | None = None) -> dict[str, object]:
    args = parse_args(argv)
    groups = load_suite(Path(args.suite))[: args.limit or None]
    if args.questions:
        groups = [
            Group(g.group, g.lang, g.kind, g.docs, g.questions[: args.questions]) for g in groups
        ]
    outcomes = asyncio.run(run(groups, args.paths))
    summary = report(outcomes)
    print(table(summary), file=sys.stderr)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        rows = [asdict(o) for o in outcomes]
        text = json.dumps({"figures": summary, "answers": rows}, ensure_ascii=False, indent=1)
        Path(args.out).write_text(text, encoding="utf-8")
    return summary


if __name__ == "__main__":
    main()
