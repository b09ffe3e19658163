"""The golden sections: a name each, and the function that writes its files into a folder.

``scripts/golden.py --write DIR`` writes every section into ``DIR/<section>``;
``tests/golden/test_golden.py`` writes them into a temporary folder and
compares the two byte for byte.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from pathlib import Path

from .cli_help import write_help
from .cli_runs import write_cli_runs
from .corpora import corpora
from .http_examples import write_http
from .indexes import EXTRACTORS, write_index
from .saved_index import write_saved_index

Writer = Callable[[Path], None]


def _index_writer(corpus_name: str, extractor: str) -> Writer:
    def write(out: Path) -> None:
        corpus = next(c for c in corpora() if c.name == corpus_name)
        with tempfile.TemporaryDirectory(prefix="kgrag-golden-") as tmp:
            (Path(tmp) / "exports").mkdir()
            out.mkdir(parents=True, exist_ok=True)
            roots = [tmp, str(Path(tmp).resolve())]
            asyncio.run(write_index(corpus, extractor, roots, out))

    return write


def sections() -> dict[str, Writer]:
    """Every section, by name, in the order they are written."""
    found: dict[str, Writer] = {}
    for corpus in corpora():
        for extractor in EXTRACTORS:
            found[f"index-{corpus.name}-{extractor}"] = _index_writer(corpus.name, extractor)
    found["cli-help"] = write_help
    found["cli-runs"] = write_cli_runs
    found["http"] = write_http
    found["saved-index"] = write_saved_index
    return found
