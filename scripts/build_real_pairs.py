"""Add hand-read pairs from real evaluation graphs to the labelled resolution set.

    .venv/bin/python scripts/build_real_pairs.py --runs runs/eval

The graphs are the offline indexes ``scripts/eval_recall.py`` builds (NLP
extractor, MiniLM / e5-small vectors) of the HotpotQA, MuSiQue and CMRC
passage corpora. Their first ``dedupe`` runs merged names that were not
one thing, and the merges cost recall@5: a name inside the name of
another thing (Islamabad / Islamabad Airport, Finnish / Finnish markka),
one acronym chaining its several spellings-out (GB: Great Britain, Green
Bay, Guinea-Bissau), different Chinese names found by their vectors
(中共浙江省委 / 中共四川省委). The pairs below were read off those runs'
reports by hand, with the right merges among them as positives; each is
written with its names' neighbourhood (``build_dedupe_set.rivals``) to
``tests/resolution/data/real_<corpus>.json``. Names missing from a graph are
reported and skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import sys
from pathlib import Path

from kgrag.api.facade import KGRag
from kgrag.config.settings import Settings
from kgrag.curation.resolution.names import parse
from kgrag.curation.resolution.view import load_view

ROOT = Path(__file__).resolve().parent.parent
MODIFIER, ACRONYMS, ZH = "name inside another", "acronym spellings-out", "different Chinese names"
SAME, DIFF = "same", "different"
PAIRS = {
    "hotpotqa": [
        ("Company", "Bank Holding Company Act", DIFF, MODIFIER),
        ("Watertown", "Watertown International Airport", DIFF, MODIFIER),
        ("Iowa", "Central Iowa", DIFF, MODIFIER),
        ("San Francisco", "San Francisco Bay Area", DIFF, MODIFIER),
        ("Lesotho", "Geography of Lesotho", DIFF, MODIFIER),
        ("Bank", "Ameris Bank", DIFF, MODIFIER),
        ("Honolulu Rail Transit", "Honolulu Rail Transit Project", DIFF, MODIFIER),
        ("Indonesia Super League", "Indonesia Super League All-Star Game", DIFF, MODIFIER),
        ("Baltimore Cathedral", "Baltimore Colts", DIFF, ACRONYMS),
        ("Baltimore Colts", "Blinn College", DIFF, ACRONYMS),
        ("BBC One", "Boston Beer Company", DIFF, ACRONYMS),
        ("Big Bird Cage", "Boston Beer Company", DIFF, ACRONYMS),
        ("Salvation Army", "Saudi Aramco", DIFF, ACRONYMS),
        ("Chicago Tigers", "Circa Theatre", DIFF, ACRONYMS),
        ("American Banking Company", "ABC", DIFF, ACRONYMS),
        ("Claude Chabrol", "Chabrol", SAME, "containment"),
        ("Iain Banks", "Iain M. Banks", SAME, "containment"),
        ("National Basketball Association", "NBA", SAME, "acronym"),
    ],
    "musique": [
        ("Finnish", "Finnish markka", DIFF, MODIFIER),
        ("Portuguese", "Portuguese discoveries", DIFF, MODIFIER),
        ("Lara", "Jiménez Municipality, Lara", DIFF, MODIFIER),
        ("Wikipedia", "Spanish Wikipedia", DIFF, MODIFIER),
        ("Köppen", "Köppen Cwb", DIFF, MODIFIER),
        ("Pacific", "Pacific island", DIFF, MODIFIER),
        ("Continental", "Continental drift", DIFF, MODIFIER),
        ("Royal Navy", "Royal Australian Navy", DIFF, MODIFIER),
        ("Government of India", "Government of British India", DIFF, MODIFIER),
        ("Honolulu", "Downtown Honolulu", DIFF, MODIFIER),
        ("Copiah County", "Midway, Copiah County, Mississippi", DIFF, MODIFIER),
        ("Chennai", "Trident, Chennai", DIFF, MODIFIER),
        ("Japanese", "Japanese giant hornet", DIFF, MODIFIER),
        ("La Liga", "La Liga Breakthrough Player", DIFF, MODIFIER),
        ("Coudersport", "Coudersport Historic District", DIFF, MODIFIER),
        ("Limpopo", "Limpopo River", DIFF, MODIFIER),
        ("Treia", "Treia Cathedral", DIFF, MODIFIER),
        ("Kalandula", "Kalandula Falls", DIFF, MODIFIER),
        ("Garrett County", "Garrett County Courthouse", DIFF, MODIFIER),
        ("British Rail", "British Rail sandwich", DIFF, MODIFIER),
        ("TNT", "TNT equivalent", DIFF, MODIFIER),
        ("Islamabad", "Islamabad Airport", DIFF, MODIFIER),
        ("State", "State Route", DIFF, MODIFIER),
        ("Guinea", "Guinea-Bissau", DIFF, MODIFIER),
        ("Great Britain", "Green Bay", DIFF, ACRONYMS),
        ("Great Britain", "Guinea-Bissau", DIFF, ACRONYMS),
        ("Communist Party of Canada", "Communist Party of Czechoslovakia", DIFF, ACRONYMS),
        ("European Convention on Human Rights", "European Court of Human Rights", DIFF, ACRONYMS),
        ("Bank of Scotland", "Biochemical Society", DIFF, ACRONYMS),
        ("Lahore Darbar", "Lake District", DIFF, ACRONYMS),
        ("Horace Parlan", "Parlan", SAME, "containment"),
        ("Latvia", "Republic of Latvia", SAME, "containment"),
        ("Wardville", "Wardville, Oklahoma", SAME, "containment"),
        ("Vito Corleone", "Corleone", SAME, "containment"),
        ("Émile Bertrand", "Bertrand", SAME, "containment"),
    ],
    "cmrc": [
        ("中共浙江省委", "中共四川省委", DIFF, ZH),
        ("中国国奥队", "中国足协", DIFF, ZH),
        ("中国国奥队", "中国队", DIFF, ZH),
        ("巴黎圣母院", "巴黎市", DIFF, ZH),
        ("国务院", "国家经济贸易委员会", DIFF, ZH),
        ("法商学院", "法务部", DIFF, ZH),
        ("国家足球队", "国际队", DIFF, ZH),
        ("中共中央党校", "中共中央对外联络部", DIFF, ZH),
        ("王蕴", "封王蕴", DIFF, ZH),  # "enfeoff Wang Yun", as the word segmenter cut it
    ],
}
INDEXES = {
    "hotpotqa": "hotpotqa-nlp-local-minilm",
    "musique": "musique-nlp-local-minilm",
    "cmrc": "cmrc-nlp-local-e5-small",
}


def builder():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "build_dedupe_set", ROOT / "scripts/build_dedupe_set.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["build_dedupe_set"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


async def build(workdir: Path, corpus: str) -> dict:
    bds = builder()
    async with KGRag(Settings(workdir=workdir)) as rag:
        await rag.status()
        view = await load_view(rag.storage, with_vectors=False)
        pairs = []
        for a, b, label, kind in PAIRS[corpus]:
            if a in view.entities and b in view.entities:
                pairs.append({"a": a, "b": b, "label": label, "type": kind})
            else:
                print(f"{corpus}: skipped {a!r} / {b!r} (not both in the graph)")
        shared = {
            c for p in pairs for c in view.entities[p["a"]].sources & view.entities[p["b"]].sources
        }
        texts = await view.texts(sorted(shared))
    names = {n: parse(n) for n in view.entities}
    labelled = {n for p in pairs for n in (p["a"], p["b"])}
    return bds.fixture(view, bds.rivals(view, names, labelled), pairs, texts, {})


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=Path, default=ROOT / "runs" / "eval")
    args = ap.parse_args()
    for corpus, index in INDEXES.items():
        data = asyncio.run(build(args.runs / index, corpus))
        out = ROOT / "tests" / "resolution" / "data" / f"real_{corpus}.json"
        out.write_text(json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True) + "\n")
        print(f"{out.name}: {len(data['pairs'])} pairs, {len(data['entities'])} entities")


if __name__ == "__main__":
    main()
