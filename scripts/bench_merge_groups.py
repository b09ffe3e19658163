"""Time ``merge_groups`` beside merging the same groups one by one.

    python scripts/bench_merge_groups.py [--docs 300]

A synthetic index (tests/curation/helpers.py ``synthetic``: each document
names one person by full and short name and a town; the groups merge each
short name into its full name and every fifth town into the next) is built
with the shipped fake models, copied, and merged both ways. Prints the
seconds of each and whether the two exports are byte-identical.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kgrag.api.facade import KGRag
from kgrag.maintenance.export import dumps

ROOT = Path(__file__).resolve().parent.parent


def _helpers() -> Any:
    """tests/curation/helpers.py (the synthetic index and the test settings)."""
    sys.path.insert(0, str(ROOT))
    return importlib.import_module("tests.curation.helpers")


async def _merge(
    workdir: Path, groups: list[tuple[str, list[str]]], batch: bool
) -> tuple[float, str]:
    async with KGRag(_helpers().settings(workdir)) as rag:
        start = time.perf_counter()
        if batch:
            await rag.merge_groups(groups)
        else:
            for target, sources in groups:
                await rag.merge_entities(target, sources, origin="dedupe")
        seconds = time.perf_counter() - start
        assert (await rag.check()).ok
        return seconds, dumps(await rag.export(timestamps=False))


async def bench(n: int, root: Path) -> dict[str, object]:
    helpers = _helpers()
    docs, groups = helpers.synthetic(n)
    async with KGRag(helpers.settings(root / "base")) as rag:
        await helpers.insert(rag, **docs)
        entities = len((await rag.export(timestamps=False))["entities"])
    shutil.copytree(root / "base", root / "one")
    one, one_text = await _merge(root / "one", groups, batch=False)
    batch, batch_text = await _merge(root / "base", groups, batch=True)
    return {
        "documents": n,
        "entities": entities,
        "merges": len(groups),
        "one_by_one_s": round(one, 2),
        "batch_s": round(batch, 2),
        "same_export": one_text == batch_text,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(asyncio.run(bench(args.docs, Path(tmp)))))


if __name__ == "__main__":
    main()
